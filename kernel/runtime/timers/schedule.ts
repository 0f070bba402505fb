/**
 * Timer schedules: the mutation body (spec TimerMutationBody) checked and turned into a stored
 * schedule, and the next wake time of a timer.
 *
 * Modes: `once_at` (`at` epoch ms), `once_delay` (`delay_ms` after creation), `interval` (`every_ms`,
 * first at `start_at` or one interval after creation), `cron` (a cron expression, server time zone).
 * `end_at` and `max_runs` bound every mode; a timer with no next wake is `expired` and kept as history.
 * An interval that fell behind (the daemon was down) fires once and then realigns to its grid: missed
 * runs are not replayed one by one.
 */
import { CronTime } from 'cron';
import { Type, type Static } from 'typebox';
import { AgtError } from '../../../contracts/errors.js';
import { LOOP_NAME_PATTERN } from '../../../contracts/agent-config.js';

export const TIMER_MODES = ['once_at', 'once_delay', 'interval', 'cron'] as const;
export type TimerMode = (typeof TIMER_MODES)[number];
/** A shorter interval would let one agent keep the daemon busy. */
export const MIN_INTERVAL_MS = 1_000;

export const TimerMutationBody = Type.Object(
  {
    mode: Type.String({ description: 'once_at, once_delay, interval or cron' }),
    at: Type.Optional(Type.Integer({ description: 'once_at: epoch ms' })),
    delay_ms: Type.Optional(Type.Integer({ minimum: 0, description: 'once_delay' })),
    every_ms: Type.Optional(Type.Integer({ minimum: MIN_INTERVAL_MS, description: 'interval' })),
    start_at: Type.Optional(Type.Integer()),
    end_at: Type.Optional(Type.Integer()),
    max_runs: Type.Optional(Type.Integer({ minimum: 1 })),
    cron: Type.Optional(Type.String({ minLength: 1 })),
    scope: Type.Optional(Type.Array(Type.Union([Type.Literal('agent'), Type.Literal('system')]), { description: 'default ["agent"]' })),
    lambda: Type.Optional(Type.String({ pattern: '^[^:]+:[A-Za-z_$][A-Za-z0-9_$]*$' })),
    warm: Type.Optional(Type.Boolean()),
    payload: Type.Optional(Type.String()),
    locked: Type.Optional(Type.Boolean()),
    loop: Type.Optional(Type.String({ pattern: LOOP_NAME_PATTERN })),
  },
  { additionalProperties: false },
);
export type TimerMutation = Static<typeof TimerMutationBody>;

export interface StoredSchedule {
  mode: TimerMode;
  at?: number;
  delay_ms?: number;
  every_ms?: number;
  start_at?: number;
  end_at?: number;
  max_runs?: number;
  cron?: string;
}

const bad = (message: string) => new AgtError('bad_request', message);

/** Checks a mutation body and returns the schedule to store (`now` anchors `once_delay`). */
export function scheduleFrom(body: TimerMutation, now: number): StoredSchedule {
  if (!(TIMER_MODES as readonly string[]).includes(body.mode)) throw bad(`mode must be one of ${TIMER_MODES.join(', ')}`);
  const mode = body.mode as TimerMode;
  const bounds = {
    ...(body.end_at !== undefined ? { end_at: body.end_at } : {}),
    ...(body.max_runs !== undefined ? { max_runs: body.max_runs } : {}),
  };
  switch (mode) {
    case 'once_at':
      if (body.at === undefined) throw bad('once_at needs at (epoch ms)');
      return { mode, at: body.at, ...bounds };
    case 'once_delay':
      if (body.delay_ms === undefined) throw bad('once_delay needs delay_ms');
      return { mode, delay_ms: body.delay_ms, at: now + body.delay_ms, ...bounds };
    case 'interval':
      if (body.every_ms === undefined) throw bad('interval needs every_ms');
      // Stored explicitly so the list shows when the first run is, and a replace re-anchors it.
      return { mode, every_ms: body.every_ms, start_at: body.start_at ?? now + body.every_ms, ...bounds };
    case 'cron':
      if (!body.cron) throw bad('cron needs cron (a cron expression)');
      try {
        new CronTime(body.cron);
      } catch (error) {
        throw bad(`invalid cron expression: ${(error as Error).message}`);
      }
      return { mode, cron: body.cron, ...bounds };
  }
}

/**
 * The next wake after a timer ran `runCount` times (last at `lastFiredAt`), or null when it is done.
 * `createdAt` anchors intervals without `start_at`.
 */
export function nextWake(schedule: StoredSchedule, state: { runCount: number; createdAt: number; lastFiredAt: number | null }, now: number): number | null {
  if (schedule.max_runs !== undefined && state.runCount >= schedule.max_runs) return null;
  let next: number | null;
  switch (schedule.mode) {
    case 'once_at':
    case 'once_delay':
      next = state.runCount === 0 ? (schedule.at ?? null) : null;
      break;
    case 'interval': {
      const every = schedule.every_ms!;
      const base = schedule.start_at ?? state.createdAt + every;
      if (state.runCount === 0) next = base; // an overdue first run fires at once
      else {
        // The first grid point strictly after now (missed runs are skipped, not replayed).
        const steps = Math.floor((now - base) / every) + 1;
        next = base + Math.max(1, steps) * every;
      }
      break;
    }
    case 'cron':
      try {
        next = new CronTime(schedule.cron!).getNextDateFrom(new Date(Math.max(now, state.lastFiredAt ?? 0))).toMillis();
      } catch {
        next = null;
      }
      break;
    default:
      next = null;
  }
  if (next !== null && schedule.end_at !== undefined && next > schedule.end_at) return null;
  return next;
}
