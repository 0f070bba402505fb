/**
 * The event buffer is bounded by bytes as well as frames, and a frame over the size
 * cap is replaced by a truncation preview in the buffer and on the stream, never dropped silently;
 * in-process listeners still get the whole event.
 */
import t from 'tap';
import { EVENT_BUFFER_BYTES, EVENT_FRAME_MAX_BYTES, EVENT_PREVIEW_CHARS, KernelBus } from '../kernel/events/bus.js';
import type { UmbilicalEvent } from '../contracts/events.js';
import { FrameBatches, WRITE_BATCH_CHARS } from '../kernel/events/sse-batches.js';
import { bootDaemon } from './helpers/daemon.js';
import { openSse } from './helpers/sse-client.js';

const silentLogger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silentLogger } as never;
const say = (bus: KernelBus, text: string, agentId: string | null = 'a') =>
  bus.emit('agent.said', { agentId, payload: { text } });

t.test('the shipped bounds', async (t) => {
  t.equal(EVENT_BUFFER_BYTES, 32 * 1024 * 1024);
  t.equal(EVENT_FRAME_MAX_BYTES, 256 * 1024);
  t.equal(EVENT_PREVIEW_CHARS, 4 * 1024);
});

t.test('the buffer evicts the oldest frames once its serialized size passes the byte bound', async (t) => {
  const bus = new KernelBus(silentLogger, { capacity: 1000, maxBytes: 10_000, maxFrameBytes: 5_000 });
  for (let i = 0; i < 20; i++) say(bus, 'x'.repeat(900));
  const { frames, bytes } = bus.stats();
  t.ok(bytes <= 10_000, `${bytes} bytes held`);
  t.ok(frames < 20 && frames >= 9, `${frames} frames held`);
  t.equal(bus.latest, 20);
  t.equal(bus.oldestCursor, 20 - frames + 1, 'the oldest left first');
  t.equal(bus.frameAt(bus.oldestCursor! - 1), undefined, 'evicted frames are gone');
  t.same(
    bus.framesAfter(0).map((frame) => frame.cursor),
    Array.from({ length: frames }, (_, i) => 20 - frames + 1 + i),
  );
  // The frame bound still holds too.
  const small = new KernelBus(silentLogger, { capacity: 5 });
  for (let i = 0; i < 12; i++) say(small, 'x');
  t.same(
    small.framesAfter(0).map((frame) => frame.cursor),
    [8, 9, 10, 11, 12],
  );
});

t.test('a frame over the cap is buffered as a truncation preview; listeners get the original', async (t) => {
  const bus = new KernelBus(silentLogger, { capacity: 100, maxBytes: 1_000_000, maxFrameBytes: 10_000 });
  const heard: UmbilicalEvent[] = [];
  bus.subscribe((event) => heard.push(event));
  const text = 'y'.repeat(50_000);
  say(bus, text);
  say(bus, 'small');
  t.equal(
    heard[0]!.payload && (heard[0]!.payload as { text: string }).text,
    text,
    'in-process listeners get the whole event',
  );
  const stored = bus.frameAt(1)!;
  t.equal(stored.event.truncated, true);
  const payload = stored.event.payload as unknown as { _truncated: boolean; preview: string; bytes: number };
  t.equal(payload._truncated, true);
  t.equal(payload.preview, JSON.stringify({ text }).slice(0, EVENT_PREVIEW_CHARS));
  t.ok(payload.bytes > 50_000, `original size ${payload.bytes}`);
  t.ok(bus.bytesAt(1) < 10_000, 'the preview fits the cap');
  t.equal(bus.frameAt(2)!.event.truncated, undefined, 'small frames are untouched');
  t.equal(bus.stats().truncated, 1);
  t.same(JSON.parse(bus.dataAt(1)!), stored, 'the serialized frame is the preview');
});

t.test('an oversized frame bigger than the whole byte bound still stays as the newest frame', async (t) => {
  const bus = new KernelBus(silentLogger, { capacity: 10, maxBytes: 500, maxFrameBytes: 100_000 });
  say(bus, 'a');
  say(bus, 'z'.repeat(2_000));
  t.equal(bus.oldestCursor, 2);
  t.equal((bus.frameAt(2)!.event.payload as { text: string }).text.length, 2_000);
});

