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
  readonly epoch = randomUUID();
  private readonly emitter = mitt<{ frame: EventFrame }>();
  private readonly buffer: EventFrame[] = [];
  private latestCursor = 0;
  private readonly seqByAgent = new Map<string | null, number>();

  constructor(
    private readonly logger: Logger,
    private readonly capacity = EVENT_BUFFER_FRAMES,
    private readonly now: () => number = Date.now,
  ) {}

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
    this.buffer.push(frame);
    if (this.buffer.length > this.capacity) this.buffer.shift();
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

  /** Buffered frames with a cursor strictly greater than `cursor`. */
  framesAfter(cursor: number): EventFrame[] {
    const first = this.buffer.findIndex((frame) => frame.cursor > cursor);
    return first < 0 ? [] : this.buffer.slice(first);
  }

  get oldestCursor(): number | null {
    return this.buffer[0]?.cursor ?? null;
  }

  get latest(): number {
    return this.latestCursor;
  }
}
