/**
 * Timer schedules: the mutation body (`TimerMutationBody`) checked and turned into a stored
 * schedule, and the next wake time of a timer.
 *
 * Modes: `once_at` (`at` epoch ms), `once_delay` (`delay_ms` after creation), `interval` (`every_ms`,
 * first at `start_at` or one interval after creation), `cron` (a cron expression, server time zone).
 * `end_at` and `max_runs` bound every mode; a timer with no next wake is `expired` and kept as history.
 * An interval that fell behind (the daemon was down) fires once and then realigns to its grid: missed
 * runs are not replayed one by one. An interval created with a `start_at` in the past does not fire
 * to catch up: its first wake is the next slot of its grid (`start_at + k * every_ms`) not before now.
 *
 * Bounds (400 outside them): `at`, `start_at`, `end_at` are epoch ms in 0..{@link MAX_EPOCH_MS} (the end
 * of year 9999); `every_ms` in {@link MIN_INTERVAL_MS}..{@link MAX_INTERVAL_MS}; `delay_ms` in
 * 0..{@link MAX_DELAY_MS}; `max_runs` in 1..{@link MAX_RUNS}; `end_at` not before `start_at`.
 */
import { cronTime } from '../../cron-expression.js';
import { Type, type Static } from 'typebox';
import { LOOP_NAME_PATTERN } from '../../agents/config-schema.js';
import { invalidSchedule } from '../errors.js';

export const TIMER_MODES = ['once_at', 'once_delay', 'interval', 'cron'] as const;
export type TimerMode = (typeof TIMER_MODES)[number];
/** A shorter interval would let one agent keep the daemon busy. */
export const MIN_INTERVAL_MS = 1_000;
/** 9999-12-31T23:59:59.999Z: the largest epoch-ms timestamp a timer accepts. */
export const MAX_EPOCH_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
const DAY_MS = 24 * 60 * 60 * 1000;
/** The longest interval and the longest delay: one leap year (use `once_at` or `cron` beyond). */
export const MAX_INTERVAL_MS = 366 * DAY_MS;
export const MAX_DELAY_MS = 366 * DAY_MS;
export const MAX_RUNS = 1_000_000_000;
const EpochMs = (description: string) =>
  Type.Integer({
    minimum: 0,
    maximum: MAX_EPOCH_MS,
    description: `${description} (epoch ms, up to the end of year 9999)`,
  });

export const TimerMutationBody = Type.Object(
  {
    mode: Type.String({ description: 'once_at, once_delay, interval or cron' }),
    at: Type.Optional(EpochMs('once_at')),
    delay_ms: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_DELAY_MS,
        description: 'once_delay: ms after creation (at most 366 days)',
      }),
    ),
    every_ms: Type.Optional(
      Type.Integer({
        minimum: MIN_INTERVAL_MS,
        maximum: MAX_INTERVAL_MS,
        description: 'interval: 1000 ms to 366 days',
      }),
    ),
    start_at: Type.Optional(EpochMs('interval: first run; a past start_at waits for the next slot of its grid')),
    end_at: Type.Optional(EpochMs('no run after it')),
    max_runs: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_RUNS })),
    cron: Type.Optional(Type.String({ minLength: 1 })),
    scope: Type.Optional(
      Type.Array(Type.Union([Type.Literal('agent'), Type.Literal('system')]), { description: 'default ["agent"]' }),
    ),
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

/** Checks a mutation body and returns the schedule to store (`now` anchors `once_delay`). */
export function scheduleFrom(body: TimerMutation, now: number): StoredSchedule {
  if (!(TIMER_MODES as readonly string[]).includes(body.mode))
    throw invalidSchedule(`mode must be one of ${TIMER_MODES.join(', ')}`);
  const mode = body.mode as TimerMode;
  // The schema bounds each field; this covers callers that skip it and the relation between fields.
  for (const key of ['at', 'start_at', 'end_at'] as const) {
    const value = body[key];
    if (value !== undefined && (!Number.isInteger(value) || value < 0 || value > MAX_EPOCH_MS))
      throw invalidSchedule(`${key} must be epoch ms between 0 and ${MAX_EPOCH_MS}`);
  }
  if (
    body.delay_ms !== undefined &&
    (!Number.isInteger(body.delay_ms) || body.delay_ms < 0 || body.delay_ms > MAX_DELAY_MS)
  )
    throw invalidSchedule(`delay_ms must be 0 to ${MAX_DELAY_MS}`);
  if (
    body.every_ms !== undefined &&
    (!Number.isInteger(body.every_ms) || body.every_ms < MIN_INTERVAL_MS || body.every_ms > MAX_INTERVAL_MS)
  ) {
    throw invalidSchedule(`every_ms must be ${MIN_INTERVAL_MS} to ${MAX_INTERVAL_MS}`);
  }
  if (
    body.max_runs !== undefined &&
    (!Number.isInteger(body.max_runs) || body.max_runs < 1 || body.max_runs > MAX_RUNS)
  )
    throw invalidSchedule(`max_runs must be 1 to ${MAX_RUNS}`);
  if (body.start_at !== undefined && body.end_at !== undefined && body.end_at < body.start_at)
    throw invalidSchedule('end_at is before start_at');
  const bounds = {
    ...(body.end_at !== undefined ? { end_at: body.end_at } : {}),
    ...(body.max_runs !== undefined ? { max_runs: body.max_runs } : {}),
  };
  switch (mode) {
    case 'once_at':
      if (body.at === undefined) throw invalidSchedule('once_at needs at (epoch ms)');
      return { mode, at: body.at, ...bounds };
    case 'once_delay':
      if (body.delay_ms === undefined) throw invalidSchedule('once_delay needs delay_ms');
      return { mode, delay_ms: body.delay_ms, at: now + body.delay_ms, ...bounds };
    case 'interval':
      if (body.every_ms === undefined) throw invalidSchedule('interval needs every_ms');
      // Stored explicitly so the list shows when the first run is, and a replace re-anchors it.
      return { mode, every_ms: body.every_ms, start_at: body.start_at ?? now + body.every_ms, ...bounds };
    case 'cron':
      if (!body.cron) throw invalidSchedule('cron needs cron (a cron expression)');
      try {
        new (cronTime())(body.cron);
      } catch (error) {
        throw invalidSchedule(`invalid cron expression: ${(error as Error).message}`);
      }
      return { mode, cron: body.cron, ...bounds };
  }
}

/**
 * The next wake after a timer ran `runCount` times (last at `lastFiredAt`), or null when it is done.
 * `createdAt` anchors intervals without `start_at`.
 */
export function nextWake(
  schedule: StoredSchedule,
  state: { runCount: number; createdAt: number; lastFiredAt: number | null },
  now: number,
): number | null {
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
      // The first run: at `start_at`, or (a past start_at) the next slot of its grid not before now, so
      // a past start never fires to catch up. A timer stored with its first wake that fell due while
      // the agent was not loaded fires once at load (the scheduler reads the stored wake, not this).
      if (state.runCount === 0) next = base >= now ? base : base + Math.ceil((now - base) / every) * every;
      else {
        // The first grid point strictly after now (missed runs are skipped, not replayed).
        const steps = Math.floor((now - base) / every) + 1;
        next = base + Math.max(1, steps) * every;
      }
      break;
    }
    case 'cron':
      try {
        next = new (cronTime())(schedule.cron!)
          .getNextDateFrom(new Date(Math.max(now, state.lastFiredAt ?? 0)))
          .toMillis();
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
