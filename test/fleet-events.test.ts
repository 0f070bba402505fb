/**
 * One event stream for the fleet: `GET /events?scope=fleet` on any daemon carries every daemon's events with
 * the fleet stream's sequence as cursor; a client whose daemon is killed resumes on another daemon from its
 * last cursor and misses nothing, and nothing comes twice.
 */
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { runDaemon, type SpawnedDaemon, tempDir } from './helpers/daemon.js';
import { fleetJoined, fleetManifest, startNats } from './helpers/nats.js';
import { openSse, type SseStream } from './helpers/sse-client.js';

interface Frame {
  cursor: number;
  daemon: string;
  event: { event_type: string; agent_id: string | null; payload: Record<string, unknown> };
}

const nats = await startNats(t);
if (typeof nats === 'string') {
  t.comment(`skipped: ${nats}`);
  t.plan(0, nats);
} else {
  const manifest = fleetManifest({ ttlSeconds: 10 });
  const daemon = (daemonName: string) =>
    runDaemon(t, { settings: { fleet: { servers: [nats.url], name: 'stream', daemonName } }, extensions: manifest });
  const [alpha, beta] = await Promise.all([daemon('alpha'), daemon('beta')]);
  await Promise.all([fleetJoined(alpha), fleetJoined(beta)]);
  const dir = tempDir(t);

  const fleetStream = async (d: SpawnedDaemon, headers: Record<string, string> = {}, query = '') => {
    const stream = await openSse(`${d.url}/events?scope=fleet${query}`, {
      authorization: `Bearer ${d.token}`,
      ...headers,
    });
    t.teardown(() => stream.close());
    return stream;
  };
  /** Frames of the stream until `until` matches one (which is included). */
  const framesUntil = async (stream: SseStream, until: (frame: Frame) => boolean) => {
    const frames: Frame[] = [];
    for (;;) {
      const message = await stream.nextEvent();
      if (message.event === 'stream.hello') continue;
      const frame = message.data as Frame;
      t.equal(String(frame.cursor), message.id, 'the frame id is its cursor');
      frames.push(frame);
      if (until(frame)) return frames;
    }
  };
  const loadedEvent = (name: string) => (frame: Frame) =>
    frame.event.event_type === 'agent.loaded' && frame.event.payload.name === name;

  t.test('every daemon streams every daemon’s events, resumable on another daemon', async (t) => {
    const first = await fleetStream(alpha, {}, '&since=0');
    t.equal(first.status, 200);
    const onBeta = await createAgentFile(dir, { name: 'on-beta' });
    t.equal((await beta.request('POST', '/agents/load', { filePath: onBeta })).status, 200);
    const seenBeta = await framesUntil(first, loadedEvent('on-beta'));
    t.equal(seenBeta.at(-1)!.daemon, 'beta', "alpha's stream carries beta's event, naming beta");
    const onAlpha = await createAgentFile(dir, { name: 'on-alpha' });
    t.equal((await alpha.request('POST', '/agents/load', { filePath: onAlpha })).status, 200);
    const seenAlpha = await framesUntil(first, loadedEvent('on-alpha'));
    const seen = [...seenBeta, ...seenAlpha];
    const cursors = seen.map((frame) => frame.cursor);
    t.same(
      cursors,
      cursors.map((_, index) => cursors[0]! + index),
      'cursors are the stream sequence: increasing, no gaps',
    );
    const last = cursors.at(-1)!;

    await alpha.stop('SIGKILL');
    const later = await createAgentFile(dir, { name: 'after-the-kill' });
    t.equal((await beta.request('POST', '/agents/load', { filePath: later })).status, 200);
    const resumed = await fleetStream(beta, { 'last-event-id': String(last) });
    t.equal(resumed.status, 200);
    const rest = await framesUntil(resumed, loadedEvent('after-the-kill'));
    t.equal(rest[0]!.cursor, last + 1, 'resumes right after the last cursor the client saw');
    t.notOk(
      rest.some((frame) => cursors.includes(frame.cursor)),
      'nothing seen on the dead daemon comes twice',
    );
    t.same(
      rest.map((frame) => frame.cursor),
      rest.map((_, index) => last + 1 + index),
      'and nothing is missed',
    );
  });

  t.test('a scope no running extension offers is 503', async (t) => {
    const res = await beta.request('GET', '/events?scope=elsewhere');
    t.same([res.status, res.body.code], [503, 'unavailable']);
  });
}
