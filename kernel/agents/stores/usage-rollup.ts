/**
 * The usage rollup of `GET /agents/{id}/usage`, computed from `agt_loop` alone:
 * `input` already includes cache read and cache write (that is how `usage_input` is stored), `total` is
 * input + output, `model_invoke` rows are excluded, and a provider call that wrote no loop row cannot
 * appear at all.
 */
import type { Sql } from '../sql.js';

export interface UsageTotals {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  total: number;
}

export interface UsageRollup {
  source: 'agt_loop';
  note: string;
  loopRows: number;
  usageRows: number;
  totals: UsageTotals;
  byModel: Array<UsageTotals & { model: string; rows: number }>;
}

export const USAGE_NOTE =
  'Summed from agt_loop rows that carry usage (all loops). input includes cacheRead and cacheWrite; total = input + output. ' +
  'model_invoke rows and provider calls that created no loop row are not counted.';

interface Sums {
  input: number | null;
  output: number | null;
  cache_read: number | null;
  cache_write: number | null;
  rows: number;
}

const SUMS =
  'sum(usage_input) AS input, sum(coalesce(usage_output, 0)) AS output, sum(coalesce(usage_cache_read, 0)) AS cache_read, sum(coalesce(usage_cache_write, 0)) AS cache_write, count(*) AS rows';
const COUNTED = "usage_input IS NOT NULL AND kind <> 'model_invoke'";

const totals = (sums: Sums): UsageTotals => {
  const input = sums.input ?? 0;
  const output = sums.output ?? 0;
  return { input, output, cacheRead: sums.cache_read ?? 0, cacheWrite: sums.cache_write ?? 0, total: input + output };
};

export function usageRollup(sql: Sql): UsageRollup {
  const loopRows = sql.one<{ n: number }>('SELECT count(*) AS n FROM agt_loop')!.n;
  const all = sql.one<Sums>(`SELECT ${SUMS} FROM agt_loop WHERE ${COUNTED}`)!;
  const byModel = sql
    .all<Sums & { model: string }>(
      `SELECT coalesce(model, 'unknown') AS model, ${SUMS} FROM agt_loop WHERE ${COUNTED} GROUP BY coalesce(model, 'unknown') ORDER BY model`,
    )
    .map((row) => ({ model: row.model, rows: row.rows, ...totals(row) }));
  return { source: 'agt_loop', note: USAGE_NOTE, loopRows, usageRows: all.rows, totals: totals(all), byModel };
}
