/**
 * GET /events of the built daemon over its lifetime: a real EventSource client, a restart (a new epoch),
 * and a shutdown that ends every stream cleanly and in time. One daemon, restarted once, then stopped.
 * Stalled clients, bursts and heartbeats (the hub from inside): events-flow-internals.test.ts.
 */
import t from 'tap';
import { EventSource } from 'eventsource';
import { createAgentFile } from './helpers/agent-file.js';
import { runDaemon, tempDir, type DaemonClient } from './helpers/daemon.js';
import { openSse } from './helpers/sse-client.js';

const auth = (d: { token: string }) => ({ authorization: `Bearer ${d.token}` });
const open = (d: DaemonClient, query = '') => openSse(`${d.url}/events${query}`, auth(d));

// Warnings on: a close that overran its deadline is logged at warn.
let d = await runDaemon(t, { extensions: { extensions: [] }, env: { AGT_LOG_LEVEL: 'warn' } });
const dir = tempDir(t, 'agt-flow-agents-');
let agentId = '';
let agentFile = '';

t.test('a real EventSource client receives hello and typed events with their cursor as lastEventId', async (t) => {
  const source = new EventSource(`${d.url}/events`, {
    fetch: (url, init) => fetch(url, { ...init, headers: { ...init.headers, ...auth(d) } }),
  });
  t.teardown(() => source.close());
  const hello = await new Promise<MessageEvent>((resolve) =>
    source.addEventListener('stream.hello', resolve, { once: true }),
  );
  const { epoch, latestCursor } = JSON.parse(hello.data);
  t.type(epoch, 'string');
  const got = new Promise<MessageEvent>((resolve) => source.addEventListener('agent.loaded', resolve, { once: true }));
  agentFile = await createAgentFile(dir, { name: 'listener' });
  const loaded = await d.request('POST', '/agents/load', { filePath: agentFile });
  t.equal(loaded.status, 200);
  agentId = loaded.body.id;
  const event = await got;
  const data = JSON.parse(event.data);
  t.equal(event.lastEventId, String(data.cursor));
  t.ok(data.cursor > latestCursor, 'after the cursors the hello named');
  t.match(data, { event: { event_type: 'agent.loaded', agent_id: agentId } });
});

t.test('a restart brings a new epoch; an old cursor with its epoch gets epoch_changed', async (t) => {
  const before = await open(d);
  const first = (await before.nextEvent()).data as { epoch: string; latestCursor: number };
  before.close();
  t.ok(first.latestCursor > 1, 'events of the first run');
  d = await d.restart();
  const stream = await open(d, `?since=${first.latestCursor}&epoch=${first.epoch}`);
  t.teardown(() => stream.close());
  const hello = await stream.nextEvent();
  t.not(hello.data.epoch, first.epoch, 'a new epoch');
  const gap = await stream.nextEvent();
  t.equal(gap.event, 'stream.gap');
  t.match(gap.data, { reason: 'epoch_changed', epoch: hello.data.epoch, requestedCursor: first.latestCursor });
  const replay = await stream.nextEvent();
  t.equal(replay.data.cursor, 1, 'cursors restarted at 1 and the buffer is replayed');
});

t.test('shutdown ends every stream cleanly, within the HTTP close deadline', async (t) => {
  // A filter names a loaded agent: the one of the first test, loaded again after the restart.
  t.equal((await d.request('POST', '/agents/load', { filePath: agentFile })).status, 200);
  const all = await open(d);
  const filtered = await open(d, `?agentId=${agentId}`);
  t.equal((await all.nextEvent()).event, 'stream.hello');
  t.equal((await filtered.nextEvent()).event, 'stream.hello');
  const res = await d.request('POST', '/daemon/shutdown');
  t.equal(res.status, 202);
  t.equal((await all.nextEvent()).event, 'daemon.stopping', 'the stopping event is still delivered');
  t.same(await all.ended, { complete: true });
  t.same(await filtered.ended, { complete: true });
  t.equal(await d.exited, 0);
  t.notMatch(d.stderr(), /HTTP close exceeded/, 'the open streams did not hold up the close');
});
