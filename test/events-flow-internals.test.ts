/**
 * GET /events under pressure, from inside: a blocked client on the hub, a stalled client cut at a lag
 * set on the hub, a synchronous burst longer than the ring, heartbeats at an interval set on the hub.
 * In process: these emit on the kernel's bus and configure its hub. Shutdown, restarts and a real
 * EventSource client against the built daemon: events-flow.test.ts.
 */
import { get, type IncomingMessage } from 'node:http';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { KernelBus } from '../kernel/events/bus.js';
import { SseHub } from '../kernel/events/sse.js';
import { bootDaemon, type TestDaemon } from './helpers/daemon.js';
import { openSse, parseSse, type SseMessage } from './helpers/sse-client.js';

const auth = (d: { token: string }) => ({ authorization: `Bearer ${d.token}` });
const open = (d: TestDaemon, query = '') => openSse(`${d.url}/events${query}`, auth(d));

async function waitFor(what: string, condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (condition()) return;
    await sleep(10);
  }
  throw new Error(`timed out waiting for ${what}`);
}

const silentLogger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silentLogger };

/** A ServerResponse stand-in whose socket is always full until `drain()`. */
class FullResponse extends EventEmitter {
  written: string[] = [];
  destroyed = false;
  ended = false;
  socket = null;
  writeHead() {
    return this;
  }
  write(text: string) {
    this.written.push(text);
    return false;
  }
  end() {
    this.ended = true;
  }
  destroy() {
    this.destroyed = true;
  }
}

t.test('a blocked client catches up from the ring on drain, and is cut once its next frame is evicted', async (t) => {
  const bus = new KernelBus(silentLogger, 10);
  const hub = new SseHub(bus, silentLogger);
  t.teardown(() => hub.close());
  const res = new FullResponse();
  hub.open(
    res as unknown as ServerResponse,
    { cursor: null, epoch: null, agentId: null },
    { gap: null, startAfter: 0 },
  );
  const before = res.written.length;
  const emit = async (count: number) => {
    for (let i = 0; i < count; i++) bus.emit('agent.state.changed', { agentId: 'a', payload: { state: `s${i}` } });
    await new Promise(setImmediate); // the hub flushes in the check phase of the emitting tick
  };
  await emit(5);
  t.equal(res.written.length, before, 'nothing is written while the socket is full');
  res.emit('drain'); // one batched write, and the socket is full again
  const ids = (texts: string[]) => texts.join('').match(/^id: \d+$/gm);
  t.same(ids(res.written.slice(before)), ['id: 1', 'id: 2', 'id: 3', 'id: 4', 'id: 5'], 'catch-up in order');
  await emit(10);
  t.notOk(res.destroyed, 'still inside the ring (cursor 6 is buffered)');
  await emit(1);
  t.ok(res.destroyed, 'cursor 6 evicted: disconnected');
  t.same(hub.stats(), { clients: 0, dropped: 1 });
});

t.test('a stalled client neither delays others nor grows memory: it is cut and resumes with its cursor', async (t) => {
  const d = await bootDaemon(t);
  const hub = d.daemon.kernel.eventStream!;
  const bus = d.daemon.kernel.bus;
  hub.configure({ maxLagFrames: 20 });

  // The stalled client: an HTTP response nobody reads (the socket stops reading once Node's buffer is full).
  const stalled = await new Promise<IncomingMessage>((resolve, reject) => {
    const request = get(`${d.url}/events?since=${bus.latest}`, { headers: auth(d) }, (res) => {
      res.pause();
      resolve(res);
    });
    request.on('error', reject);
    t.teardown(() => request.destroy());
  });
  await waitFor('the stalled stream', () => hub.stats().clients === 1);
  const good = await open(d);
  t.teardown(() => good.close());
  t.equal((await good.nextEvent()).event, 'stream.hello');

  const message = 'x'.repeat(64 * 1024);
  const received: number[] = [];
  for (let i = 0; i < 1000 && hub.stats().dropped === 0; i++) {
    bus.emit('log.written', { agentId: 'a', payload: { level: 'info', origin: null, event: null, message } });
    // The good client gets each frame before the next is emitted, however far behind the stalled one is.
    const frame = await good.nextEvent();
    received.push(frame.data.cursor);
  }
  t.same(hub.stats(), { clients: 1, dropped: 1 }, 'the stalled client was cut, the good one stays');
  t.ok(
    received.every((cursor, i) => i === 0 || cursor === received[i - 1]! + 1),
    'the good client got every frame in order',
  );
  t.equal(received.at(-1), bus.latest);

  // What the stalled client did receive is an in-order prefix; it resumes from its last cursor exactly.
  const messages: SseMessage[] = [];
  stalled.setEncoding('utf8');
  stalled.on('error', () => {});
  stalled.on(
    'data',
    parseSse((m) => messages.push(m)),
  );
  stalled.resume();
  await new Promise((resolve) => stalled.once('close', resolve));
  t.notOk(stalled.complete, 'the stream was cut, not ended');
  const cursors = messages.filter((m) => m.id !== undefined).map((m) => Number(m.id));
  t.ok(cursors.length > 0 && cursors.at(-1)! < bus.latest, 'it got some frames, not all');
  t.ok(
    cursors.every((cursor, i) => cursor === received[i]),
    'a prefix of the same frames',
  );
  const resumed = await open(d, `?since=${cursors.at(-1)}&epoch=${bus.epoch}`);
  t.teardown(() => resumed.close());
  t.equal((await resumed.nextEvent()).event, 'stream.hello');
  const next = await resumed.nextEvent();
  t.equal(next.event, 'log.written', 'no gap: the frames it missed are still buffered');
  t.equal(next.data.cursor, cursors.at(-1)! + 1);
});

t.test(
  'a synchronous burst longer than the ring reaches a client whose socket takes it: nothing dropped, in order',
  async (t) => {
    const d = await bootDaemon(t);
    const hub = d.daemon.kernel.eventStream!;
    const bus = d.daemon.kernel.bus;
    const stream = await open(d);
    t.teardown(() => stream.close());
    t.equal((await stream.nextEvent()).event, 'stream.hello');
    // 1.5 rings of ~300-byte frames in one tick: the hub flushes every half ring, in batches over 16 KB
    // (Node's high-water mark); none may count as a full socket while the kernel takes every byte.
    const first = bus.latest + 1;
    const count = bus.capacity * 1.5;
    for (let i = 0; i < count; i++)
      bus.emit('log.written', {
        agentId: 'a',
        payload: { level: 'info', origin: null, event: null, message: 'x'.repeat(200) },
      });
    for (let i = 0; i < count; i++) {
      const frame = await stream.nextEvent();
      if (frame.data.cursor !== first + i) t.fail(`cursor ${frame.data.cursor} where ${first + i} was due`);
    }
    t.same(hub.stats(), { clients: 1, dropped: 0 }, 'the client kept up and stays');
  },
);

t.test('heartbeat comments arrive at the configured interval', async (t) => {
  const d = await bootDaemon(t);
  d.daemon.kernel.eventStream!.configure({ heartbeatMs: 40 });
  const stream = await open(d);
  t.teardown(() => stream.close());
  t.same(await stream.next(), { comment: 'connected' });
  t.equal((await stream.next()).event, 'stream.hello');
  t.same(await stream.next(), { comment: 'heartbeat' });
  t.same(await stream.next(), { comment: 'heartbeat' });
});
