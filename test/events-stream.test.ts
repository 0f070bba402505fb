/** GET /events: framing, live order, resume (since, Last-Event-ID), filters, gaps and 400s (spec 6). */
import t from 'tap';
import { bootDaemon, type TestDaemon } from './helpers/daemon.js';
import { openSse } from './helpers/sse-client.js';

const open = (d: TestDaemon, query = '', headers: Record<string, string> = {}) =>
  openSse(`${d.url}/events${query}`, { authorization: `Bearer ${d.token}`, ...headers });

/** Emits `count` state changes for `agentId`; returns their cursors. */
function emit(d: TestDaemon, count: number, agentId: string | null = 'agent-a'): number[] {
  const bus = d.daemon.kernel.bus;
  const cursors: number[] = [];
  for (let i = 0; i < count; i++) {
    bus.emit('agent.state.changed', { agentId, payload: { state: `s${i}` } });
    cursors.push(bus.latest);
  }
  return cursors;
}

/** Reads `count` event frames and returns their cursors; throws when an `id:` line disagrees with the data. */
async function cursorsOf(stream: Awaited<ReturnType<typeof openSse>>, count: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const frame = await stream.nextEvent();
    if (frame.id !== String(frame.data.cursor)) throw new Error(`id ${frame.id} but cursor ${frame.data.cursor}`);
    out.push(frame.data.cursor);
  }
  return out;
}

t.test('connect: comment, hello, then live frames in order', async (t) => {
  const d = await bootDaemon(t);
  const stream = await open(d);
  t.teardown(() => stream.close());
  t.equal(stream.status, 200);
  t.equal(stream.headers['content-type'], 'text/event-stream');
  t.equal(stream.headers['cache-control'], 'no-cache');
  t.notOk(Object.keys(stream.headers).some((name) => name.startsWith('access-control-')), 'no CORS headers');

  t.same(await stream.next(), { comment: 'connected' });
  const hello = await stream.next();
  t.equal(hello.event, 'stream.hello');
  t.equal(hello.id, undefined, 'control frames carry no id');
  const bus = d.daemon.kernel.bus;
  // daemon.started was emitted at boot: one frame buffered.
  t.same(JSON.parse(hello.data!), { epoch: bus.epoch, oldestCursor: 1, latestCursor: 1 });

  bus.emit('agent.state.changed', { agentId: 'agent-a', payload: { state: 'thinking' }, loop: 'side', turnId: 't-1' });
  emit(d, 2);
  const first = await stream.next();
  t.equal(first.id, '2');
  t.equal(first.event, 'agent.state.changed');
  const data = JSON.parse(first.data!);
  t.equal(data.cursor, 2);
  t.match(data.event, {
    seq: 1,
    event_type: 'agent.state.changed',
    source: 'kernel',
    agent_id: 'agent-a',
    loop: 'side',
    turn_id: 't-1',
    payload: { state: 'thinking' },
  });
  t.type(data.event.timestamp, 'number');
  t.same(await cursorsOf(stream, 2), [3, 4], 'nothing replayed without a cursor; live frames in order');
});

t.test('resume planning on an empty buffer (pure)', async (t) => {
  const { planResume } = await import('../kernel/events/resume.js');
  const bus = { epoch: 'e1', latest: 0, oldestCursor: null };
  t.same(planResume(bus, { cursor: null, epoch: null, agentId: null }), { gap: null, startAfter: 0 });
  t.same(planResume(bus, { cursor: 0, epoch: null, agentId: null }), { gap: null, startAfter: 0 });
  t.same(planResume(bus, { cursor: 5, epoch: null, agentId: null }), { gap: 'epoch_changed', startAfter: 0 });
  t.throws(() => planResume(bus, { cursor: 5, epoch: 'e1', agentId: null }), { code: 'bad_request' });
});

t.test('resume with since, with Last-Event-ID, and since wins over the header', async (t) => {
  const d = await bootDaemon(t);
  emit(d, 5); // cursors 2..6

  const bySince = await open(d, '?since=3');
  t.teardown(() => bySince.close());
  const hello = await bySince.nextEvent();
  t.same(hello.data, { epoch: d.daemon.kernel.bus.epoch, oldestCursor: 1, latestCursor: 6 });
  t.same(await cursorsOf(bySince, 3), [4, 5, 6], 'replay after the cursor');
  emit(d, 1);
  t.same(await cursorsOf(bySince, 1), [7], 'then live');

  const byHeader = await open(d, '', { 'last-event-id': '5' });
  t.teardown(() => byHeader.close());
  await byHeader.nextEvent();
  t.same(await cursorsOf(byHeader, 2), [6, 7]);

  const both = await open(d, '?since=6', { 'last-event-id': '2' });
  t.teardown(() => both.close());
  await both.nextEvent();
  t.same(await cursorsOf(both, 1), [7], 'since wins');

  const fromZero = await open(d, `?since=0&epoch=${d.daemon.kernel.bus.epoch}`);
  t.teardown(() => fromZero.close());
  t.equal((await fromZero.nextEvent()).event, 'stream.hello');
  const firstFrame = await fromZero.nextEvent();
  t.equal(firstFrame.event, 'daemon.started', 'since=0 replays everything, no gap when nothing was evicted');
  t.equal(firstFrame.data.cursor, 1);
});

