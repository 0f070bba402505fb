/**
 * The spend governor (docs/costs.md): every model client the runtime resolves is wrapped here, so every
 * model call of a turn, an inner loop or a compaction goes through {@link SpendGovernor.complete}.
 *
 * Before a call it reserves the call's worst case (an estimate of the prompt's tokens, chars / 4, plus
 * `max_tokens`, priced at the price in force) against every budget that applies: the agent's
 * `turn_tokens`, `day_tokens`, `day_usd`, `month_usd` (its file's, capped by the owner's ceiling) and the
 * daemon's settings `budget`. Check and reservation are one synchronous step (no await between them), so
 * concurrent calls can never together pass a budget. After the call the reservation is dropped and the
 * real usage is written to the agent file's ledger at the price in force.
 */
import { AgtError } from '../../contracts/errors.js';
import type { ModelClient, ModelRequest, ModelResponse } from '../../contracts/model.js';
import { usdOf } from '../../contracts/pricing.js';
import type { Settings } from '../../contracts/settings.js';
import type { EventPayloads, EventType } from '../../contracts/events.js';
import type { AgentConfig } from '../../contracts/agent-config.js';
import type { AgentFile } from '../agents/agent-file.js';
import { machineTimeZone, periodsAt, validTimeZone, type Periods } from './calendar.js';
import { SpendLedger } from './ledger.js';
import { priceFor, type PriceInForce } from './prices.js';

/**
 * The owner-approval steps a budget stop uses, as narrow as it uses them (the runtime's HilStore has
 * them): spend/ is used by runtime/, so it names what it needs instead of importing runtime/ (no folder loop).
 */
export interface BudgetApprovals {
  requestApproval(input: {
    kind: 'budget';
    tool: string;
    args: Record<string, unknown>;
    loop: string;
    turnId: string;
    callId: string;
    signal: AbortSignal;
  }): { task: { id: string }; decision: Promise<{ approved: true; args: Record<string, unknown> } | { approved: false; reason: string | undefined }> };
  completeTask(taskId: string, ok: boolean, text: string): void;
}

/** `max_tokens` assumed when the model settings leave it unset (the providers extension's default). */
export const DEFAULT_MAX_TOKENS = 4096;

export type BudgetName = 'agent.turn_tokens' | 'agent.day_tokens' | 'agent.day_usd' | 'agent.month_usd' | 'daemon.day_usd' | 'daemon.month_usd';

/** What an agent the governor sees offers (a loaded agent). */
export interface GovernedAgent {
  id: string;
  config: AgentConfig;
  file: AgentFile;
}

export interface GovernorDeps {
  settings(): Readonly<Settings>;
  now(): number;
  /** Loaded agents: the daemon budgets sum their ledgers. */
  agents(): GovernedAgent[];
  emit<T extends EventType>(type: T, agentId: string, payload: EventPayloads[T], where: { loop?: string; turnId?: string }): void;
  /** The kind of a provider id for this agent (settings or agent `providers`); undefined when unknown. */
  providerKind(agent: GovernedAgent, providerId: string): string | undefined;
  /** The agent's owner tasks (`ask`): undefined when it has no runtime. */
  hil(agentId: string): BudgetApprovals | undefined;
}

interface Reservation {
  agentId: string;
  turnId: string | null;
  readonly tokens: number;
  readonly usd: number;
}

export interface BudgetState {
  limit: number;
  used: number;
  reserved: number;
  remaining: number;
  resets_at: string | null;
}

export interface Exceeded {
  budget: BudgetName;
  limit: number;
  used: number;
  needed: number;
}

export function budgetExceeded(over: Exceeded, denied?: string): AgtError {
  const why = denied === undefined ? '' : `; the owner denied more${denied ? `: ${denied}` : ''}`;
  return new AgtError('budget_exceeded', `budget ${over.budget} (${over.limit}) would be passed: ${round(over.used)} used, this call needs up to ${round(over.needed)}${why}`, {
    details: { budget: over.budget, limit: over.limit, used: over.used, needed: over.needed },
  });
}

