/**
 * The executor of one cognition loop: its state, its queue and the one turn it runs at a time.
 *
 * Queueing (docs/runtime.md#chat-and-queueing):
 * - work runs one turn at a time: queued chats first (oldest first), then trigger turns in arrival order;
 * - a chat that arrives while a turn runs interrupts that turn (only the first such chat does: the
 *   turn is already stopping for the others);
 * - a chat's turn absorbs every chat queued by the time of its first model call (consecutive user
 *   rows before that call; `chat.delivered` lists them); chats arriving in that window do not
 *   interrupt it; trigger turns keep their place in the queue;
 * - every turn id ends exactly once: `turn.completed` (as `turn_id`, or in `absorbed_turn_ids`), or
 *   `agent.error`, or — only for abort, unload and `off` — `chat.discarded` while still queued;
 * - restart recovery puts `resume` items (turns that waited for the owner) and the recovered queue back
 *   without interrupting anything; a `resume` item runs before everything else;
 * - at shutdown ({@link LoopExecutor.stop} with `keep`) queued work stays in the agent file instead of
 *   being discarded, and a turn waiting for the owner is parked (no end event) to resume after restart.
 */
import type { AgtError, EventPayloads, EventType } from '@agt/contracts';
import { systemClock } from '../clock.js';
import { loopAborted, loopBusy, loopInError, loopMidTurn, loopStopped, turnQueueFull, turnStopped } from '../errors.js';
import { waitAtMost } from '../../deadline.js';
import { MAX_QUEUED_TURNS, type ExecutorState, type QueueItem, type StopCause, type TurnOutcome } from '../types.js';

export type TurnResult = TurnOutcome | { kind: 'stopped'; llmCalls: number; toolCalls: number };

/** True when a turn's signal fired because the daemon shuts down while the turn waits for the owner. */
export function isParked(signal: AbortSignal): boolean {
  return signal.aborted && (signal.reason as AgtError | undefined)?.details?.cause === 'park';
}

/** What the runner may ask of its executor while it runs. */
export interface TurnControl {
  signal: AbortSignal;
  setState: (state: ExecutorState) => void;
  /** Chat turns only, once, right before the first model call: takes every queued chat. */
  absorb(): QueueItem[];
  /** Chats accepted for this loop so far (a counter: a change means more arrived). */
  arrivals(): number;
}

export interface LoopHost {
  emit<T extends EventType>(type: T, payload: EventPayloads[T], options: { loop: string; turnId?: string }): void;
  log(level: 'info' | 'warn' | 'error', message: string, data?: unknown): void;
  runTurn(input: { loop: string; head: QueueItem; control: TurnControl }): Promise<TurnResult>;
  /** `limits.turn_timeout_ms` of the current config, if any. */
  turnTimeoutMs(): number | undefined;
}

interface Running {
  turnId: string;
  controller: AbortController;
  cause: StopCause | undefined;
  done: Promise<void>;
  /** A chat turn before its first model call: new chats join it instead of interrupting it. */
  absorbing: boolean;
  absorbed: QueueItem[];
}

export class LoopExecutor {
  private stateValue: ExecutorState = 'idle';
  private readonly queue: QueueItem[] = [];
  private current: Running | undefined;
  private pumping = false;
  /** Set while {@link hold} runs work (compaction): queued work waits for it. */
  private holding: Promise<void> | undefined;
  private stopped = false;
  /** Set while a transition is pending (for `targetState` in the agent status). */
  target: string | null = null;
  /** Chats accepted so far, counted when accepted (before their shared commit) and when queued. */
  private chatArrivals = 0;

  constructor(
    readonly loop: string,
    private readonly host: LoopHost,
  ) {}

  get state(): ExecutorState {
    return this.stateValue;
  }

  get running(): boolean {
    return this.current !== undefined;
  }

  get currentTurnId(): string | undefined {
    return this.current?.turnId;
  }

