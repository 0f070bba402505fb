/**
 * The spend ledger of one agent file (`agt_usage`, `agt_budget_raises`, schema version 7): one row per
 * model call, written by the governor after the call with the tokens the provider reported and the
 * cost at the price in force then. Compaction never deletes these rows (it deletes `agt_loop` rows).
 */
import type { Sql } from '../agents/sql.js';

export interface LedgerRow {
  at: number;
  loop: string;
  turnId: string | null;
  purpose: string;
  provider: string;
  model: string;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  costUsd: number | null;
}

export interface Spent {
  input: number;
  output: number;
  cached: number;
  calls: number;
  /** Priced calls only. */
  costUsd: number;
  /** Calls whose model had no price (their cost is unknown, counted as 0 in `costUsd`). */
  unpriced: number;
}

const SUMS =
  'coalesce(sum(input), 0) AS input, coalesce(sum(output), 0) AS output, coalesce(sum(cache_read), 0) AS cached, count(*) AS calls, coalesce(sum(cost_usd), 0) AS costUsd, coalesce(sum(cost_usd IS NULL), 0) AS unpriced';

export class SpendLedger {
  constructor(private readonly sql: Sql) {}

  record(row: LedgerRow): void {
    this.sql.run(
      'INSERT INTO agt_usage (at, loop, turn_id, purpose, provider, model, input, output, cache_read, cache_write, cost_usd) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      row.at,
      row.loop,
      row.turnId,
      row.purpose,
      row.provider,
      row.model,
      row.input,
      row.output,
      row.cacheRead,
      row.cacheWrite,
      row.costUsd,
    );
  }

  /** Totals of calls in [from, to). */
  spent(from: number, to: number): Spent {
    return this.sql.one<Spent>(`SELECT ${SUMS} FROM agt_usage WHERE at >= ? AND at < ?`, from, to)!;
  }

  /** Totals of one turn (the `turn_tokens` budget). */
  ofTurn(turnId: string): Spent {
    return this.sql.one<Spent>(`SELECT ${SUMS} FROM agt_usage WHERE turn_id = ?`, turnId)!;
  }

  /** Rows in [from, to), oldest first (the daemon-wide groupings of `GET /usage`). */
  rows(from: number, to: number): LedgerRow[] {
    return this.sql.all<LedgerRow>(
      'SELECT at, loop, turn_id AS turnId, purpose, provider, model, input, output, cache_read AS cacheRead, cache_write AS cacheWrite, cost_usd AS costUsd FROM agt_usage WHERE at >= ? AND at < ? ORDER BY id',
      from,
      to,
    );
  }

  /** What the owner added to `budget` for `day`. */
  raised(budget: string, day: string): number {
    return this.sql.one<{ n: number }>(
      'SELECT coalesce(sum(amount), 0) AS n FROM agt_budget_raises WHERE budget = ? AND day = ?',
      budget,
      day,
    )!.n;
  }

  raise(budget: string, day: string, amount: number, taskId: string | null, at: number): void {
    this.sql.run(
      'INSERT INTO agt_budget_raises (budget, day, amount, task_id, at) VALUES (?, ?, ?, ?, ?)',
      budget,
      day,
      amount,
      taskId,
      at,
    );
  }
}
