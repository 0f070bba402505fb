/**
 * The running side of one loaded agent: its loop executors, trigger evaluator, timers, human-in-the-
 * loop requests and sandboxed system targets. Everything it opens is closed by {@link detach}.
 * Failures stay inside: they are written to the agent's `agt_logs` and announced on the bus, never
 * thrown into the daemon.
 */
import { randomUUID } from 'node:crypto';
import {
  type AgentConfig,
  type TriggerTarget,
  type TriggerType,
  type EmitInput,
  type EventBus,
  type EventPayloads,
  type EventType,
  type Logger,
  outboundAddress,
  type CommandOutcome,
  type CommandRun,
  type OutboundEnvelope,
  type OutboundReport,
  type OutboundResult,
} from '@agt/contracts';
import type { FrameOrigin } from '../events/bus.js';
import type { OutboxMessage } from '../agents/stores/message-stores.js';
import type { QueuedInput, TurnEnd } from '../agents/stores/queue-store.js';
import { waitAtMost } from '../deadline.js';
import type { TimerRow } from '../agents/stores/timers-store.js';
import type { Clock } from './clock.js';
import { Consolidator } from './memory-consolidation.js';
import { idempotencyKeyReused, loopDisabled, noRunningExecutor, noSuchLoop, turnRunningInLoop } from './errors.js';
import { requestDigest, type Idempotency } from '../agents/stores/idempotency-store.js';
import { TRIGGER_OF, type NormalizedDispatch, type TriggerEvent } from './dispatch.js';
import { LoopExecutor } from './executor/loop-executor.js';
import { loopInstructions, loopModel, loopTools, type LoopSources } from './executor/loop-setup.js';
import { runTurn } from './executor/turn.js';
import { HilStore } from './hil.js';
import { quotaBytesFor, quotaPages } from '../storage/quota.js';
import { SqlSandbox } from './sql-sandbox/sql-runner.js';
import { TimerScheduler } from './timers/scheduler.js';
import { TriggerEvaluator, type FireOptions, type TriggerOrigin } from './triggers/evaluator.js';
import { SystemRunner } from './triggers/system-runner.js';
import type { HostCommandRunner } from './sandbox/command-runner.js';
import { hilListener } from './hil-events.js';
import { recoverAcceptedWork } from './recovery.js';
import type { MemoryService } from '../memory/service.js';
import { limitOf, type DisplayState, type LogFields, type QueueItem, type RuntimeAgent } from './types.js';

/** What the runtime needs from the kernel (a narrow view, so tests can fake it). */
export interface RuntimeDeps extends LoopSources {
  bus: EventBus;
  logger: Logger;
  clock: Clock;
  /** Validates, commits and applies a new config (the registry's update path). */
  updateConfig(agentId: string, next: AgentConfig): Promise<void>;
  /**
   * Calls `done(true)` once everything emitted so far was written to every open event stream, in the
   * tick of that write; `done(false)` when the streams closed first (the kernel bus's `whenSent`).
   * Absent: an event counts as sent once emitted.
   */
  whenSent?(done: (sent: boolean) => void): void;
  /**
   * The kernel bus's frame places: where the next frame goes, and an emit of an event that earlier runs
   * emitted at `repeats` (a turn's end re-emitted after a restart; see FrameOrigin in events/bus.ts).
   * Absent: ends are recorded and re-emitted without them.
   */
  frames?: {
    nextOrigin(): FrameOrigin;
    emitRepeat<T extends EventType>(type: T, input: EmitInput<T>, repeats: readonly FrameOrigin[]): void;
  };
  /** The delivery by the outbound transport that claims the envelope's address; undefined when none does. */
  sendOutbound?(
    envelope: OutboundEnvelope,
    report: OutboundReport,
  ): { owner: string; delivery: Promise<OutboundResult | void> } | undefined;
  /** System-scope commands through the command executor an extension offers (compute); undefined: the host runner. */
  executeCommand?(run: CommandRun): Promise<CommandOutcome | undefined>;
  /** The daemon's host command runner: system-scope commands no extension executes. */
  hostCommands: HostCommandRunner;
  /** Long-term memory (docs/memory.md): the memory tools, recall before a turn, capture at compaction. */
  memory?: MemoryService;
}