  get queuedTurnIds(): string[] {
    return this.queue.map((item) => item.turnId);
  }

  /**
   * Throws what {@link enqueue} would throw now: `conflict` when the loop was aborted (stopped until the
   * agent reloads) or already holds {@link MAX_QUEUED_TURNS} queued turns. Lets a caller refuse before it
   * commits anything.
   */
  assertAccepts(): void {
    if (this.stopped) throw loopAborted(this.loop);
    if (this.queue.length >= MAX_QUEUED_TURNS) {
      throw turnQueueFull(this.loop, MAX_QUEUED_TURNS, this.queue.length);
    }
  }

  /**
   * Queues work (see {@link assertAccepts} for the refusals: the caller refuses or logs them, nothing is
   * dropped silently). `restored`: recovered after a restart, so it interrupts nothing.
   */
  enqueue(item: QueueItem, options: { restored?: boolean } = {}): void {
    this.assertAccepts();
    this.queue.push(item);
    if (item.kind === 'chat') this.chatArrivals++;
    if (
      item.kind === 'chat' &&
      !options.restored &&
      this.current &&
      !this.current.absorbing &&
      this.current.cause === undefined
    )
      this.stopCurrent('interrupt');
    this.kick();
  }

  /**
   * A chat was accepted and waits for its commit before it is queued ({@link enqueue} follows): a chat
   * turn still absorbing waits for it (turn.ts).
   */
  noteArrival(): void {
    this.chatArrivals++;
  }

  /** Interrupts the running turn; queued work is kept. False when nothing ran. */
  interrupt(): boolean {
    if (this.stopped || this.stateValue === 'stopped') throw loopStopped(this.loop);
    if (!this.current && this.stateValue === 'error') throw loopInError(this.loop);
    if (!this.current) return false;
    if (this.current.cause === undefined) this.stopCurrent('interrupt');
    return true;
  }

  /** Stops the loop for good (until reload): queued work discarded, the running turn aborted. */
  abort(): string[] {
    const discarded = this.discardQueued('abort');
    this.stopped = true;
    if (this.current) {
      this.target = 'stopped';
      this.stopCurrent('abort');
    } else {
      this.setState('stopped');
    }
    return discarded;
  }

  /** The agent went `off`: queued work is discarded and the running turn interrupted. */
  off(): string[] {
    const discarded = this.discardQueued('off');
    if (this.current && this.current.cause === undefined) this.stopCurrent('off');
    return discarded;
  }

  /**
   * Unload (or the loop was disabled or removed): discard the queue, give the running turn `graceMs`,
   * then abort it; resolves when nothing runs.
   *
   * `keep` (daemon shutdown): the queue is dropped from memory without `chat.discarded` (its rows stay in
   * the agent file and run when the agent loads again), and a turn waiting for the owner (approval, ask,
   * suspend prompt) is parked: it stops without an end event and resumes after the restart.
   */
  async stop(
    graceMs: number,
    reason: 'unload' | 'disabled' = 'unload',
    options: { keep?: boolean } = {},
  ): Promise<void> {
    if (options.keep) this.queue.splice(0);
    else this.discardQueued(reason);
    this.stopped = true;
    const running = this.current;
    if (running) {
      this.target = 'stopped';
      if (!(options.keep && this.waitingForOwner)) {
        // Grace and turn timeouts are wall-clock limits (the injected clock drives triggers and timers).
        await waitAtMost(running.done, graceMs, () => undefined, systemClock);
      }
      if (this.current === running) {
        this.stopCurrent(options.keep && this.waitingForOwner ? 'park' : reason);
        await running.done;
      }
    }
    this.setState('stopped');
  }

  /** The running turn waits for the owner (an approval, an ask, a suspend prompt). */
  private get waitingForOwner(): boolean {
    return (
      this.current !== undefined &&
      (this.stateValue === 'awaiting_approval' || this.stateValue === 'awaiting_ask' || this.stateValue === 'suspended')
    );
  }

