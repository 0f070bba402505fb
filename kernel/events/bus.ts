/**
 * The event bus: typed emit, per-agent sequence numbers, and the process-local replay buffer of the
 * last 1000 frames that `GET /events` resumes from. mitt does the fan-out; a throwing listener is
 * logged and never reaches the emitter.
 */
import { randomUUID } from 'node:crypto';
import mittModule from 'mitt';
import type { EmitInput, EventBus, EventFrame, EventType, UmbilicalEvent } from '../../contracts/events.js';
import type { Logger } from '../../contracts/logger.js';

// mitt's CJS-style default export is not callable under NodeNext typing.
const mitt = mittModule as unknown as typeof mittModule.default;

export const EVENT_BUFFER_FRAMES = 1000;

export class KernelBus implements EventBus {
  /** Changes at every daemon start: cursors are comparable only within one epoch. */
  readonly epoch: string = randomUUID();
  private readonly emitter = mitt<{ frame: EventFrame }>();
  /** Ring of the last `capacity` frames; cursors are consecutive, so a cursor maps to a slot in O(1). */
  private readonly ring: Array<EventFrame | undefined>;
  private latestCursor = 0;
  private readonly seqByAgent = new Map<string | null, number>();

  constructor(
    private readonly logger: Logger,
    readonly capacity = EVENT_BUFFER_FRAMES,
    private readonly now: () => number = Date.now,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('bus capacity must be a positive integer');
    this.ring = new Array<EventFrame | undefined>(capacity);
  }

  emit<T extends EventType>(type: T, input: EmitInput<T>): UmbilicalEvent<T> {
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
    // Overwriting the slot evicts the frame `capacity` cursors older.
    this.ring[frame.cursor % this.capacity] = frame;
    this.emitter.emit('frame', frame);
    return event;
  }

  subscribe(listener: (event: UmbilicalEvent) => void): () => void {
    return this.subscribeFrames((frame) => listener(frame.event));
  }

  /** Frame-level subscription for the SSE stream. */
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
    const oldest = this.oldestCursor;
    if (oldest === null) return out;
    for (let c = Math.max(cursor + 1, oldest); c <= this.latestCursor; c++) out.push(this.ring[c % this.capacity]!);
    return out;
  }

  /** The buffered frame with exactly this cursor; undefined when evicted or not emitted yet. */
  frameAt(cursor: number): EventFrame | undefined {
    const oldest = this.oldestCursor;
    if (oldest === null || !Number.isInteger(cursor) || cursor < oldest || cursor > this.latestCursor) return undefined;
    return this.ring[cursor % this.capacity];
  }

  /** Cursor of the oldest buffered frame; null while nothing was emitted. */
  get oldestCursor(): number | null {
    return this.latestCursor === 0 ? null : Math.max(1, this.latestCursor - this.capacity + 1);
  }

  /** Cursor of the newest frame; 0 while nothing was emitted. */
  get latest(): number {
    return this.latestCursor;
  }
}