const isDisplayState = (value: unknown): value is DisplayState =>
  value === 'active' || value === 'idle' || value === 'hibernate' || value === 'suspended' || value === 'off';

/**
 * How long an unload waits for the ends of its turns to reach the streams before it closes the file. An
 * end that reached them after this would be announced again by the next start, so the wait is long
 * enough for a loaded machine's clients (it costs nothing when they read at once); within shutdown's
 * 10 s per agent.
 */
export const END_SENT_WAIT_MS = 5_000;

/** The turn ids an event ends (`turn.completed`, `agent.error` with a turn, `chat.discarded`). */
function endedTurnIds(type: EventType, payload: unknown): string[] {
  const p = payload as { turn_id?: unknown; absorbed_turn_ids?: unknown; turn_ids?: unknown };
  if (type === 'turn.completed' || type === 'agent.error') {
    if (typeof p.turn_id !== 'string') return [];
    return [p.turn_id, ...(Array.isArray(p.absorbed_turn_ids) ? (p.absorbed_turn_ids as string[]) : [])];
  }
  if (type === 'chat.discarded') return Array.isArray(p.turn_ids) ? (p.turn_ids as string[]) : [];
  return [];
}

export class AgentRuntime {
  readonly hil: HilStore;
  readonly timers: TimerScheduler;
  /** Memory consolidation: its schedule and the owner's run-now (memory-consolidation.ts). */
  readonly consolidation: Consolidator;
  readonly evaluator: TriggerEvaluator;
  private readonly system: SystemRunner;
  /** The child process that runs the agent's own SQL (`db_query`, `db_execute`). */
  readonly sql: SqlSandbox;
  private readonly executors = new Map<string, LoopExecutor>();
  private display: DisplayState;
  private detached = false;
  /** False once another daemon took the file over: nothing of the durable queue or HIL rows is written any more. */
  private ownsFile = true;
  /** Ends emitted and not yet confirmed written to the streams (an unload waits for them). */
  private unsent = 0;
  private unsentDrained: (() => void) | undefined;

  constructor(
    readonly agent: RuntimeAgent,
    private readonly deps: RuntimeDeps,
  ) {
    const initial = agent.displayState ?? agent.config.state;
    this.display = isDisplayState(initial) ? initial : 'idle';
    this.hil = new HilStore(hilListener(this), agent.file, () => deps.clock.now());
    // The owner's storage quota binds the agent's SQL connection (kernel/storage/quota.ts), read at each call.
    this.sql = new SqlSandbox(agent.file.path, {
      maxPageCount: () => quotaPages(agent.file, quotaBytesFor(agent.ownerSettings?.(), agent.id)),
    });
    this.system = new SystemRunner({
      agent,
      emit: (type, payload, options) => this.emit(type, payload, options),
      executeCommand: deps.executeCommand,
      hostCommands: deps.hostCommands,
      log: (level, message, fields) => this.log(level, message, { ...fields, origin: 'trigger', system: true }),
    });
    this.evaluator = new TriggerEvaluator({
      clock: deps.clock,
      triggers: () => this.agent.config.triggers ?? {},
      displayState: () => this.display,
      sink: {
        wake: (loop, type, delivery) => this.wake(loop, type, delivery.events, delivery.count),
        runSystem: (target, type, delivery) => this.system.start(target, type, delivery.events, delivery.count),
      },
      // Logs of the trigger machinery itself are system logs: they never feed `on_logs` (no loops).
      onDropped: (count, reason) =>
        this.log('warn', `${count} trigger event(s) dropped: ${reason}`, { origin: 'trigger', system: true }),
    });
    this.timers = new TimerScheduler(
      agent.file,
      deps.clock,
      (timer) => this.timerFired(timer),
      (error) => this.log('error', `timer failed: ${(error as Error).message}`, { origin: 'timer', system: true }),
    );
    this.consolidation = new Consolidator(this);
    this.executor('main');
  }

  get id(): string {
    return this.agent.id;
  }

  /** The daemon's memory service (undefined only in runtimes built without one). */
  get memory(): MemoryService | undefined {
    return this.deps.memory;
  }

  get clock(): Clock {
    return this.deps.clock;
  }

  get displayState(): DisplayState {
    return this.display;
  }

  // ---- events and logs ---------------------------------------------------------------------------