  /** True while {@link hold} runs work (compaction). */
  get held(): boolean {
    return this.holding !== undefined;
  }

  /**
   * Runs `work` with the loop held busy (compaction): `conflict` while a turn runs or another hold is
   * on. Work queued meanwhile waits (chats do not interrupt it) and runs after it, in order.
   */
  async hold<T>(what: string, work: () => Promise<T>): Promise<T> {
    if (this.current) throw loopMidTurn(this.loop, what);
    if (this.holding) throw loopBusy(this.loop, what);
    let release!: () => void;
    this.holding = new Promise<void>((resolve) => (release = resolve));
    try {
      return await work();
    } finally {
      this.holding = undefined;
      release();
      if (this.queue.length > 0 && !this.stopped) this.kick();
    }
  }

  /** The loop's stream was cleared: an errored loop starts afresh. */
  resetSession(): void {
    if (!this.current && this.stateValue === 'error') this.setState('idle');
  }

  private discardQueued(reason: 'abort' | 'unload' | 'disabled' | 'off'): string[] {
    // A discarded resume item ends its turn and the chats that turn had absorbed.
    const ids = this.queue
      .splice(0)
      .flatMap((item) => (item.kind === 'resume' ? [item.turnId, ...item.absorbed] : [item.turnId]));
    if (ids.length > 0) this.host.emit('chat.discarded', { turn_ids: ids, reason }, { loop: this.loop });
    return ids;
  }

  private stopCurrent(cause: StopCause): void {
    const running = this.current!;
    running.cause = cause;
    running.controller.abort(turnStopped(cause));
  }

  /** State changes are announced; after an abort only `stopped` is accepted. */
  setState = (next: ExecutorState): void => this.changeState(next, this.current?.turnId);

  /** `turnId`: the turn the change belongs to (the end of a turn names the turn that just ended). */
  private changeState(next: ExecutorState, turnId: string | undefined): void {
    if (this.stopped && next !== 'stopped' && !this.current) return;
    if (next === this.stateValue) return;
    const previous = this.stateValue;
    this.stateValue = next;
    if (next === 'stopped' || next === 'idle') this.target = null;
    this.host.emit('agent.state.changed', { state: next, previous, loop: this.loop }, { loop: this.loop, turnId });
  }

  private kick(): void {
    if (this.pumping) return;
    this.pumping = true;
    void this.pump().finally(() => {
      this.pumping = false;
      // Work queued between the last check and now must not wait for the next enqueue.
      if (this.queue.length > 0 && !this.stopped) this.kick();
    });
  }

  /**
   * A resumed turn goes first (restart recovery); then the oldest queued chat (a chat interrupted the
   * turn to be answered next); then triggers in order.
   */
  private async pump(): Promise<void> {
    while (this.queue.length > 0 && !this.stopped) {
      if (this.holding) {
        await this.holding;
        continue;
      }
      const resume = this.queue.findIndex((item) => item.kind === 'resume');
      const chat = resume >= 0 ? resume : this.queue.findIndex((item) => item.kind === 'chat');
      await this.run(this.queue.splice(Math.max(chat, 0), 1)[0]!);
    }
  }

  private takeQueuedChats(): QueueItem[] {
    const taken: QueueItem[] = [];
    for (let i = 0; i < this.queue.length; ) {
      if (this.queue[i]!.kind === 'chat') taken.push(...this.queue.splice(i, 1));
      else i++;
    }
    return taken;
  }