const round = (n: number): number => Math.round(n * 1e6) / 1e6;

/** What a raise is for: the day (`YYYY-MM-DD`; a month budget's raise too: "today's limit"), or the turn. */
const raiseKey = (budget: BudgetName, periods: Periods, turnId: string | null): string => (budget === 'agent.turn_tokens' ? `turn:${turnId}` : periods.day);

/** Prompt tokens, estimated at 4 characters a token (the worst case need not be exact, only fixed). */
export function estimatePromptTokens(request: Pick<ModelRequest, 'system' | 'messages' | 'tools'>): number {
  const chars = request.system.length + JSON.stringify(request.messages).length + JSON.stringify(request.tools).length;
  return Math.ceil(chars / 4);
}

export class SpendGovernor {
  private readonly reservations = new Set<Reservation>();

  constructor(private readonly deps: GovernorDeps) {}

  timeZone(): string {
    const zone = this.deps.settings().timezone;
    return zone && validTimeZone(zone) ? zone : machineTimeZone();
  }

  periods(): Periods {
    return periodsAt(this.deps.now(), this.timeZone());
  }

  ledger(agent: GovernedAgent): SpendLedger {
    return new SpendLedger(agent.file.raw);
  }

  /** The wrapped client: every `complete` reserves, calls, settles and records. */
  wrap(agent: GovernedAgent, providerId: string, client: ModelClient): ModelClient {
    return { complete: (request) => this.complete(agent, providerId, client, request) };
  }

  /** The limits in force for `agent` and the daemon, after owner raises of today. */
  limits(agent: GovernedAgent, periods: Periods, turnId: string | null = null): Array<{ budget: BudgetName; limit: number }> {
    const own = agent.config.budget ?? {};
    const daemon = this.deps.settings().budget ?? {};
    const ledger = this.ledger(agent);
    // A daemon budget's raise (given on any agent's task) applies to every agent.
    const daemonRaised = (budget: BudgetName) => this.deps.agents().reduce((n, a) => n + (a.file.isOpen ? this.ledger(a).raised(budget, periods.day) : 0), 0);
    const out: Array<{ budget: BudgetName; limit: number }> = [];
    const add = (budget: BudgetName, limit: number | undefined, raised: () => number) => {
      if (typeof limit === 'number') out.push({ budget, limit: limit + raised() });
    };
    add('agent.turn_tokens', own.turn_tokens, () => (turnId ? ledger.raised('agent.turn_tokens', raiseKey('agent.turn_tokens', periods, turnId)) : 0));
    add('agent.day_tokens', own.day_tokens, () => ledger.raised('agent.day_tokens', periods.day));
    add('agent.day_usd', own.day_usd, () => ledger.raised('agent.day_usd', periods.day));
    add('agent.month_usd', own.month_usd, () => ledger.raised('agent.month_usd', periods.day));
    add('daemon.day_usd', daemon.day_usd, () => daemonRaised('daemon.day_usd'));
    add('daemon.month_usd', daemon.month_usd, () => daemonRaised('daemon.month_usd'));
    return out;
  }

