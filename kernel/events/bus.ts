/**
 * The event bus: typed emit, per-agent sequence numbers, and the process-local replay buffer that
 * `GET /events` resumes from. mitt does the fan-out; a throwing listener is logged and never reaches
 * the emitter.
 *
 * The buffer is bounded twice: at most {@link EVENT_BUFFER_FRAMES} frames and at most
 * {@link EVENT_BUFFER_BYTES} of serialized frames (the oldest leave first; the newest frame always
 * stays). Each frame is serialized once, at emit. A frame whose serialized form exceeds
 * {@link EVENT_FRAME_MAX_BYTES} is kept and streamed as a truncation preview instead: the event's
 * `payload` becomes `{_truncated: true, preview, bytes}` (the first {@link EVENT_PREVIEW_CHARS}
 * characters of the payload's JSON and the full frame's size) and the event gets `truncated: true`.
 * In-process listeners (`subscribe`) still receive the original event.
 *
 * Whoever writes frames out (the SSE hub, {@link FrameDelivery}) tells through {@link KernelBus.whenSent}
 * when a frame has reached every open stream: the runtime deletes the durable record of a turn's end
 * only then, so a kill between the emit and the write re-announces the end after the restart.
 */
import { randomUUID } from 'node:crypto';
import mittModule from 'mitt';
import type { EmitInput, EventBus, EventFrame, EventType, UmbilicalEvent, Logger } from '@agt/contracts';

// mitt's CJS-style default export is not callable under NodeNext typing.
const mitt = mittModule as unknown as typeof mittModule.default;

export const EVENT_BUFFER_FRAMES = 1000;
/** Total serialized size the buffer may hold. */
export const EVENT_BUFFER_BYTES = 32 * 1024 * 1024;
/** A frame larger than this (serialized) is replaced by a truncation preview in the buffer and on the stream. */
export const EVENT_FRAME_MAX_BYTES = 256 * 1024;
/** Characters of the payload's JSON a truncation preview keeps. */
export const EVENT_PREVIEW_CHARS = 4 * 1024;

export interface BusLimits {
  /** Frame count bound (the ring's size). */
  capacity?: number;
  /** Serialized-bytes bound of the whole buffer. */
  maxBytes?: number;
  /** Largest serialized frame kept whole. */
  maxFrameBytes?: number;
}

/** The writer of frames to clients (the SSE hub): when a frame left for every open stream. */
export interface FrameDelivery {
  /**
   * Calls `done(true)` once the frame with this cursor (and every earlier one) was handed to the
   * operating system on every open stream, or there is none; `done(false)` when it never will be (the
   * streams closed first). `done` is called in the very tick of the write (no promise hop), so the
   * caller can record the delivery before anything else runs.
   */
  whenSent(cursor: number, done: (sent: boolean) => void): void;
}

export interface Slot {
  /** What the buffer and the stream carry (a truncation preview for an oversized frame). */
  frame: EventFrame;
  /** `JSON.stringify(frame)`, the SSE `data:` line. */
  data: string;
  bytes: number;
  /** For an event emitted again after a restart: where it went out before (see {@link FrameOrigin}). */
  repeats?: readonly FrameOrigin[];
}

/**
 * Where a frame went out: its run's epoch and its cursor. A turn's end is recorded with it; when a
 * restart emits that end again, a stream resuming from that run at or past the cursor had the end
 * already and is not given the repeat (sse-batches.ts): the end reaches each client exactly once.
 */
export interface FrameOrigin {
  epoch: string;
  cursor: number;
}

export class KernelBus implements EventBus {
  /** Changes at every daemon start: cursors are comparable only within one epoch. */
  readonly epoch: string = randomUUID();
  readonly capacity: number;
  readonly maxBytes: number;
  readonly maxFrameBytes: number;
  private readonly emitter = mitt<{ frame: EventFrame }>();
  /** Ring of the buffered frames; cursors are consecutive, so a cursor maps to a slot in O(1). */
  private readonly ring: Array<Slot | undefined>;
  private latestCursor = 0;
  /** Cursor of the oldest buffered frame (latestCursor + 1 while the buffer is empty). */
  private oldest = 1;
  private bufferedBytes = 0;
  private truncatedCount = 0;
  private readonly seqByAgent = new Map<string | null, number>();
  private delivery: FrameDelivery | undefined;

