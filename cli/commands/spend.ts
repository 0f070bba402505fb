/** `agt usage` (tokens and cost, daemon-wide or one agent's) and `agt budget` (show or set an agent's budget). */
import { seg } from '../client.js';
import type { Ctx } from '../context.js';
import { CliError, EXIT } from '../errors.js';

export interface Totals {
  input: number;
  output: number;
  cached: number;
  calls: number;
  cost_usd: number | null;
  unpriced_calls: number;
}

export interface Budget {
  limits: Record<string, number>;
  used: Record<string, number>;
  remaining: Record<string, number>;
  resets_at: Record<string, string | null>;
}

/** `GET /agents/{id}/usage`, the fields read here. */
export interface AgentUsage {
  agentId: string;
  spend: Totals;
  budget: Budget;
}

/** `GET /usage`. */
export interface UsageReport {
  from: string;
  to: string;
  timezone: string;
  totals: Totals;
  groups: Array<Totals & { key: string }>;
  warnings: string[];
}

const usd = (value: number | null) => (value === null ? '?' : `$${value.toFixed(4)}`);
const row = (key: string, t: Totals) => [
  key,
  String(t.calls),
  String(t.input),
  String(t.cached),
  String(t.output),
  usd(t.cost_usd),
];
const HEADERS = ['', 'CALLS', 'INPUT', 'CACHED', 'OUTPUT', 'COST'];

function printBudget(ctx: Ctx, budget: Budget): void {
  const names = Object.keys(budget.limits);
  if (names.length === 0) return ctx.out.line(ctx.out.dim('no budget applies'));
  ctx.out.table(
    ['BUDGET', 'LIMIT', 'USED', 'REMAINING', 'RESETS'],
    names.map((name) => [
      name,
      String(budget.limits[name]),
      String(budget.used[name]),
      String(budget.remaining[name]),
      budget.resets_at[name] ?? 'each turn',
    ]),
  );
}

/** Loaded agents' names by id (several agents may share a name: then the id is added). */
async function agentNames(ctx: Ctx): Promise<Map<string, string>> {
  const agents = await ctx.client.get<Array<{ id: string; name: string }>>('/agents');
  const shared = (name: string) => agents.filter((agent) => agent.name === name).length > 1;
  return new Map(agents.map((agent) => [agent.id, shared(agent.name) ? `${agent.name} (${agent.id})` : agent.name]));
}

export async function usage(
  ctx: Ctx,
  options: { agent?: string; by?: string; from?: string; to?: string },
): Promise<void> {
  if (options.by && !['model', 'day', 'agent'].includes(options.by))
    throw new CliError('--by takes model, day or agent', EXIT.usage);
  if (options.agent) {
    const view = await ctx.client.get<AgentUsage>(`/agents/${seg(options.agent)}/usage`);
    const names = await agentNames(ctx);
    return ctx.out.result(view, () => {
      ctx.out.table(HEADERS, [row(names.get(view.agentId) ?? view.agentId, view.spend)]);
      ctx.out.line();
      printBudget(ctx, view.budget);
    });
  }
  const query = new URLSearchParams();
  if (options.from) query.set('from', options.from);
  if (options.to) query.set('to', options.to);
  query.set('groupBy', options.by ?? 'agent');
  const view = await ctx.client.get<UsageReport>(`/usage?${query}`);
  // Grouped by agent, the keys are ids: a loaded agent shows as its name (ids of agents not loaded stay).
  const names = (options.by ?? 'agent') === 'agent' ? await agentNames(ctx) : new Map<string, string>();
  ctx.out.result(view, () => {
    ctx.out.line(ctx.out.dim(`${view.from} to ${view.to} (${view.timezone})`));
    ctx.out.table(HEADERS, [...view.groups.map((g) => row(names.get(g.key) ?? g.key, g)), row('total', view.totals)]);
    for (const warning of view.warnings) ctx.out.line(ctx.out.yellow(warning));
  });
}

const FIELDS = {
  turnTokens: 'turn_tokens',
  dayTokens: 'day_tokens',
  dayUsd: 'day_usd',
  monthUsd: 'month_usd',
} as const;

/** Shows the agent's budgets, or sets fields of its config `budget` (a merge patch; `none` removes one). */
export async function budget(
  ctx: Ctx,
  agent: string,
  options: Partial<Record<keyof typeof FIELDS, string>> & { onExceeded?: string },
): Promise<void> {
  const patch: Record<string, unknown> = {};
  for (const [option, field] of Object.entries(FIELDS)) {
    const raw = options[option as keyof typeof FIELDS];
    if (raw === undefined) continue;
    if (raw === 'none') patch[field] = null;
    else if (Number.isFinite(Number(raw)) && Number(raw) >= 0) patch[field] = Number(raw);
    else
      throw new CliError(
        `--${option.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} takes a number or none`,
        EXIT.usage,
      );
  }
  if (options.onExceeded !== undefined) {
    if (options.onExceeded !== 'ask' && options.onExceeded !== 'fail')
      throw new CliError('--on-exceeded takes ask or fail', EXIT.usage);
    patch.on_exceeded = options.onExceeded;
  }
  if (Object.keys(patch).length > 0)
    await ctx.client.request('PATCH', `/agents/${seg(agent)}/config`, { budget: patch });
  const view = await ctx.client.get<AgentUsage>(`/agents/${seg(agent)}/usage`);
  ctx.out.result(view.budget, () => printBudget(ctx, view.budget));
}