t.test(
  'GET /events streams the preview for a frame over 256 KB, in order, and the buffer stays under 32 MB',
  async (t) => {
    const d = await bootDaemon(t);
    const stream = await openSse(`${d.url}/events`, { authorization: `Bearer ${d.token}` });
    t.teardown(() => stream.close());
    t.equal((await stream.nextEvent()).event, 'stream.hello');
    const bus = d.daemon.kernel.bus;
    say(bus, 'before');
    say(bus, 'h'.repeat(300 * 1024));
    say(bus, 'after');
    const before = await stream.nextEvent();
    const big = await stream.nextEvent();
    const after = await stream.nextEvent();
    t.equal(before.data.event.payload.text, 'before');
    t.equal(big.data.event.truncated, true);
    t.equal(big.data.event.payload._truncated, true);
    t.equal(big.data.event.payload.preview.length, EVENT_PREVIEW_CHARS);
    t.ok(big.data.event.payload.bytes > 300 * 1024);
    t.equal(Number(big.id), before.data.cursor + 1, 'the cursor is kept: nothing is silently skipped');
    t.equal(after.data.event.payload.text, 'after');

    // 1000 frames of ~250 KB (under the frame cap) would be 250 MB: the byte bound keeps 32 MB at most.
    for (let i = 0; i < 200; i++) say(bus, 'f'.repeat(250 * 1024));
    const stats = bus.stats();
    t.ok(stats.bytes <= EVENT_BUFFER_BYTES, `${stats.bytes} bytes in ${stats.frames} frames`);
    t.ok(stats.frames < 200);
  },
);

t.test(
  'stream batches: built once per cursor and filter, filtered by agent, cut at the batch size, gone with the ring',
  async (t) => {
    const bus = new KernelBus(silentLogger, 10);
    const batches = new FrameBatches(bus);
    for (let i = 0; i < 6; i++) say(bus, `m${i}`, i % 2 ? 'b' : 'a');
    const all = batches.after(2, null)!;
    t.equal(batches.after(2, null), all, 'clients at the same cursor share one Buffer');
    const ids = (bytes: Buffer | null) =>
      (bytes?.toString('utf8').match(/^id: \d+$/gm) ?? []).map((line) => Number(line.slice(4)));
    t.same(ids(all.bytes), [3, 4, 5, 6]);
    t.equal(all.through, 6);
    t.match(all.bytes!.toString('utf8'), /^id: 3\nevent: agent\.said\ndata: \{"cursor":3,/, 'SSE frame lines');
    t.same(
      all.chunk,
      Buffer.concat([Buffer.from(`${all.bytes!.length.toString(16)}\r\n`), all.bytes!, Buffer.from('\r\n')]),
      'framed once as an HTTP chunk around the same bytes',
    );
    const onlyB = batches.after(2, 'b')!;
    t.same(ids(onlyB.bytes), [4, 6], 'a filtered client gets its own batch with only its agent');
    t.same(ids(batches.after(5, 'a')!.bytes), [], 'nothing wanted: no bytes');
    t.equal(batches.after(5, 'a')!.through, 6, 'but the cursor moves past the skipped frames');
    for (let i = 0; i < 10; i++) say(bus, `n${i}`);
    t.equal(batches.after(2, null), undefined, 'frame 3 left the ring: the client is too far behind');

    const big = new KernelBus(silentLogger, 100);
    const bigBatches = new FrameBatches(big);
    for (let i = 0; i < 20; i++) say(big, 'x'.repeat(10_000));
    const first = bigBatches.after(0, null)!;
    t.ok(
      first.through < 20 && first.bytes!.length >= WRITE_BATCH_CHARS,
      `about ${WRITE_BATCH_CHARS} characters per write (${first.through} frames)`,
    );
    t.equal(
      bigBatches.after(first.through, null)!.through,
      Math.min(20, first.through * 2),
      'the next batch starts where it stopped',
    );
  },
);