  constructor(
    private readonly logger: Logger,
    limits: number | BusLimits = {},
    private readonly now: () => number = Date.now,
  ) {
    const options = typeof limits === 'number' ? { capacity: limits } : limits;
    this.capacity = options.capacity ?? EVENT_BUFFER_FRAMES;
    this.maxBytes = options.maxBytes ?? EVENT_BUFFER_BYTES;
    this.maxFrameBytes = options.maxFrameBytes ?? EVENT_FRAME_MAX_BYTES;
    if (!Number.isInteger(this.capacity) || this.capacity < 1)
      throw new RangeError('bus capacity must be a positive integer');
    this.ring = new Array<Slot | undefined>(this.capacity);
  }

  /** Where the next emitted frame will go (the runtime records it with a turn's end before emitting). */
  nextOrigin(): FrameOrigin {
    return { epoch: this.epoch, cursor: this.latestCursor + 1 };
  }

  /** `repeats`: the event was emitted before, by an earlier run, at these places (see {@link FrameOrigin}). */
  emit<T extends EventType>(type: T, input: EmitInput<T>, repeats?: readonly FrameOrigin[]): UmbilicalEvent<T> {
    const seq = (this.seqByAgent.get(input.agentId) ?? 0) + 1;
    this.seqByAgent.set(input.agentId, seq);
    const event: UmbilicalEvent<T> = {
      seq,
      event_type: type,
      timestamp: this.now(),
      source: input.source ?? 'kernel',
      agent_id: input.agentId,
      payload: input.payload,
      ...(input.loop && input.loop !== 'main' ? { loop: input.loop } : {}),
      ...(input.turnId ? { turn_id: input.turnId } : {}),
    };
    const frame: EventFrame = { cursor: ++this.latestCursor, event };
    const slot = this.slotFor(frame);
    if (repeats && repeats.length > 0) slot.repeats = repeats;
    this.store(slot);
    this.emitter.emit('frame', frame);
    return event;
  }

  /** Serializes the frame once; an oversized or unserializable one becomes a preview. */
  private slotFor(frame: EventFrame): Slot {
    let data: string | undefined;
    let problem: string | undefined;
    try {
      data = JSON.stringify(frame);
    } catch (error) {
      // A payload that cannot be serialized must not break the stream for everyone.
      this.logger.error({ err: error, event: frame.event.event_type }, 'event payload is not serializable');
      problem = 'unserializable';
    }
    if (data !== undefined) {
      const bytes = Buffer.byteLength(data, 'utf8');
      if (bytes <= this.maxFrameBytes) return { frame, data, bytes };
      this.truncatedCount += 1;
      this.logger.warn(
        { event: frame.event.event_type, bytes, cap: this.maxFrameBytes },
        'event frame over the size cap; buffered and streamed as a preview',
      );
      let payloadJson = '';
      try {
        payloadJson = JSON.stringify(frame.event.payload) ?? '';
      } catch {
        // Already serialized once above; cannot fail here.
      }
      return this.preview(frame, { _truncated: true, preview: payloadJson.slice(0, EVENT_PREVIEW_CHARS), bytes });
    }
    return this.preview(frame, { _truncated: true, preview: '', bytes: null, reason: problem });
  }

  private preview(frame: EventFrame, payload: Record<string, unknown>): Slot {
    const stored: EventFrame = {
      cursor: frame.cursor,
      event: { ...frame.event, payload: payload as never, truncated: true },
    };
    const data = JSON.stringify(stored);
    return { frame: stored, data, bytes: Buffer.byteLength(data, 'utf8') };
  }