  private async run(head: QueueItem): Promise<void> {
    const controller = new AbortController();
    let finish!: () => void;
    const running: Running = {
      turnId: head.turnId,
      controller,
      cause: undefined,
      done: new Promise<void>((r) => (finish = r)),
      absorbing: head.kind === 'chat',
      absorbed: [],
    };
    this.current = running;
    const turnId = head.turnId;
    const trigger = head.kind === 'chat' ? 'chat' : head.kind === 'resume' ? 'resume' : head.trigger;
    this.host.emit('turn.started', { turn_id: turnId, trigger }, { loop: this.loop, turnId });
    const timeoutMs = this.host.turnTimeoutMs();
    const timer = timeoutMs
      ? systemClock.setTimeout(() => running.cause === undefined && this.stopCurrent('timeout'), timeoutMs)
      : undefined;
    const control: TurnControl = {
      signal: controller.signal,
      setState: this.setState,
      absorb: () => {
        if (!running.absorbing) return [];
        running.absorbing = false;
        running.absorbed = this.takeQueuedChats();
        return running.absorbed;
      },
      arrivals: () => this.chatArrivals,
    };
    let result: TurnResult;
    try {
      result = await this.host.runTurn({ loop: this.loop, head, control });
    } catch (error) {
      // The runner catches its own failures; this is the last line so a bug cannot wedge the loop.
      result = { kind: 'error', code: 'internal_error', message: (error as Error).message, llmCalls: 0, toolCalls: 0 };
    } finally {
      systemClock.clearTimeout(timer);
    }
    // A turn that ended before its first model call leaves queued chats queued: they run next.
    running.absorbing = false;
    const absorbedIds = [
      ...(head.kind === 'resume' ? head.absorbed : []),
      ...running.absorbed.map((item) => item.turnId),
    ];
    if (running.cause === 'park') {
      // Shutdown while the owner was asked: no end event; the agent file keeps the turn for the restart.
      this.current = undefined;
      this.changeState('stopped', turnId);
      finish();
      return;
    }
    const outcome = this.settle(result, running.cause);
    this.current = undefined;
    if (outcome.kind === 'completed') {
      this.host.emit(
        'turn.completed',
        {
          turn_id: turnId,
          absorbed_turn_ids: absorbedIds,
          text: outcome.text,
          llm_calls: outcome.llmCalls,
          tool_calls: outcome.toolCalls,
          stop_reason: outcome.stopReason,
        },
        { loop: this.loop, turnId },
      );
    } else {
      this.host.log(
        outcome.code === 'aborted' || outcome.code === 'unloaded' ? 'warn' : 'error',
        `turn ${turnId} failed: ${outcome.message}`,
        { code: outcome.code, loop: this.loop, turn_id: turnId },
      );
      this.host.emit(
        'agent.error',
        {
          code: outcome.code,
          message: outcome.message,
          ...(outcome.status !== undefined ? { status: outcome.status } : {}),
          turn_id: turnId,
          absorbed_turn_ids: absorbedIds,
        },
        { loop: this.loop, turnId },
      );
    }
    this.changeState(this.stopped ? 'stopped' : outcome.kind === 'error' ? 'error' : 'idle', turnId);
    finish();
  }

  /** What a stop cause turns a runner's result into. */
  private settle(result: TurnResult, cause: StopCause | undefined): TurnOutcome {
    if (result.kind === 'completed') return result;
    const counts = { llmCalls: result.llmCalls, toolCalls: result.toolCalls };
    if (result.kind === 'error' && cause === undefined) return result;
    switch (cause) {
      case 'abort':
        return { kind: 'error', code: 'aborted', message: 'the turn was aborted by the owner', ...counts };
      case 'unload':
        return { kind: 'error', code: 'unloaded', message: 'the agent was unloaded while the turn ran', ...counts };
      case 'disabled':
        return {
          kind: 'error',
          code: 'loop_disabled',
          message: 'the loop was disabled or removed while the turn ran',
          ...counts,
        };
      case 'timeout':
        return { kind: 'error', code: 'timeout', message: 'the turn exceeded limits.turn_timeout_ms', ...counts };
      case 'off':
      case 'interrupt':
      case 'cleared':
        return { kind: 'completed', text: null, stopReason: cause === 'interrupt' ? 'interrupted' : cause, ...counts };
      default:
        return { kind: 'error', code: 'internal_error', message: 'the turn stopped without a cause', ...counts };
    }
  }
}