  /** Used (recorded) and reserved amounts of one budget. */
  private usage(agent: GovernedAgent, budget: BudgetName, periods: Periods, turnId: string | null): { used: number; reserved: number } {
    const mine = [...this.reservations].filter((r) => r.agentId === agent.id);
    const all = [...this.reservations];
    switch (budget) {
      case 'agent.turn_tokens': {
        if (!turnId) return { used: 0, reserved: 0 };
        const spent = this.ledger(agent).ofTurn(turnId);
        return { used: spent.input + spent.output, reserved: mine.filter((r) => r.turnId === turnId).reduce((n, r) => n + r.tokens, 0) };
      }
      case 'agent.day_tokens': {
        const spent = this.ledger(agent).spent(periods.dayStart, periods.dayEnd);
        return { used: spent.input + spent.output, reserved: mine.reduce((n, r) => n + r.tokens, 0) };
      }
      case 'agent.day_usd':
        return { used: this.ledger(agent).spent(periods.dayStart, periods.dayEnd).costUsd, reserved: mine.reduce((n, r) => n + r.usd, 0) };
      case 'agent.month_usd':
        return { used: this.ledger(agent).spent(periods.monthStart, periods.monthEnd).costUsd, reserved: mine.reduce((n, r) => n + r.usd, 0) };
      case 'daemon.day_usd':
      case 'daemon.month_usd': {
        const [from, to] = budget === 'daemon.day_usd' ? [periods.dayStart, periods.dayEnd] : [periods.monthStart, periods.monthEnd];
        const used = this.deps.agents().reduce((n, a) => n + (a.file.isOpen ? this.ledger(a).spent(from, to).costUsd : 0), 0);
        return { used, reserved: all.reduce((n, r) => n + r.usd, 0) };
      }
    }
  }

  /** Every budget of `agent` with its state (the `budget` of `GET /agents/{id}/usage`). */
  state(agent: GovernedAgent): Record<string, BudgetState> {
    const periods = this.periods();
    const out: Record<string, BudgetState> = {};
    for (const { budget, limit } of this.limits(agent, periods)) {
      if (budget === 'agent.turn_tokens') {
        out[budget] = { limit, used: 0, reserved: 0, remaining: limit, resets_at: null };
        continue;
      }
      const { used, reserved } = this.usage(agent, budget, periods, null);
      const resets = budget.endsWith('month_usd') ? periods.monthEnd : periods.dayEnd;
      out[budget] = { limit, used: round(used), reserved: round(reserved), remaining: round(Math.max(0, limit - used - reserved)), resets_at: new Date(resets).toISOString() };
    }
    return out;
  }

  /**
   * Checks every budget and, when all hold, reserves. Synchronous on purpose: no other call can
   * reserve between the check and the reservation. Returns the first budget that would be passed.
   */
  reserve(agent: GovernedAgent, turnId: string | null, need: () => { tokens: number; usd: number }): { reservation: Reservation; budgets: BudgetName[] } | { exceeded: Exceeded } {
    const periods = this.periods();
    const budgets: BudgetName[] = [];
    for (const { budget, limit } of this.limits(agent, periods, turnId)) {
      const needed = budget.endsWith('_usd') ? need().usd : need().tokens;
      const { used, reserved } = this.usage(agent, budget, periods, turnId);
      if (used + reserved + needed > limit + 1e-9) return { exceeded: { budget, limit, used: used + reserved, needed } };
      budgets.push(budget);
    }
    // Read only when another call checks a budget: the estimate is made then, if ever.
    const reservation: Reservation = {
      agentId: agent.id,
      turnId,
      get tokens() {
        return need().tokens;
      },
      get usd() {
        return need().usd;
      },
    };
    this.reservations.add(reservation);
    return { reservation, budgets };
  }

  private async complete(agent: GovernedAgent, providerId: string, client: ModelClient, request: ModelRequest): Promise<ModelResponse> {
    const kind = this.deps.providerKind(agent, providerId);
    const price = priceFor(this.deps.settings(), providerId, kind, request.model.model_id);
    // What the call may need, estimated the first time a budget asks (with no budget set, never): the
    // estimate serializes the whole prompt, ~2% of a turn's CPU with a long context (issue 31).
    let needed: { tokens: number; usd: number } | undefined;
    const need = () => {
      if (needed) return needed;
      const prompt = estimatePromptTokens(request);
      const maxTokens = request.model.max_tokens ?? DEFAULT_MAX_TOKENS;
      return (needed = { tokens: prompt + maxTokens, usd: price ? usdOf({ input: prompt, output: maxTokens }, price.price) : 0 });
    };
    const turnId = request.turnId ?? null;
    const where = { ...(request.loop ? { loop: request.loop } : {}), ...(turnId ? { turnId } : {}) };
    let outcome = this.reserve(agent, turnId, need);
    while ('exceeded' in outcome) {
      await this.askOrFail(agent, request, outcome.exceeded, where);
      outcome = this.reserve(agent, turnId, need);
    }
    if (outcome.budgets.length > 0) {
      this.deps.emit('budget.reserved', agent.id, { budget_names: outcome.budgets, tokens: need().tokens, usd: price ? need().usd : null, purpose: request.purpose ?? 'turn' }, where);
    }
    try {
      const response = await client.complete(request);
      // The cost every later reader sees (loop row, llm.completed) is the one at the price in force.
      return { ...response, cost: this.settle(agent, request, response, price) };
    } finally {
      this.reservations.delete(outcome.reservation);
    }
  }

