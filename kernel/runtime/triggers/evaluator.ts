/**
 * The trigger evaluator of one agent: decides whether an event fires the agent's configured
 * triggers, and hands each firing to the runtime (agent scope: wake a loop; system scope: run a
 * lambda or command in the sandbox).
 *
 * For each target of `triggers[type]`, in order:
 * 1. the trigger's `enabled` flag;
 * 2. display-state gating: `active` and `idle` fire everything; `hibernate` fires only `on_inbox` and
 *    `on_chat` (someone is talking to the agent); `off` fires nothing (events are dropped); `suspended`
 *    holds events (up to {@link MAX_HELD}, oldest dropped first) and replays them in order when the
 *    agent leaves `suspended` (into `off`: they are dropped);
 * 3. self-suppression: an event produced by a loop's own turn does not wake that same loop again
 *    (types in {@link SELF_SUPPRESSED}; `on_chat` never wakes the loop the chat already runs in), and
 *    events produced by a system-scope target's own run wake nothing, so no trigger feeds itself;
 * 4. `filter` (see filter.ts);
 * 5. the timing modifiers (see pipeline.ts), per target.
 */
import type { AgentConfig, TriggerTarget, TriggerType } from '@agt/contracts';
import type { Clock } from '../clock.js';
import type { TriggerEvent } from '../dispatch.js';
import { matchesFilter } from './filter.js';
import { TargetPipeline, type Delivery } from './pipeline.js';

export type DisplayState = 'active' | 'idle' | 'hibernate' | 'suspended' | 'off';

export const MAX_HELD = 500;

/** Trigger types whose events an agent's own turn produces, so they must not wake that loop again. */
export const SELF_SUPPRESSED: ReadonlySet<TriggerType> = new Set<TriggerType>([
  'on_outbox',
  'on_tool_call',
  'on_logs',
  'on_llm_call',
  'on_task_create',
  'on_task_complete',
  'on_file_change',
  'on_chat',
]);

const HIBERNATE_WAKES: ReadonlySet<TriggerType> = new Set<TriggerType>(['on_inbox', 'on_chat']);

/** Where an event came from, for self-suppression. */
export interface TriggerOrigin {
  /** The loop whose turn produced the event. */
  loop?: string;
  turnId?: string;
  /** Produced by a system-scope target's own run (its log lines, its result). */
  system?: boolean;
}

export interface TriggerSink {
  /** Agent scope: queue a trigger turn in `loop`. */
  wake(loop: string, type: TriggerType, delivery: Delivery): void;
  /** System scope: run the target's lambda or command with the delivery. Must not throw. */
  runSystem(target: TriggerTarget, type: TriggerType, delivery: Delivery): void;
}

export interface EvaluatorDeps {
  clock: Clock;
  sink: TriggerSink;
  triggers(): AgentConfig['triggers'];
  displayState(): DisplayState;
  /** Reports held events dropped by the bound or by `off`. */
  onDropped?(count: number, reason: string): void;
}

/** How an event's own targets combine with the configured ones. */
export interface FireOptions {
  /**
   * The event names its targets itself and they are the only ones (a timer firing: its `scope` is
   * where it goes). The configured targets of the trigger are not run, so one firing never wakes a
   * loop twice; an explicitly disabled trigger (`enabled: false`) still mutes the event.
   */
  ownTargetsOnly?: boolean;
}

interface Held {
  type: TriggerType;
  event: TriggerEvent;
  origin: TriggerOrigin;
  extra: TriggerTarget[];
  options: FireOptions;
}

export class TriggerEvaluator {
  private pipelines = new Map<string, TargetPipeline>();
  private held: Held[] = [];
  private closed = false;

  constructor(private readonly deps: EvaluatorDeps) {}

  /** The configured targets an event of `type` goes to; null when the evaluator takes nothing of it. */
  private targetsOf(type: TriggerType, options: FireOptions): TriggerTarget[] | null {
    if (this.closed) return null;
    const trigger = this.deps.triggers()[type];
    if (options.ownTargetsOnly && trigger && !trigger.enabled) return null;
    return trigger?.enabled && !options.ownTargetsOnly ? trigger.targets : [];
  }