  /**
   * Emits one event of this agent. An event that ends turn ids also closes their durable state: what
   * the turns left open for the owner is cancelled first (announced); the event itself is committed to
   * their `agt_queue` rows before it is emitted; the rows go once its frame was written to every open
   * event stream. A kill before that commit ends them after the restart with `daemon_restart`, a kill
   * after it re-emits this very event (same turn ids): the end is never lost. A kill between the socket
   * write and the delete repeats it, except to the streams that had it: the end is recorded with where
   * it goes out (FrameOrigin), and a stream resuming from that run past it is not given the repeat.
   */
  emit<T extends EventType>(
    type: T,
    payload: EventPayloads[T],
    options: { loop?: string; turnId?: string; sentAt?: readonly FrameOrigin[] } = {},
  ): void {
    const ended = endedTurnIds(type, payload);
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
        this.hil.closeTurns(ended, 'the turn ended before the owner decided'),
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
  private durably(what: string, write: () => void): void {
    if (!this.ownsFile || !this.agent.file.isOpen) return;
    try {
      write();
    } catch (error) {
      this.deps.logger.warn({ err: error, agentId: this.agent.id }, `could not ${what}`);
    }
  }

  /**
   * Hands a committed outbox row to the outbound transport that claims its address (an extension's,
   * `contracts/points.ts`): the row becomes `pending`, then `delivered` or `failed` when the transport
   * answers; tries it reports as failed count in `attempts`. Without a claimant the row stays `queued`.
   * `resumed`: the row was `pending` when the agent loaded (a restart). Never throws.
   */
  sendOutbound(row: OutboxMessage, resumed = false): void {
    const address = outboundAddress(row.channel, row.recipient);
    const outbox = this.agent.file.outbox;
    const report: OutboundReport = {
      attemptFailed: (statusCode, error) =>
        this.durably('count a failed delivery try', () =>
          outbox.setStatus(row.id, 'pending', {
            attempted: true,
            statusCode: typeof statusCode === 'number' ? statusCode : null,
            error: String(error).slice(0, 500),
          }),
        ),
    };
    const sending = this.deps.sendOutbound?.(
      {
        agentId: this.agent.id,
        messageId: row.id,
        address,
        channel: row.channel,
        recipient: row.recipient,
        text: row.text,
        ...(row.data === null || row.data === undefined ? {} : { data: row.data }),
        ...(resumed ? { resumed: true } : {}),
      },
      report,
    );
    if (!sending) return;
    if (!resumed) this.durably('mark an outbox message pending', () => outbox.setStatus(row.id, 'pending'));
    void sending.delivery.then(
      (result) => {
        const statusCode = typeof result?.statusCode === 'number' ? result.statusCode : undefined;
        this.durably('mark an outbox message delivered', () =>
          outbox.setStatus(row.id, 'delivered', {
            attempted: true,
            deliveredAt: Date.now(),
            ...(statusCode === undefined ? {} : { statusCode }),
          }),
        );
      },
      (error: unknown) => {
        const why = error instanceof Error ? error.message : String(error);
        const code = (error as { statusCode?: unknown } | null)?.statusCode;
        this.durably('mark an outbox message failed', () =>
          outbox.setStatus(row.id, 'failed', {
            error: why,
            attempted: true,
            ...(typeof code === 'number' ? { statusCode: code } : {}),
          }),
        );
        this.log(
          'warn',
          `outbox message ${row.id} to ${address} failed (transport of extension ${sending.owner}): ${why}`,
          { event: 'outbox_failed' },
        );
      },
    );
  }

  /** Rows a previous run handed to a transport and never settled go out again (the receiver drops repeats). */
  private resumeOutbound(): void {
    for (const row of this.agent.file.outbox.list({ status: 'pending' })) this.sendOutbound(row, true);
  }

  /** Runs one of the agent's lambdas for an extension (`ctx.agents.runLambda`); see SystemRunner.runLambda. */
  runLambda(lambda: string, input: unknown, timeoutMs?: number): Promise<{ result: unknown; logs: string[] }> {
    return this.system.runLambda(lambda, input, timeoutMs);
  }

  /** Commits a log row, announces it and offers it to `on_logs`. Never throws. */
  log(level: 'debug' | 'info' | 'warn' | 'error', message: string, fields: LogFields = {}): void {
    try {
      if (!this.agent.file.isOpen) return;
      this.agent.file.logs.write({
        level,
        message,
        origin: fields.origin ?? 'runtime',
        event: fields.event ?? null,
        target: fields.target ?? null,
        data: fields.data,
      });
      this.emit(
        'log.written',
        { level, origin: fields.origin ?? 'runtime', event: fields.event ?? null, message },
        { loop: fields.loop, turnId: fields.turnId },
      );
      this.fire(
        'on_logs',
        { level, message, origin: fields.origin ?? 'runtime', event: fields.event ?? null },
        { loop: fields.loop, turnId: fields.turnId, system: fields.system },
      );
    } catch (error) {
      this.deps.logger.warn({ err: error, agentId: this.agent.id }, 'agent log write failed');
    }
  }

  // ---- loops -------------------------------------------------------------------------------------

  loopNames(): string[] {
    return ['main', ...(this.agent.config.loops ?? []).map((loop) => loop.name)];
  }

  /** The executor of a declared loop; 404 unknown, 409 disabled (checked before anything is queued). */
  loop(name = 'main'): LoopExecutor {
    if (name !== 'main') {
      const declared = this.agent.config.loops?.find((loop) => loop.name === name);
      if (!declared) throw noSuchLoop(this.agent.name, name);
      if (!declared.enabled) throw loopDisabled(name);
    }
    return this.executor(name);
  }

  /** The client and settings of a loop's model (compaction); `unavailable` when no provider serves it. */
  modelFor(loop: string): ReturnType<typeof loopModel> {
    return loopModel(this.agent, this.deps, loop);
  }

  /** The executor if it exists (never creates one; unknown loops give undefined). */
  existingLoop(name: string): LoopExecutor | undefined {
    return this.executors.get(name);
  }

  private executor(name: string): LoopExecutor {
    let executor = this.executors.get(name);
    if (!executor) {
      executor = new LoopExecutor(name, {
        emit: (type, payload, options) => this.emit(type, payload, options),
        log: (level, message, data) => this.log(level, message, { loop: name, data }),
        turnTimeoutMs: () => limitOf(this.agent.config, 'turn_timeout_ms'),
        runTurn: ({ loop, head, control }) =>
          runTurn({
            agent: this.agent,
            loop,
            turnId: head.turnId,
            head,
            signal: control.signal,
            setState: control.setState,
            absorb: control.absorb,
            emit: (type, payload) => this.emit(type, payload, { loop, turnId: head.turnId }),
            log: (level, message, data) => this.log(level, message, { loop, turnId: head.turnId, data }),
            fire: (type, data) => this.fire(type, data, { loop, turnId: head.turnId }),
            model: () => loopModel(this.agent, this.deps, loop),
            system: () => loopInstructions(this.agent, loop),
            ...(this.deps.memory
              ? {
                  recall: (input: string) =>
                    this.deps.memory!.recall(this.agent, input, { loop, turnId: head.turnId, signal: control.signal }),
                }
              : {}),
            tools: () => loopTools(this.agent, this.deps, loop),
            hil: this.hil,
            clock: this.deps.clock,
            logger: this.deps.logger,
          }),
      });
      this.executors.set(name, executor);
    }
    return executor;
  }

  // ---- work --------------------------------------------------------------------------------------

  /**
   * Queues a chat (404/409 before anything is written); returns its turn id. The accepted chat (and its
   * `Idempotency-Key`) is committed to the agent file before this returns, so the 202 that follows is
   * never lost by a crash. A key seen before (24 h) with the same loop and text returns its first turn id
   * and queues nothing; with another request it is refused (422 `idempotency_key_reused`).
   */
  chat(loopName: string, text: string, idempotencyKey?: string): string {
    const now = this.deps.clock.now();
    const idempotency =
      idempotencyKey === undefined
        ? undefined
        : { key: idempotencyKey, requestHash: requestDigest('chat', loopName, text) };
    const seen = this.replayOf(idempotency, now);
    if (seen !== undefined) return seen;
    const executor = this.loop(loopName);
    executor.assertAccepts();
    const turnId = randomUUID();
    this.accept(
      executor,
      { kind: 'chat', turnId, text, at: now },
      { turnId, loop: loopName, kind: 'chat', payload: { text }, createdAt: now },
      idempotency,
    );
    this.fire('on_chat', { text, loop: loopName, turn_id: turnId }, { loop: loopName });
    return turnId;
  }

  /**
   * `POST trigger`: bypasses the evaluator; returns the turn id that the work will carry. Committed like
   * a chat before it returns (a system-scope run as `running`: it starts at once and is never re-run).
   */
  /**
   * `accepted`: called with the new turn's id once it is committed, before it can start (not for a
   * replay). A repeated key answers as for a chat; its request is compared only when `requestHash` is given.
   */
  dispatch(dispatch: NormalizedDispatch, idempotency?: Idempotency, accepted?: (turnId: string) => void): string {
    const now = this.deps.clock.now();
    const seen = this.replayOf(idempotency, now);
    if (seen !== undefined) return seen;
    const turnId = randomUUID();
    const types = new Set(dispatch.events.map((e) => e.type));
    const trigger = types.size === 1 ? TRIGGER_OF[dispatch.events[0]!.type] : 'dispatch';
    if (dispatch.target.scope === 'system') {
      this.commitAccepted(
        {
          turnId,
          loop: 'main',
          kind: 'system',
          status: 'running',
          payload: { trigger, target: dispatch.target, count: dispatch.count },
          createdAt: now,
        },
        idempotency,
      );
      accepted?.(turnId);
      this.system.start(dispatch.target, trigger, dispatch.events, dispatch.count, turnId);
      return turnId;
    }
    const loop = dispatch.target.loop ?? 'main';
    const executor = this.loop(loop);
    executor.assertAccepts();
    const item: QueueItem = {
      kind: 'trigger',
      turnId,
      trigger,
      events: dispatch.events,
      count: dispatch.count,
      at: now,
    };
    this.accept(
      executor,
      item,
      {
        turnId,
        loop,
        kind: 'trigger',
        payload: { trigger, events: dispatch.events, count: dispatch.count },
        createdAt: now,
      },
      idempotency,
      accepted,
    );
    return turnId;
  }

  /**
   * The turn id a repeated key answers, or undefined for a key not seen (24 h). A key first used with
   * another request (both digests known and different) is refused.
   */
  private replayOf(idempotency: Idempotency | undefined, now: number): string | undefined {
    if (idempotency === undefined) return undefined;
    const seen = this.agent.file.idempotency.get(idempotency.key, now);
    if (seen === undefined) return undefined;
    if (
      seen.requestHash !== null &&
      idempotency.requestHash !== undefined &&
      seen.requestHash !== idempotency.requestHash
    )
      throw idempotencyKeyReused();
    return seen.turnId;
  }

  /** Commits an accepted turn and its idempotency key in one transaction. */
  private commitAccepted(row: QueuedInput, idempotency: Idempotency | undefined): void {
    const file = this.agent.file;
    file.transaction(() => {
      file.queue.insert(row);
      if (idempotency !== undefined)
        file.idempotency.put(
          idempotency.key,
          row.turnId,
          row.createdAt ?? this.deps.clock.now(),
          idempotency.requestHash ?? null,
        );
    });
  }

  /** Commits, then queues; a refusal after the commit (not expected: checked before) takes the commit back. */
  private accept(
    executor: LoopExecutor,
    item: QueueItem,
    row: QueuedInput,
    idempotency: Idempotency | undefined,
    accepted?: (turnId: string) => void,
  ): void {
    this.commitAccepted(row, idempotency);
    accepted?.(item.turnId);
    try {
      executor.enqueue(item);
    } catch (error) {
      const file = this.agent.file;
      file.transaction(() => {
        file.queue.remove([item.turnId]);
        if (idempotency !== undefined) file.idempotency.delete(idempotency.key);
      });
      throw error;
    }
  }

  /** True when work may go to this loop: `main`, or a declared and enabled inner loop. */
  loopAvailable(name: string): boolean {
    return name === 'main' || this.agent.config.loops?.some((loop) => loop.name === name && loop.enabled) === true;
  }

  /**
   * Restart recovery, once the agent is loaded: what the file says was accepted and not ended runs,
   * resumes or is announced as ended (see recovery.ts).
   */
  recover(): void {
    if (this.detached) return;
    try {
      recoverAcceptedWork(this);
      this.resumeOutbound();
    } catch (error) {
      this.deps.logger.error({ err: error, agentId: this.agent.id }, 'restart recovery failed');
      this.log('error', `restart recovery failed: ${(error as Error).message}`, { event: 'recovery_failed' });
    }
  }

  /** `loop_send`: queues `text` in another loop as a trigger turn; returns its turn id. */
  sendToLoop(from: string, to: string, text: string): string {
    const turnId = randomUUID();
    const event: TriggerEvent = {
      id: randomUUID(),
      type: 'inbox',
      source: `loop:${from}`,
      time: new Date(this.deps.clock.now()).toISOString(),
      data: { text, from },
    };
    this.loop(to).enqueue({
      kind: 'trigger',
      turnId,
      trigger: 'loop_send',
      events: [event],
      count: 1,
      at: this.deps.clock.now(),
    });
    return turnId;
  }

  /** The agent's own config change (sys_update_config): same path as the owner's PUT config. */
  updateConfig(next: AgentConfig): Promise<void> {
    return this.deps.updateConfig(this.agent.id, next);
  }

  /** Agent-scope trigger wake (evaluator, timers); a loop that cannot take work is logged. */
  private wake(loop: string, trigger: string, events: TriggerEvent[], count: number): void {
    try {
      const item: QueueItem = {
        kind: 'trigger',
        turnId: randomUUID(),
        trigger,
        events,
        count,
        at: this.deps.clock.now(),
      };
      this.loop(loop).enqueue(item);
    } catch (error) {
      this.log('warn', `${trigger} could not wake loop ${loop}: ${(error as Error).message}`, {
        origin: 'trigger',
        event: trigger,
        system: true,
      });
    }
  }

  /** Offers an event to the trigger evaluator; returns how many targets took it. */
  fire(
    type: TriggerType,
    data: unknown,
    origin: TriggerOrigin = {},
    extra: TriggerTarget[] = [],
    options: FireOptions = {},
  ): number {
    if (this.detached) return 0;
    try {
      // Most events of a turn have no trigger to go to: the event (an id, a timestamp) is built only for one.
      if (!this.evaluator.wants(type, extra, options)) return 0;
      const eventType = (Object.keys(TRIGGER_OF) as Array<keyof typeof TRIGGER_OF>).find(
        (key) => TRIGGER_OF[key] === type,
      )!;
      const event: TriggerEvent = {
        id: randomUUID(),
        type: eventType,
        source: origin.system ? 'system' : 'runtime',
        time: new Date(this.deps.clock.now()).toISOString(),
        data,
      };
      return this.evaluator.fire(type, event, origin, extra, options);
    } catch (error) {
      this.deps.logger.warn({ err: error, agentId: this.agent.id, trigger: type }, 'trigger evaluation failed');
      return 0;
    }
  }

  private timerFired(timer: TimerRow): void {
    this.emit('timer.fired', { timerId: timer.id, run_count: timer.run_count });
    const data = {
      timerId: timer.id,
      payload: timer.payload,
      run_count: timer.run_count,
      loop: timer.loop ?? 'main',
      expired: timer.expired,
    };
    // A firing goes exactly to the timer's own scope (agent: one wake of its loop; system: one run of
    // its lambda). The configured `on_timer` targets are not run on top (the standard template's agent
    // target would wake the loop a second time); `on_timer` with `enabled: false` mutes timers.
    const own: TriggerTarget[] = [];
    if (timer.scope.includes('agent')) own.push({ scope: 'agent', ...(timer.loop ? { loop: timer.loop } : {}) });
    if (timer.scope.includes('system') && timer.lambda)
      own.push({ scope: 'system', lambda: timer.lambda, warm: timer.warm });
    this.fire('on_timer', data, {}, own, { ownTargetsOnly: true });
  }

  // ---- control -----------------------------------------------------------------------------------

  /** `DELETE chat`: clears one loop's stream; 404 unknown loop, 409 while a turn runs in it. */
  clearLoop(name: string): number {
    if (!this.loopNames().includes(name)) throw noSuchLoop(this.agent.name, name);
    const executor = this.executors.get(name);
    if (executor?.running) throw turnRunningInLoop(name);
    const removed = this.agent.file.loop.clear(name);
    this.emit('loop.cleared', { removed }, { loop: name });
    executor?.resetSession();
    return removed;
  }

  /**
   * `POST abort`: the loop stops until the agent reloads. 404 unknown loop; 409 when the loop has no
   * executor (never woken) or is already stopped. A notice row records what was discarded.
   */
  abort(name: string): string[] {
    if (!this.loopNames().includes(name)) throw noSuchLoop(this.agent.name, name);
    const executor = this.executors.get(name);
    if (!executor || executor.state === 'stopped') throw noRunningExecutor(name);
    const running = executor.currentTurnId;
    const discarded = executor.abort();
    try {
      const text = `The owner aborted this loop${running ? ` during turn ${running}` : ''}.${discarded.length > 0 ? ` Discarded queued turns: ${discarded.join(', ')}.` : ''} No further turns run until the agent is reloaded.`;
      const row = this.agent.file.loop.append({
        loop: name,
        role: 'system',
        kind: 'notice',
        content: { text, discarded_turn_ids: discarded },
      });
      this.emit('loop.appended', { row_id: row.id, role: row.role, kind: row.kind }, { loop: name });
    } catch (error) {
      this.log('error', `abort notice could not be written: ${(error as Error).message}`, { loop: name });
    }
    return discarded;
  }

  /** `POST interrupt`: 404 unknown loop; 409 stopped or errored; false when nothing ran. */
  interrupt(name: string): boolean {
    if (!this.loopNames().includes(name)) throw noSuchLoop(this.agent.name, name);
    const executor = this.executors.get(name);
    return executor ? executor.interrupt() : false;
  }

  /** Display state (not persisted). `off` discards queued work and interrupts running turns. */
  setDisplayState(next: DisplayState): void {
    const previous = this.display;
    this.display = next;
    this.agent.displayState = next;
    if (previous !== next) this.emit('agent.state.changed', { state: next, previous });
    if (next === 'off') for (const executor of this.executors.values()) executor.off();
    this.evaluator.displayStateChanged(previous, next);
  }

  /** Arms timers; called once the agent is attached (loaded agents run: chat, triggers, timers). */
  activate(): void {
    this.timers.start();
    this.consolidation.arm();
  }

  /** `on_startup` when the agent is started (start route, autostart); true when a target took it. */
  start(): boolean {
    return this.fire('on_startup', null) > 0;
  }

  /**
   * The config was replaced: trigger timing starts over, and the executor of an inner loop that is now
   * disabled or gone is stopped at once (queued work discarded, the running turn aborted) and dropped,
   * so a re-enabled loop starts fresh.
   */
  configChanged(): void {
    this.evaluator.configChanged();
    this.consolidation.arm();
    for (const [name, executor] of this.executors) {
      if (name === 'main') continue;
      const declared = this.agent.config.loops?.find((loop) => loop.name === name);
      if (declared?.enabled) continue;
      this.executors.delete(name);
      void executor.stop(0, 'disabled');
    }
  }

  /** For AgentStatus: the main executor's state, or the display state while main is idle. */
  status(): { runtimeState: string; targetState: string | null } {
    const main = this.executor('main');
    const runtimeState = main.state === 'idle' && this.display !== 'idle' ? this.display : main.state;
    return { runtimeState, targetState: main.target };
  }

  /**
   * Unload: stops triggers and timers, lets running turns finish within `graceMs`, closes sandboxes.
   * `shutdown` keeps accepted work for the next start (queued turns stay in the file, a turn waiting for
   * the owner is parked); `lease_lost` does too and writes nothing of it (the file has a new owner).
   */
  async detach(graceMs: number, reason = 'unload'): Promise<void> {
    if (this.detached) return;
    this.detached = true;
    const keep = reason === 'shutdown' || reason === 'lease_lost';
    if (reason === 'lease_lost') this.ownsFile = false;
    if (keep) this.hil.park();
    this.evaluator.close();
    this.timers.close();
    this.consolidation.close();
    await Promise.all([...this.executors.values()].map((executor) => executor.stop(graceMs, 'unload', { keep })));
    await this.system.close();
    await this.sql.close();
    // The file closes after this: the ends still on their way to the streams are waited for, or the
    // next start would announce them a second time. Ends the streams never took stay for the restart.
    if (this.unsent > 0)
      await waitAtMost(new Promise<void>((done) => (this.unsentDrained = done)), END_SENT_WAIT_MS, () => undefined);
  }
}
