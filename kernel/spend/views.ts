/**
 * The spend views: an agent's cost and budget state (`GET /agents/{id}/usage`) and the daemon-wide
 * totals and groups of `GET /usage`, both read from the agents' ledgers (`agt_usage`).
 */
import { dayOf } from './calendar.js';
import type { GovernedAgent, SpendGovernor } from './governor.js';
import type { LedgerRow } from './ledger.js';

export interface SpendTotals {
  input: number;
  output: number;
  cached: number;
  calls: number;
  /** USD of the priced calls; null when no call in the range had a price. */
  cost_usd: number | null;
  unpriced_calls: number;
}

export interface AgentBudgetView {
  limits: Record<string, number>;
  used: Record<string, number>;
  remaining: Record<string, number>;
  resets_at: Record<string, string | null>;
}

const round = (n: number): number => Math.round(n * 1e8) / 1e8;

function total(rows: LedgerRow[]): SpendTotals {
  const out = { input: 0, output: 0, cached: 0, calls: 0, cost: 0, priced: 0, unpriced_calls: 0 };
  for (const row of rows) {
    out.input += row.input;
    out.output += row.output;
    out.cached += row.cacheRead;
    out.calls++;
    if (row.costUsd === null) out.unpriced_calls++;
    else {
      out.priced++;
      out.cost += row.costUsd;
    }
  }
  return {
    input: out.input,
    output: out.output,
    cached: out.cached,
    calls: out.calls,
    cost_usd: out.priced > 0 || out.calls === 0 ? round(out.cost) : null,
    unpriced_calls: out.unpriced_calls,
  };
}

/** The agent's all-time ledger totals and its budgets now. */
export function agentSpend(
  governor: SpendGovernor,
  agent: GovernedAgent,
): { spend: SpendTotals; cost_usd: number | null; budget: AgentBudgetView } {
  const spend = total(governor.ledger(agent).rows(0, Number.MAX_SAFE_INTEGER));
  const budget: AgentBudgetView = { limits: {}, used: {}, remaining: {}, resets_at: {} };
  for (const [name, state] of Object.entries(governor.state(agent))) {
    budget.limits[name] = state.limit;
    budget.used[name] = state.used;
    budget.remaining[name] = state.remaining;
    budget.resets_at[name] = state.resets_at;
  }
  return { spend, cost_usd: spend.cost_usd, budget };
}

export type GroupBy = 'agent' | 'model' | 'day';

export interface DaemonUsage {
  from: string;
  to: string;
  timezone: string;
  totals: SpendTotals;
  groups: Array<SpendTotals & { key: string }>;
  warnings: string[];
}

/** Totals and groups over [from, to) across the loaded agents. */
export function daemonUsage(
  governor: SpendGovernor,
  agents: GovernedAgent[],
  from: number,
  to: number,
  groupBy: GroupBy | undefined,
): DaemonUsage {
  const zone = governor.timeZone();
  const all: Array<LedgerRow & { agentId: string }> = [];
  for (const agent of agents) {
    if (!agent.file.isOpen) continue;
    for (const row of governor.ledger(agent).rows(from, to)) all.push({ ...row, agentId: agent.id });
  }
  const groups = new Map<string, LedgerRow[]>();
  if (groupBy) {
    for (const row of all) {
      const key =
        groupBy === 'agent' ? row.agentId : groupBy === 'model' ? `${row.provider}/${row.model}` : dayOf(row.at, zone);
      const list = groups.get(key) ?? [];
      list.push(row);
      groups.set(key, list);
    }
  }
  const unpriced = [
    ...new Set(all.filter((row) => row.costUsd === null).map((row) => `${row.provider}/${row.model}`)),
  ].sort();
  return {
    from: new Date(from).toISOString(),
    to: new Date(to).toISOString(),
    timezone: zone,
    totals: total(all),
    groups: [...groups.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, rows]) => ({ key, ...total(rows) })),
    warnings: unpriced.map(
      (model) => `no price for ${model}: its calls count tokens, cost_usd null (settings pricing)`,
    ),
  };
}
