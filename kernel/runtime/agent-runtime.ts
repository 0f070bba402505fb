/**
 * The running side of one loaded agent: its loop executors, trigger evaluator, timers, human-in-the-
 * loop requests and sandboxed system targets. Everything it opens is closed by {@link detach}.
 * Failures stay inside: they are written to the agent's `agt_logs` and announced on the bus, never
 * thrown into the daemon.
 *
 * Its parts, each in its own file: events and the durable end of turns (agent-events.ts), the accept
 * path of chats and dispatches (accept-work.ts), a loop's turn runner (loop-turns.ts), the trigger
 * machinery and timers (agent-triggers.ts), outbound delivery (outbound-delivery.ts), restart recovery
 * (recovery.ts). This class holds their state and the control and lifecycle of the agent.
 */
import { randomUUID } from 'node:crypto';
import type { AgentConfig, EventPayloads, EventType, TriggerTarget, TriggerType } from '@agt/contracts';
import type { OutboxMessage } from '../agents/stores/message-stores.js';
import type { Idempotency } from '../agents/stores/idempotency-store.js';
import { waitAtMost } from '../deadline.js';
import { quotaBytesFor, quotaPages } from '../storage/quota.js';
import { acceptChat, acceptChatGrouped, acceptDispatch, chatBatch, type AcceptHost } from './accept-work.js';
import { AgentEvents, type EmitOptions, END_SENT_WAIT_MS } from './agent-events.js';
import { AgentTriggers } from './agent-triggers.js';
import type { Clock } from './clock.js';
import type { NormalizedDispatch, TriggerEvent } from './dispatch.js';
import { loopDisabled, noRunningExecutor, noSuchLoop, turnRunningInLoop } from './errors.js';
import type { LoopExecutor } from './executor/loop-executor.js';
import { loopModel } from './executor/loop-setup.js';
import { HilStore } from './hil.js';
import { hilListener } from './hil-events.js';
import { loopExecutor } from './loop-turns.js';
import { Consolidator } from './memory-consolidation.js';
import type { MemoryService } from '../memory/service.js';
import { type OutboundHost, resumeOutbound, sendOutbound } from './outbound-delivery.js';
import { recoverAcceptedWork } from './recovery.js';
import type { RuntimeDeps } from './runtime-deps.js';
import { SqlSandbox } from './sql-sandbox/sql-runner.js';
import type { TimerScheduler } from './timers/scheduler.js';
import type { FireOptions, TriggerEvaluator, TriggerOrigin } from './triggers/evaluator.js';
import type { SystemRunner } from './triggers/system-runner.js';
import type { DisplayState, LogFields, RuntimeAgent } from './types.js';

const isDisplayState = (value: unknown): value is DisplayState =>
  value === 'active' || value === 'idle' || value === 'hibernate' || value === 'suspended' || value === 'off';

export class AgentRuntime {
  readonly hil: HilStore;
  readonly timers: TimerScheduler;
  /** Memory consolidation: its schedule and the owner's run-now (memory-consolidation.ts). */
  readonly consolidation: Consolidator;
  readonly evaluator: TriggerEvaluator;
  private readonly system: SystemRunner;
  /** The child process that runs the agent's own SQL (`db_query`, `db_execute`). */
  readonly sql: SqlSandbox;
  private readonly events: AgentEvents;
  private readonly triggers: AgentTriggers;
  private readonly outbound: OutboundHost;
  private readonly accepting: AcceptHost;
  private readonly executors = new Map<string, LoopExecutor>();
  private display: DisplayState;
  private detached = false;