  /**
   * A call would pass `over`: with `on_exceeded: fail` (or outside a turn: compaction has nobody to
   * wait) it throws `budget_exceeded`; with `ask` (the default) it waits on an owner task of kind
   * `budget` and returns once the owner raised the limit (approve; `amount`, default what this call
   * lacks), or throws when the owner denies. The task's call id is the turn's next ledger row number, so
   * a turn resumed after a restart takes up the same task (recovery.ts).
   */
  private async askOrFail(agent: GovernedAgent, request: ModelRequest, over: Exceeded, where: { loop?: string; turnId?: string }): Promise<void> {
    const turnId = request.turnId ?? null;
    const hil = this.deps.hil(agent.id);
    if ((agent.config.budget?.on_exceeded ?? 'ask') === 'fail' || !turnId || !hil) {
      this.deps.emit('budget.exceeded', agent.id, { ...over, action: 'fail', task_id: null }, where);
      throw budgetExceeded(over);
    }
    const shortfall = round(over.used + over.needed - over.limit);
    const question = `${over.budget} ${over.limit} reached (${round(over.used)} used): allow ${shortfall} more?`;
    const { task, decision } = hil.requestApproval({
      kind: 'budget',
      tool: 'budget',
      args: { budget: over.budget, limit: over.limit, used: round(over.used), needed: round(over.needed), shortfall, question },
      loop: request.loop ?? 'main',
      turnId,
      callId: `budget:call-${this.ledger(agent).ofTurn(turnId).calls + 1}`,
      signal: request.signal,
    });
    this.deps.emit('budget.exceeded', agent.id, { ...over, action: 'ask', task_id: task.id }, where);
    const answer = await decision;
    if (!answer.approved) {
      throw budgetExceeded(over, answer.reason ?? '');
    }
    const asked = answer.args.amount;
    const amount = typeof asked === 'number' && asked > 0 ? asked : shortfall;
    const periods = this.periods();
    const key = raiseKey(over.budget, periods, turnId);
    this.ledger(agent).raise(over.budget, key, amount, task.id, this.deps.now());
    this.deps.emit('budget.raised', agent.id, { budget: over.budget, amount, day: key, task_id: task.id }, where);
    hil.completeTask(task.id, true, `${over.budget} raised by ${amount} for ${key}`);
  }

  /** Writes the call's real usage and cost (at the price in force; the provider's own figure when unpriced). */
  private settle(agent: GovernedAgent, request: ModelRequest, response: ModelResponse, price: PriceInForce | null): number | null {
    const usage = response.usage ?? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
    const reported = typeof response.cost === 'number' ? response.cost : null;
    const costUsd = price?.source === 'settings' ? usdOf(usage, price.price) : (reported ?? (price ? usdOf(usage, price.price) : null));
    if (!agent.file.isOpen) return costUsd;
    this.ledger(agent).record({
      at: this.deps.now(),
      loop: request.loop ?? 'main',
      turnId: request.turnId ?? null,
      purpose: request.purpose ?? 'turn',
      provider: response.provider ?? request.model.provider,
      model: response.model ?? request.model.model_id,
      input: usage.input ?? 0,
      output: usage.output ?? 0,
      cacheRead: usage.cacheRead ?? 0,
      cacheWrite: usage.cacheWrite ?? 0,
      costUsd,
    });
    return costUsd;
  }
}