  /** Puts a slot at its cursor, then evicts from the oldest end until both bounds hold. */
  private store(slot: Slot): void {
    const cursor = slot.frame.cursor;
    if (cursor - this.oldest >= this.capacity) this.evictOldest();
    this.ring[cursor % this.capacity] = slot;
    this.bufferedBytes += slot.bytes;
    while (this.bufferedBytes > this.maxBytes && this.oldest < cursor) this.evictOldest();
  }

  private evictOldest(): void {
    const index = this.oldest % this.capacity;
    const slot = this.ring[index];
    if (slot && slot.frame.cursor === this.oldest) {
      this.bufferedBytes -= slot.bytes;
      this.ring[index] = undefined;
    }
    this.oldest += 1;
  }

  /** Sets the writer that {@link whenSent} asks (the SSE hub registers itself). */
  setDelivery(delivery: FrameDelivery | undefined): void {
    this.delivery = delivery;
  }

  /**
   * Calls `done(true)` once the frame with this cursor (default: the newest) was written to every open
   * stream, `done(false)` when the streams closed before (see {@link FrameDelivery}). Without a writer
   * a frame is sent once buffered: `done(true)` at once.
   */
  whenSent(done: (sent: boolean) => void, cursor: number = this.latestCursor): void {
    if (this.delivery) this.delivery.whenSent(cursor, done);
    else done(true);
  }

  subscribe(listener: (event: UmbilicalEvent) => void): () => void {
    return this.subscribeFrames((frame) => listener(frame.event));
  }

  /** Frame-level subscription (the original frame, never the preview). */
  subscribeFrames(listener: (frame: EventFrame) => void): () => void {
    const safe = (frame: EventFrame) => {
      try {
        listener(frame);
      } catch (error) {
        this.logger.error({ err: error, event: frame.event.event_type }, 'event listener threw');
      }
    };
    this.emitter.on('frame', safe);
    return () => this.emitter.off('frame', safe);
  }

  /** Buffered frames with a cursor strictly greater than `cursor`, oldest first. */
  framesAfter(cursor: number): EventFrame[] {
    const out: EventFrame[] = [];
    for (let c = Math.max(cursor + 1, this.oldest); c <= this.latestCursor; c++)
      out.push(this.ring[c % this.capacity]!.frame);
    return out;
  }

  /**
   * The buffered frame with this cursor and its serialized form (what the SSE hub writes); undefined when not buffered.
   */
  slotAt(cursor: number): Readonly<Slot> | undefined {
    if (!Number.isInteger(cursor) || cursor < this.oldest || cursor > this.latestCursor) return undefined;
    return this.ring[cursor % this.capacity];
  }

  /** The buffered frame with exactly this cursor (as streamed); undefined when evicted or not emitted yet. */
  frameAt(cursor: number): EventFrame | undefined {
    return this.slotAt(cursor)?.frame;
  }

  /** The serialized frame (SSE `data:`) with exactly this cursor; undefined when evicted or not emitted yet. */
  dataAt(cursor: number): string | undefined {
    return this.slotAt(cursor)?.data;
  }

  /** Serialized size of the buffered frame with this cursor (0 when not buffered). */
  bytesAt(cursor: number): number {
    return this.slotAt(cursor)?.bytes ?? 0;
  }

  /** Cursor of the oldest buffered frame; null while nothing was emitted. */
  get oldestCursor(): number | null {
    return this.latestCursor === 0 ? null : this.oldest;
  }

  /** Cursor of the newest frame; 0 while nothing was emitted. */
  get latest(): number {
    return this.latestCursor;
  }

  /** Whether any event was emitted for this agent id in this process. */
  hasEmittedFor(agentId: string): boolean {
    return this.seqByAgent.has(agentId);
  }

  /** Buffer occupancy, for tests and diagnostics. */
  stats(): { frames: number; bytes: number; truncated: number } {
    return { frames: this.latestCursor - this.oldest + 1, bytes: this.bufferedBytes, truncated: this.truncatedCount };
  }
}