t.test('bad cursors answer 400 bad_request; no token answers 401', async (t) => {
  const d = await bootDaemon(t);
  const cases: Array<[string, Record<string, string>]> = [
    ['', { 'last-event-id': 'abc' }],
    ['', { 'last-event-id': '-3' }],
    ['', { 'last-event-id': '1.5' }],
    ['?since=-1', {}],
    ['?since=1.5', {}],
    ['?since=abc', {}],
    [`?since=99&epoch=${d.daemon.kernel.bus.epoch}`, {}],
  ];
  for (const [query, headers] of cases) {
    const res = await open(d, query, headers);
    t.equal(res.status, 400, `${query} ${JSON.stringify(headers)}`);
    t.equal(res.body.code, 'bad_request');
    t.type(res.body.error, 'string');
  }
  const anonymous = await openSse(`${d.url}/events`);
  t.equal(anonymous.status, 401);
  t.equal(anonymous.body.code, 'unauthorized');
  t.equal(d.daemon.kernel.eventStream!.stats().clients, 0, 'refused requests open no stream');
});

t.test('agentId filters replay and live frames; control frames still come', async (t) => {
  const d = await bootDaemon(t);
  const a1 = emit(d, 1, 'a');
  emit(d, 1, 'b');
  const a2 = emit(d, 1, 'a');
  emit(d, 1, null);
  const stream = await open(d, '?agentId=a&since=0');
  t.teardown(() => stream.close());
  t.equal((await stream.nextEvent()).event, 'stream.hello');
  emit(d, 1, 'b');
  const a3 = emit(d, 1, 'a');
  const seen = [];
  for (let i = 0; i < 3; i++) {
    const frame = await stream.nextEvent();
    t.equal(frame.data.event.agent_id, 'a');
    seen.push(frame.data.cursor);
  }
  t.same(seen, [...a1, ...a2, ...a3]);
});

t.test('epoch mismatch and cursors of an earlier run: gap epoch_changed and full replay', async (t) => {
  const d = await bootDaemon(t);
  emit(d, 3); // cursors 2..4
  const epoch = d.daemon.kernel.bus.epoch;

  const stale = await open(d, '?epoch=an-earlier-run&since=3');
  t.teardown(() => stale.close());
  t.equal((await stale.nextEvent()).event, 'stream.hello');
  const gap = await stale.nextEvent();
  t.equal(gap.event, 'stream.gap');
  t.equal(gap.id, undefined);
  t.same(gap.data, { reason: 'epoch_changed', epoch, requestedCursor: 3, oldestCursor: 1, latestCursor: 4 });
  t.same(await cursorsOf(stale, 4), [1, 2, 3, 4], 'the whole buffer is replayed');

  const future = await open(d, '', { 'last-event-id': '500' });
  t.teardown(() => future.close());
  await future.nextEvent();
  const futureGap = await future.nextEvent();
  t.same(futureGap.data, { reason: 'epoch_changed', epoch, requestedCursor: 500, oldestCursor: 1, latestCursor: 4 });
  t.same(await cursorsOf(future, 4), [1, 2, 3, 4]);

  const sameEpoch = await open(d, `?epoch=${epoch}&since=2`);
  t.teardown(() => sameEpoch.close());
  await sameEpoch.nextEvent();
  const next = await sameEpoch.nextEvent();
  t.equal(next.event, 'agent.state.changed', 'a matching epoch resumes exactly, no gap');
  t.equal(next.data.cursor, 3);
});

t.test('a cursor whose successors were evicted gets gap evicted, then the buffer', async (t) => {
  const d = await bootDaemon(t);
  emit(d, 1100); // cursors 2..1101; the buffer keeps 102..1101
  const bus = d.daemon.kernel.bus;
  t.equal(bus.oldestCursor, 102);

  const evicted = await open(d, `?since=100&epoch=${bus.epoch}`);
  t.teardown(() => evicted.close());
  const hello = await evicted.nextEvent();
  t.same(hello.data, { epoch: bus.epoch, oldestCursor: 102, latestCursor: 1101 });
  const gap = await evicted.nextEvent();
  t.same(gap.data, { reason: 'evicted', epoch: bus.epoch, requestedCursor: 100, oldestCursor: 102, latestCursor: 1101 });
  const replay = await cursorsOf(evicted, 1000);
  t.equal(replay[0], 102);
  t.equal(replay[999], 1101);
  t.ok(replay.every((cursor, i) => i === 0 || cursor === replay[i - 1]! + 1), 'consecutive, in order');

  const exact = await open(d, '?since=101');
  t.teardown(() => exact.close());
  await exact.nextEvent();
  const first = await exact.nextEvent();
  t.equal(first.event, 'agent.state.changed', 'oldest = cursor + 1 is exact: no gap');
  t.equal(first.data.cursor, 102);
});

t.test('the OpenAPI document describes the stream and stays valid', async (t) => {
  const d = await bootDaemon(t);
  const res = await d.request('GET', '/openapi.json');
  t.equal(res.status, 200);
  const op = res.body.paths['/events'].get;
  t.same(op.tags, ['Events']);
  t.ok(op.responses['200'].content['text/event-stream'], '200 is text/event-stream');
  t.ok(op.responses['400'] && op.responses['503'], '400 and 503 documented');
  const names = op.parameters.map((p: { in: string; name: string }) => `${p.in}:${p.name}`).sort();
  t.same(names, ['header:last-event-id', 'query:agentId', 'query:epoch', 'query:since']);
  const { Validator } = await import('@seriousme/openapi-schema-validator');
  const result = await new Validator().validate(res.body);
  t.ok(result.valid, JSON.stringify(result.errors ?? null));
});
