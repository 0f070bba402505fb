/**
 * The timers of one loaded agent: CRUD on `agt_timers` and one clock timer armed for the earliest
 * wake. A timer that fell due while the agent was not loaded fires once at attach. Each firing is
 * committed (run count, last fired, next wake, expired) before the runtime is told.
 */
import type { AgentFile } from '../../agents/agent-file.js';
import type { TimerRow } from '../../agents/stores/timers-store.js';
import type { Clock, TimerHandle } from '../clock.js';
import { systemTimerNeedsLambda, timerLocked, timerLockOwnerOnly, tooManyTimers } from '../errors.js';
import { nextWake, scheduleFrom, type StoredSchedule, type TimerMutation } from './schedule.js';

export const MAX_TIMERS_PER_AGENT = 1_000;

function stateOf(row: TimerRow) {
  return { runCount: row.run_count, createdAt: row.created_at, lastFiredAt: row.last_fired_at };
}

export class TimerScheduler {
  private handle: TimerHandle | undefined;
  private closed = false;

  constructor(
    private readonly file: AgentFile,
    private readonly clock: Clock,
    private readonly onFire: (timer: TimerRow) => void,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    this.arm();
  }

  list(): TimerRow[] {
    return this.file.timers.list();
  }

  /** Creates a timer; `loop` already checked by the caller (unknown loop → 404 there). */
  create(body: TimerMutation, actor: 'owner' | 'agent' = 'owner'): TimerRow {
    if (this.file.timers.list().filter((t) => !t.expired).length >= MAX_TIMERS_PER_AGENT) {
      throw tooManyTimers(MAX_TIMERS_PER_AGENT);
    }
    const now = this.clock.now();
    const fields = this.fields(body, now, undefined);
    if (actor === 'agent' && fields.locked) throw timerLockOwnerOnly();
    const row = this.file.timers.insert({ ...fields, created_at: now });
    this.arm();
    return this.file.timers.get(row.id)!;
  }

  /** Replaces a timer in place (same id); false when there is none. */
  replace(id: number, body: TimerMutation): boolean {
    const current = this.file.timers.get(id);
    if (!current) return false;
    const now = this.clock.now();
    const fields = this.fields(body, now, current);
    this.file.timers.update(id, {
      ...fields,
      created_at: now,
      run_count: 0,
      last_fired_at: null,
      expired: fields.next_wake_at === null,
    });
    this.arm();
    return true;
  }

  /** Deletes a timer; the agent's own tool cannot delete a locked one. */
  delete(id: number, actor: 'owner' | 'agent' = 'owner'): boolean {
    const current = this.file.timers.get(id);
    if (!current) return false;
    if (actor === 'agent' && current.locked) throw timerLocked(id);
    const removed = this.file.timers.delete(id);
    this.arm();
    return removed;
  }

  private fields(body: TimerMutation, now: number, current: TimerRow | undefined) {
    const schedule = scheduleFrom(body, now);
    const scope = body.scope && body.scope.length > 0 ? [...new Set(body.scope)] : ['agent'];
    if (scope.includes('system') && !body.lambda) throw systemTimerNeedsLambda();
    // A system-only timer wakes no loop; on replace, an absent loop keeps the timer's loop.
    const loopName = body.loop !== undefined ? body.loop : (current?.loop ?? 'main');
    const loop = !scope.includes('agent') || loopName === 'main' ? null : loopName;
    const next = nextWake(schedule, { runCount: 0, createdAt: now, lastFiredAt: null }, now);
    return {
      mode: schedule.mode,
      schedule: schedule as unknown as Record<string, unknown>,
      next_wake_at: next,
      payload: body.payload ?? null,
      scope,
      lambda: body.lambda ?? null,
      warm: body.warm === true,
      locked: body.locked === true,
      loop,
      expired: next === null,
    };
  }

  /** Arms the clock for the earliest live wake. */
  private arm(): void {
    this.clock.clearTimeout(this.handle);
    this.handle = undefined;
    if (this.closed) return;
    let earliest: number | undefined;
    try {
      for (const timer of this.file.timers.list()) {
        if (timer.expired || timer.next_wake_at === null) continue;
        if (earliest === undefined || timer.next_wake_at < earliest) earliest = timer.next_wake_at;
      }
    } catch (error) {
      // Runs from a clock callback: a closed or broken file must not become an uncaught exception.
      this.onError(error);
      return;
    }
    if (earliest === undefined) return;
    this.handle = this.clock.setTimeout(() => this.tick(), Math.max(0, earliest - this.clock.now()));
  }

  private tick(): void {
    this.handle = undefined;
    if (this.closed) return;
    try {
      const now = this.clock.now();
      for (const due of this.file.timers.due(now)) {
        const runCount = due.run_count + 1;
        const next = nextWake(
          due.schedule as unknown as StoredSchedule,
          { ...stateOf(due), runCount, lastFiredAt: now },
          now,
        );
        this.file.timers.update(due.id, {
          run_count: runCount,
          last_fired_at: now,
          next_wake_at: next,
          expired: next === null,
        });
        const fired = this.file.timers.get(due.id);
        if (fired) this.onFire(fired);
      }
    } catch (error) {
      this.onError(error);
    }
    this.arm();
  }

  close(): void {
    this.closed = true;
    this.clock.clearTimeout(this.handle);
    this.handle = undefined;
  }
}
