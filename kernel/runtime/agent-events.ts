/**
 * One agent's events, and the durable close of the turns an event ends. An end is committed to the
 * turns' `agt_queue` rows before it is emitted, and the rows go once its frame was written to every
 * open event stream: a kill before the commit ends the turns after the restart with `daemon_restart`, a
 * kill after it re-emits this very end (recovery.ts). An unload waits for the ends still on their way.
 */
import { type EmitInput, type EventPayloads, type EventType, turnIdsEndedBy } from '@agt/contracts';
import type { TurnEnd } from '../agents/stores/queue-store.js';
import type { FrameOrigin } from '../events/bus.js';
import type { RuntimeDeps } from './runtime-deps.js';
import type { RuntimeAgent } from './types.js';

/**
 * How long an unload waits for the ends of its turns to reach the streams before it closes the file. An
 * end that reached them after this would be announced again by the next start, so the wait is long
 * enough for a loaded machine's clients (it costs nothing when they read at once); within shutdown's
 * 10 s per agent.
 */
export const END_SENT_WAIT_MS = 5_000;

export interface EmitOptions {
  loop?: string;
  turnId?: string;
  /** Where the event went out in earlier runs (a repeated end; see FrameOrigin in events/bus.ts). */
  sentAt?: readonly FrameOrigin[];
}

export class AgentEvents {
  /** False once another daemon took the file over: nothing of the durable queue or HIL rows is written any more. */
  private ownsFile = true;
  /** Ends emitted and not yet confirmed written to the streams (an unload waits for them). */
  private unsent = 0;
  private unsentDrained: (() => void) | undefined;

  /** `closeTurns`: cancels what ended turns left open for the owner (announced). */
  constructor(
    private readonly agent: RuntimeAgent,
    private readonly deps: Pick<RuntimeDeps, 'bus' | 'logger' | 'frames' | 'whenSent'>,
    private readonly closeTurns: (turnIds: string[], reason: string) => void,
  ) {}

  /**
   * Emits one event of this agent. An event that ends turn ids also closes their durable state: what
   * the turns left open for the owner is cancelled first (announced); the event itself is committed to
   * their `agt_queue` rows before it is emitted; the rows go once its frame was written to every open
   * event stream. A kill before that commit ends them after the restart with `daemon_restart`, a kill
   * after it re-emits this very event (same turn ids): the end is never lost. A kill between the socket
   * write and the delete repeats it, except to the streams that had it: the end is recorded with where
   * it goes out (FrameOrigin), and a stream resuming from that run past it is not given the repeat.
   */
  emit<T extends EventType>(type: T, payload: EventPayloads[T], options: EmitOptions = {}): void {
    const ended = turnIdsEndedBy({ event_type: type, payload });
    let recorded = false;
    const input: EmitInput<T> = {
      agentId: this.agent.id,
      payload,
      source: 'runtime',
      loop: options.loop,
      turnId: options.turnId,
    };
    if (ended.length > 0) {
      this.durably('close the owner requests of ended turns', () =>
        this.closeTurns(ended, 'the turn ended before the owner decided'),
      );
      // Recorded with where it goes out (nothing is emitted between this line and the emit below), so
      // that a repeat after a restart can be left out for the streams that had it (FrameOrigin).
      const next = this.deps.frames?.nextOrigin();
      const sentAt = [...(options.sentAt ?? []), ...(next ? [next] : [])];
      const end = {
        type,
        payload,
        ...(options.loop ? { loop: options.loop } : {}),
        ...(options.turnId ? { turnId: options.turnId } : {}),
        ...(sentAt.length > 0 ? { sentAt } : {}),
      } as TurnEnd;
      this.durably(
        'record the end of turns in agt_queue',
        () => (recorded = this.agent.file.queue.markEnded(ended, end) > 0),
      );
    }
    if (options.sentAt?.length && this.deps.frames) this.deps.frames.emitRepeat(type, input, options.sentAt);
    else this.deps.bus.emit(type, input);
    if (recorded) this.removeOnceSent(ended);
  }

  /**
   * Deletes the rows of ended turns once their end is on the streams (kept for the restart otherwise).
   * The delete runs in the tick of the socket write, before anything else: the instant in which a kill
   * could make the restart repeat this end is as short as it can be.
   */
  private removeOnceSent(turnIds: string[]): void {
    const remove = () => this.durably('remove ended turns from agt_queue', () => this.agent.file.queue.remove(turnIds));
    if (!this.deps.whenSent) return remove();
    this.unsent += 1;
    this.deps.whenSent((sent) => {
      if (sent) remove();
      if (--this.unsent === 0) this.unsentDrained?.();
    });
  }

  /**
   * Runs a write of the durable runtime state; skipped once the file is closed or owned by another daemon. Never
   * throws.
   */
  durably(what: string, write: () => void): void {
    if (!this.ownsFile || !this.agent.file.isOpen) return;
    try {
      write();
    } catch (error) {
      this.deps.logger.warn({ err: error, agentId: this.agent.id }, `could not ${what}`);
    }
  }

  /** Another daemon took the file over: from now on nothing durable is written. */
  fileLost(): void {
    this.ownsFile = false;
  }

  /** Resolves once every end emitted so far reached the streams (or they closed); undefined when none is on its way. */
  allSent(): Promise<void> | undefined {
    if (this.unsent === 0) return undefined;
    return new Promise<void>((done) => (this.unsentDrained = done));
  }
}
