/** GET /events: framing, live order, resume (since, Last-Event-ID), filters, gaps and 400s (docs/events.md). */
import { connect } from 'node:net';
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
  t.notOk(
    Object.keys(stream.headers).some((name) => name.startsWith('access-control-')),
    'no CORS headers',
  );

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
  t.same(gap.data, {
    reason: 'evicted',
    epoch: bus.epoch,
    requestedCursor: 100,
    oldestCursor: 102,
    latestCursor: 1101,
  });
  const replay = await cursorsOf(evicted, 1000);
  t.equal(replay[0], 102);
  t.equal(replay[999], 1101);
  t.ok(
    replay.every((cursor, i) => i === 0 || cursor === replay[i - 1]! + 1),
    'consecutive, in order',
  );

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
  t.same(names, ['header:last-event-id', 'query:agentId', 'query:epoch', 'query:scope', 'query:since']);
  const { Validator } = await import('@seriousme/openapi-schema-validator');
  const result = await new Validator().validate(res.body);
  t.ok(result.valid, JSON.stringify(result.errors ?? null));
});

/** A raw HTTP exchange on `GET /events`: `more()` waits for more bytes; `all()` is everything so far. */
function rawStream(d: TestDaemon, version: '1.0' | '1.1') {
  const { hostname, port } = new URL(d.url);
  const socket = connect(Number(port), hostname);
  socket.write(`GET /events HTTP/${version}\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${d.token}\r\n\r\n`);
  let bytes = Buffer.alloc(0);
  let wake: (() => void) | undefined;
  let ended = false;
  socket.on('data', (chunk) => ((bytes = Buffer.concat([bytes, chunk])), wake?.()));
  socket.on('end', () => ((ended = true), wake?.()));
  const until = async (done: () => boolean) => {
    while (!done()) {
      if (ended) throw new Error(`stream ended early: ${bytes.toString('latin1')}`);
      await new Promise<void>((resolve) => (wake = resolve));
    }
  };
  return { socket, until, all: () => bytes, ended: () => ended };
}

/** Decodes a chunked body strictly: each chunk is `<hex size>\r\n`, exactly that many bytes, `\r\n`. */
function dechunk(body: Buffer): { text: string; last: boolean } {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = body.indexOf('\r\n', at);
    if (eol < 0) return { text: Buffer.concat(parts).toString('utf8'), last: false };
    const size = parseInt(body.toString('latin1', at, eol), 16);
    if (!(size >= 0)) throw new Error(`bad chunk size line at ${at}`);
    if (body.length < eol + 2 + size + 2) return { text: Buffer.concat(parts).toString('utf8'), last: false };
    if (body.toString('latin1', eol + 2 + size, eol + 4 + size) !== '\r\n')
      throw new Error(`chunk of ${size} bytes not followed by CRLF`);
    if (size === 0) return { text: Buffer.concat(parts).toString('utf8'), last: true };
    parts.push(body.subarray(eol + 2, eol + 2 + size));
    at = eol + 4 + size;
  }
}

t.test(
  'on the wire: HTTP/1.1 gets well-formed chunks sized in bytes (non-ASCII data), HTTP/1.0 the bare frames',
  async (t) => {
    const d = await bootDaemon(t);
    const bus = d.daemon.kernel.bus;
    const v11 = rawStream(d, '1.1');
    const v10 = rawStream(d, '1.0');
    t.teardown(() => (v11.socket.destroy(), v10.socket.destroy()));
    const headEnd = (bytes: Buffer) => bytes.indexOf('\r\n\r\n');
    const body = (bytes: Buffer) => bytes.subarray(headEnd(bytes) + 4);
    for (const s of [v11, v10]) await s.until(() => headEnd(s.all()) >= 0 && body(s.all()).includes('stream.hello'));
    t.match(v11.all().toString('latin1'), /^HTTP\/1\.1 200 OK\r\n[\s\S]*transfer-encoding: chunked\r\n/i);
    t.notMatch(
      v10.all().toString('latin1').slice(0, headEnd(v10.all())),
      /transfer-encoding/i,
      'no chunks for HTTP/1.0',
    );

    const said = 'héllo wörld € 😀 '.repeat(20);
    for (let i = 0; i < 3; i++)
      bus.emit('agent.state.changed', { agentId: 'agent-a', payload: { state: `${said}${i}` } });
    const latest = bus.latest;
    const frames = (text: string) => text.split('\n\n').filter((frame) => frame.startsWith('id: '));
    await v11.until(() => frames(dechunk(body(v11.all())).text).length === 3);
    await v10.until(() => frames(body(v10.all()).toString('utf8')).length === 3);
    const expected = [latest - 2, latest - 1, latest].map(
      (cursor) => `id: ${cursor}\nevent: agent.state.changed\ndata: ${bus.dataAt(cursor)}`,
    );
    t.same(frames(dechunk(body(v11.all())).text), expected, 'the same frames, byte for byte, inside the chunks');
    t.same(frames(body(v10.all()).toString('utf8')), expected, 'and bare over HTTP/1.0');
    t.ok(
      dechunk(body(v11.all())).text.startsWith(': connected\n\nevent: stream.hello\n'),
      'the control frames first, in the same chunked body',
    );

    // The stream's end follows the frames written straight to the socket: the last chunk, in order.
    await d.daemon.kernel.eventStream.close();
    await v11.until(() => dechunk(body(v11.all())).last);
    t.equal(frames(dechunk(body(v11.all())).text).length, 3, 'a clean end of the chunked body after the frames');
  },
);