  constructor(
    readonly agent: RuntimeAgent,
    private readonly deps: RuntimeDeps,
  ) {
    const initial = agent.displayState ?? agent.config.state;
    this.display = isDisplayState(initial) ? initial : 'idle';
    this.events = new AgentEvents(agent, deps, (turnIds, reason) => this.hil.closeTurns(turnIds, reason));
    this.hil = new HilStore(hilListener(this), agent.file, () => deps.clock.now());
    // The owner's storage quota binds the agent's SQL connection (kernel/storage/quota.ts), read at each call.
    this.sql = new SqlSandbox(agent.file.path, {
      maxPageCount: () => quotaPages(agent.file, quotaBytesFor(agent.ownerSettings?.(), agent.id)),
    });
    const triggers = new AgentTriggers({
      agent,
      deps,
      displayState: () => this.display,
      emit: (type, payload, options) => this.emit(type, payload, options),
      log: (level, message, fields) => this.log(level, message, fields),
      fire: (type, data, origin, extra, options) => this.fire(type, data, origin, extra, options),
      loop: (name) => this.loop(name),
    });
    this.triggers = triggers;
    this.system = triggers.system;
    this.evaluator = triggers.evaluator;
    this.timers = triggers.timers;
    this.outbound = {
      agent,
      deps,
      durably: (what, write) => this.events.durably(what, write),
      log: (level, message, fields) => this.log(level, message, fields),
    };
    this.accepting = {
      agent,
      clock: deps.clock,
      loop: (name) => this.loop(name),
      fire: (type, data, origin) => this.fire(type, data, origin),
      runSystem: (target, trigger, events, count, turnId) => this.system.start(target, trigger, events, count, turnId),
      batch: chatBatch(() => agent.file),
      detached: () => this.detached,
    };
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

  /** Emits one event of this agent; an event that ends turns closes their durable state (agent-events.ts). */
  emit<T extends EventType>(type: T, payload: EventPayloads[T], options: EmitOptions = {}): void {
    this.events.emit(type, payload, options);
  }

  /**
   * Hands a committed outbox row to the outbound transport that claims its address (outbound-delivery.ts).
   * `resumed`: the row was `pending` when the agent loaded (a restart). Never throws.
   */
  sendOutbound(row: OutboxMessage, resumed = false): void {
    sendOutbound(this.outbound, row, resumed);
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
      executor = loopExecutor(
        {
          agent: this.agent,
          deps: this.deps,
          hil: this.hil,
          emit: (type, payload, options) => this.emit(type, payload, options),
          log: (level, message, fields) => this.log(level, message, fields),
          fire: (type, data, origin) => this.fire(type, data, origin),
        },
        name,
      );
      this.executors.set(name, executor);
    }
    return executor;
  }

  // ---- work ----------------------------------------------------------------------------------------

  /** Queues a chat, committed before this returns (accept-work.ts); returns its turn id. */
  /** `accepted`: called with the new turn's id once it is committed, before it can start (not for a replay). */
  chat(loopName: string, text: string, idempotencyKey?: string, accepted?: (turnId: string) => void): string {
    return acceptChat(this.accepting, loopName, text, idempotencyKey, accepted);
  }

  /** {@link chat} sharing its commit with the other chats of this event-loop turn (`POST chat`, accept-work.ts). */
  chatGrouped(loopName: string, text: string, idempotencyKey?: string): Promise<string> {
    return acceptChatGrouped(this.accepting, loopName, text, idempotencyKey);
  }

  /**
   * `POST trigger`: bypasses the evaluator; returns the turn id that the work will carry (accept-work.ts).
   * `accepted`: called with the new turn's id once it is committed, before it can start (not for a replay).
   */
  dispatch(dispatch: NormalizedDispatch, idempotency?: Idempotency, accepted?: (turnId: string) => void): string {
    return acceptDispatch(this.accepting, dispatch, idempotency, accepted);
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
      resumeOutbound(this.outbound);
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
      return this.evaluator.fire(type, this.triggers.event(type, data, origin), origin, extra, options);
    } catch (error) {
      this.deps.logger.warn({ err: error, agentId: this.agent.id, trigger: type }, 'trigger evaluation failed');
      return 0;
    }
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
   * `shutdown` and `handoff` (an unload with `keep`, for a planned move) keep accepted work for the next
   * start (queued turns stay in the file, a turn waiting for the owner is parked); `lease_lost` does too and
   * writes nothing of it (the file has a new owner).
   */
  async detach(graceMs: number, reason = 'unload'): Promise<void> {
    if (this.detached) return;
    this.detached = true;
    const keep = reason === 'shutdown' || reason === 'handoff' || reason === 'lease_lost';
    if (reason === 'lease_lost') this.events.fileLost();
    if (keep) this.hil.park();
    this.evaluator.close();
    this.timers.close();
    this.consolidation.close();
    await Promise.all([...this.executors.values()].map((executor) => executor.stop(graceMs, 'unload', { keep })));
    await this.system.close();
    await this.sql.close();
    // The file closes after this: the ends still on their way to the streams are waited for, or the
    // next start would announce them a second time. Ends the streams never took stay for the restart.
    const ends = this.events.allSent();
    if (ends) await waitAtMost(ends, END_SENT_WAIT_MS, () => undefined);
  }
}