  /**
   * Whether {@link fire} could take an event of `type` at all (a trigger configured for it, or `extra`
   * targets): most events of a turn have none, and the caller then skips building the event (an id,
   * a timestamp: ~2% of a turn's CPU).
   */
  wants(type: TriggerType, extra: TriggerTarget[] = [], options: FireOptions = {}): boolean {
    const configured = this.targetsOf(type, options);
    return configured !== null && (configured.length > 0 || extra.length > 0);
  }

  /**
   * Offers one event. Returns how many targets accepted it (passed gating, suppression and filter);
   * a held event (state `suspended`) counts as 0. `extra` targets come from the event's source (a
   * timer's own scope): they fire even when the trigger is not configured, with the same gating;
   * with `ownTargetsOnly` they replace the configured targets (see {@link FireOptions}).
   */
  fire(
    type: TriggerType,
    event: TriggerEvent,
    origin: TriggerOrigin = {},
    extra: TriggerTarget[] = [],
    options: FireOptions = {},
  ): number {
    const configured = this.targetsOf(type, options);
    if (configured === null || (configured.length === 0 && extra.length === 0)) return 0;
    const state = this.deps.displayState();
    if (state === 'off') return 0;
    if (state === 'hibernate' && !HIBERNATE_WAKES.has(type)) return 0;
    if (state === 'suspended') {
      this.held.push({ type, event, origin, extra, options });
      if (this.held.length > MAX_HELD) {
        this.held.shift();
        this.deps.onDropped?.(1, 'held trigger events exceeded the bound while suspended');
      }
      return 0;
    }
    if (origin.system) return 0;
    let accepted = 0;
    configured.forEach((target, index) => {
      if (
        target.scope === 'agent' &&
        origin.loop !== undefined &&
        SELF_SUPPRESSED.has(type) &&
        origin.loop === (target.loop ?? 'main')
      )
        return;
      if (!matchesFilter(target.filter, event.data)) return;
      accepted++;
      this.pipeline(type, index, target).push({ events: [event], count: 1 });
    });
    // Targets that the event source names itself (a timer's own scope): no modifiers, no filter.
    for (const target of extra) {
      accepted++;
      this.deliver(type, target, { events: [event], count: 1 });
    }
    return accepted;
  }

  private pipeline(type: TriggerType, index: number, target: TriggerTarget): TargetPipeline {
    const key = `${type}#${index}`;
    let pipeline = this.pipelines.get(key);
    if (!pipeline) {
      pipeline = new TargetPipeline(target, this.deps.clock, (delivery) => this.deliver(type, target, delivery));
      this.pipelines.set(key, pipeline);
    }
    return pipeline;
  }

  private deliver(type: TriggerType, target: TriggerTarget, delivery: Delivery): void {
    if (this.closed) return;
    // State may have changed while the delivery waited in a timing modifier.
    const state = this.deps.displayState();
    if (state === 'off' || (state === 'hibernate' && !HIBERNATE_WAKES.has(type))) return;
    if (target.scope === 'system') this.deps.sink.runSystem(target, type, delivery);
    else this.deps.sink.wake(target.loop ?? 'main', type, delivery);
  }

  /** The display state changed: leaving `suspended` replays held events; `off` drops everything. */
  displayStateChanged(previous: DisplayState, next: DisplayState): void {
    if (next === 'off') {
      this.resetPipelines();
      if (this.held.length > 0) this.deps.onDropped?.(this.held.length, 'the agent was turned off');
      this.held = [];
      return;
    }
    if (previous === 'suspended' && next !== 'suspended') {
      const replay = this.held;
      this.held = [];
      for (const item of replay) this.fire(item.type, item.event, item.origin, item.extra, item.options);
    }
  }

  /** The config was replaced: targets may have moved, so pending timing state starts over. */
  configChanged(): void {
    this.resetPipelines();
  }

  get heldCount(): number {
    return this.held.length;
  }

  private resetPipelines(): void {
    for (const pipeline of this.pipelines.values()) pipeline.close();
    this.pipelines = new Map();
  }

  close(): void {
    this.closed = true;
    this.resetPipelines();
    this.held = [];
  }
}
