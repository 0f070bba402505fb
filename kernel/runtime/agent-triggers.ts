/**
 * What runs an agent's triggers: the evaluator that matches events to the config's `on_*` targets, the
 * runner of system-scope targets (lambdas, commands) and the agent's timers. An agent-scope target
 * wakes a loop with a trigger turn; a timer goes to exactly its own scope.
 */
import { randomUUID } from 'node:crypto';
import type { EventPayloads, EventType, TriggerTarget, TriggerType } from '@agt/contracts';
import type { TimerRow } from '../agents/stores/timers-store.js';
import { TRIGGER_OF, type TriggerEvent } from './dispatch.js';
import type { LoopExecutor } from './executor/loop-executor.js';
import type { RuntimeDeps } from './runtime-deps.js';
import { TimerScheduler } from './timers/scheduler.js';
import { type FireOptions, TriggerEvaluator, type TriggerOrigin } from './triggers/evaluator.js';
import { SystemRunner } from './triggers/system-runner.js';
import type { DisplayState, LogFields, QueueItem, RuntimeAgent } from './types.js';

/** What the trigger machinery needs of the agent's runtime (AgentRuntime gives it). */
export interface TriggersHost {
  readonly agent: RuntimeAgent;
  readonly deps: Pick<RuntimeDeps, 'clock' | 'executeCommand' | 'hostCommands'>;
  displayState(): DisplayState;
  emit<T extends EventType>(type: T, payload: EventPayloads[T], options?: { loop?: string; turnId?: string }): void;
  log(level: 'debug' | 'info' | 'warn' | 'error', message: string, fields?: LogFields): void;
  fire(
    type: TriggerType,
    data: unknown,
    origin?: TriggerOrigin,
    extra?: TriggerTarget[],
    options?: FireOptions,
  ): number;
  /** The executor of a declared loop; 404 unknown, 409 disabled. */
  loop(name: string): LoopExecutor;
}

export class AgentTriggers {
  readonly system: SystemRunner;
  readonly evaluator: TriggerEvaluator;
  readonly timers: TimerScheduler;

  constructor(private readonly host: TriggersHost) {
    const { agent, deps } = host;
    this.system = new SystemRunner({
      agent,
      emit: (type, payload, options) => host.emit(type, payload, options),
      executeCommand: deps.executeCommand,
      hostCommands: deps.hostCommands,
      log: (level, message, fields) => host.log(level, message, { ...fields, origin: 'trigger', system: true }),
    });
    this.evaluator = new TriggerEvaluator({
      clock: deps.clock,
      triggers: () => agent.config.triggers ?? {},
      displayState: () => host.displayState(),
      sink: {
        wake: (loop, type, delivery) => this.wake(loop, type, delivery.events, delivery.count),
        runSystem: (target, type, delivery) => this.system.start(target, type, delivery.events, delivery.count),
      },
      // Logs of the trigger machinery itself are system logs: they never feed `on_logs` (no loops).
      onDropped: (count, reason) =>
        host.log('warn', `${count} trigger event(s) dropped: ${reason}`, { origin: 'trigger', system: true }),
    });
    this.timers = new TimerScheduler(
      agent.file,
      deps.clock,
      (timer) => this.timerFired(timer),
      (error) => host.log('error', `timer failed: ${(error as Error).message}`, { origin: 'timer', system: true }),
    );
  }

  /** The event a trigger of `type` is given (built only once a target wants it: an id, a timestamp). */
  event(type: TriggerType, data: unknown, origin: TriggerOrigin): TriggerEvent {
    const eventType = (Object.keys(TRIGGER_OF) as Array<keyof typeof TRIGGER_OF>).find(
      (key) => TRIGGER_OF[key] === type,
    )!;
    return {
      id: randomUUID(),
      type: eventType,
      source: origin.system ? 'system' : 'runtime',
      time: new Date(this.host.deps.clock.now()).toISOString(),
      data,
    };
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
        at: this.host.deps.clock.now(),
      };
      this.host.loop(loop).enqueue(item);
    } catch (error) {
      this.host.log('warn', `${trigger} could not wake loop ${loop}: ${(error as Error).message}`, {
        origin: 'trigger',
        event: trigger,
        system: true,
      });
    }
  }

  private timerFired(timer: TimerRow): void {
    this.host.emit('timer.fired', { timerId: timer.id, run_count: timer.run_count });
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
    this.host.fire('on_timer', data, {}, own, { ownTargetsOnly: true });
  }
}
