/**
 * `agt_timers`: the agent's timers (schema `Timer`). The schedule object holds the mode's fields
 * (`at`, `delay_ms`, `every_ms`, `start_at`, `end_at`, `max_runs`, `cron`); the scheduler that fires them
 * lives in the runtime. Expired timers stay as history.
 */
import { parseJson, type Sql } from '../sql.js';

export interface TimerRow {
  id: number;
  mode: string;
  schedule: Record<string, unknown>;
  next_wake_at: number | null;
  payload: string | null;
  scope: string[];
  lambda: string | null;
  warm: boolean;
  run_count: number;
  created_at: number;
  last_fired_at: number | null;
  locked: boolean;
  /** The cognition loop an agent-scope wake goes to; null for main or system-only timers. */
  loop: string | null;
  expired: boolean;
}

export type TimerInput = Omit<TimerRow, 'id' | 'run_count' | 'created_at' | 'last_fired_at' | 'expired'> &
  Partial<Pick<TimerRow, 'run_count' | 'created_at' | 'last_fired_at' | 'expired'>>;

type RawTimer = Omit<TimerRow, 'schedule' | 'scope' | 'warm' | 'locked' | 'expired'> & {
  schedule: string;
  scope: string;
  warm: number;
  locked: number;
  expired: number;
};

const decode = (row: RawTimer): TimerRow => ({
  ...row,
  schedule: (parseJson(row.schedule) ?? {}) as Record<string, unknown>,
  scope: (parseJson(row.scope) ?? []) as string[],
  warm: row.warm === 1,
  locked: row.locked === 1,
  expired: row.expired === 1,
});

const FIELDS = [
  'mode',
  'schedule',
  'next_wake_at',
  'payload',
  'scope',
  'lambda',
  'warm',
  'run_count',
  'created_at',
  'last_fired_at',
  'locked',
  'loop',
  'expired',
] as const;
type Field = (typeof FIELDS)[number];

function encode(field: Field, value: unknown): string | number | null {
  if (value === undefined || value === null) return null;
  if (field === 'schedule' || field === 'scope') return JSON.stringify(value);
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value as string | number;
}

export class TimersStore {
  constructor(private readonly sql: Sql) {}

  /** Commits a timer and returns it. */
  insert(input: TimerInput): TimerRow {
    const row = { run_count: 0, created_at: Date.now(), last_fired_at: null, expired: false, ...input };
    const { lastId } = this.sql.run(
      `INSERT INTO agt_timers (${FIELDS.join(', ')}) VALUES (${FIELDS.map(() => '?').join(', ')})`,
      ...FIELDS.map((field) => encode(field, row[field])),
    );
    return this.get(lastId)!;
  }

  get(id: number): TimerRow | undefined {
    const row = this.sql.one<RawTimer>('SELECT * FROM agt_timers WHERE id = ?', id);
    return row && decode(row);
  }

  /** Every timer (expired ones too), in id order. */
  list(): TimerRow[] {
    return this.sql.all<RawTimer>('SELECT * FROM agt_timers ORDER BY id').map(decode);
  }

  /** Live timers whose `next_wake_at` is at or before `now`. */
  due(now: number): TimerRow[] {
    return this.sql
      .all<RawTimer>(
        'SELECT * FROM agt_timers WHERE expired = 0 AND next_wake_at IS NOT NULL AND next_wake_at <= ? ORDER BY next_wake_at',
        now,
      )
      .map(decode);
  }

  /** Updates the given fields; false when no such timer. Field names come from a fixed list. */
  update(id: number, patch: Partial<Omit<TimerRow, 'id'>>): boolean {
    const fields = FIELDS.filter((field) => field in patch);
    if (fields.length === 0) return this.get(id) !== undefined;
    const assignments = fields.map((field) => `${field} = ?`).join(', ');
    return (
      this.sql.run(
        `UPDATE agt_timers SET ${assignments} WHERE id = ?`,
        ...fields.map((field) => encode(field, patch[field])),
        id,
      ).changes > 0
    );
  }

  /** Deletes a timer; false when absent. */
  delete(id: number): boolean {
    return this.sql.run('DELETE FROM agt_timers WHERE id = ?', id).changes > 0;
  }

  /** Deletes the timers of one loop except locked ones; returns how many. */
  deleteForLoop(loop: string): number {
    return this.sql.run('DELETE FROM agt_timers WHERE loop = ? AND locked = 0', loop).changes;
  }
}
