/**
 * The spend governor (docs/costs.md): every model client the runtime resolves is wrapped here, so every
 * model call of a turn, an inner loop or a compaction goes through {@link SpendGovernor.complete}.
 *
 * Before a call it reserves the call's worst case against every budget that applies: the agent's
 * `turn_tokens`, `day_tokens`, `day_usd`, `month_usd` (its file's, capped by the owner's ceiling) and the
 * daemon's settings `budget`. The worst case is the prompt counted with the model family's tokenizer
 * (token-count.ts; 3 characters a token without one), times what the provider reported over the count on
 * this agent's latest call of the model (at least 1), plus `max_tokens`, priced at the price in force.
 * Check and reservation are one synchronous step (no await between them), so concurrent calls can never
 * together pass a budget on their reservations; and until a call of the model has settled (its factor is
 * unknown), a budgeted agent has one call of it in flight, so an estimate the provider contradicts passes
 * a budget by at most that one call. After the call the reservation is dropped and the real usage is
 * written to the agent file's ledger at the price in force.
 */
import {
  AgtError,
  type EmbeddingRequest,
  type EmbeddingResponse,
  type ModelClient,
  type ModelRequest,
  type ModelResponse,
  usdOf,
  type Settings,
  type EventPayloads,
  type EventType,
  type AgentConfig,
} from '@agt/contracts';
import type { AgentFile } from '../agents/agent-file.js';
import { machineTimeZone, periodsAt, validTimeZone, type Periods } from './calendar.js';
import { SpendLedger } from './ledger.js';
import { priceFor, type PriceInForce } from './prices.js';
import { fallbackTokens, promptPieces, TokenCounter, tokenFamily } from './token-count.js';

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
  }): {
    task: { id: string };
    decision: Promise<
      { approved: true; args: Record<string, unknown> } | { approved: false; reason: string | undefined }
    >;
  };
  completeTask(taskId: string, ok: boolean, text: string): void;
}

/** `max_tokens` assumed when the model settings leave it unset (the providers extension's default). */
export const DEFAULT_MAX_TOKENS = 4096;

export type BudgetName =
  | 'agent.turn_tokens'
  | 'agent.day_tokens'
  | 'agent.day_usd'
  | 'agent.month_usd'
  | 'daemon.day_usd'
  | 'daemon.month_usd';

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
  emit<T extends EventType>(
    type: T,
    agentId: string,
    payload: EventPayloads[T],
    where: { loop?: string; turnId?: string },
  ): void;
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
  return new AgtError(
    'budget_exceeded',
    `budget ${over.budget} (${over.limit}) would be passed: ${round(over.used)} used, this call needs up to ${round(over.needed)}${why}`,
    {
      details: { budget: over.budget, limit: over.limit, used: over.used, needed: over.needed },
    },
  );
}

const round = (n: number): number => Math.round(n * 1e6) / 1e6;

/** What a raise is for: the day (`YYYY-MM-DD`; a month budget's raise too: "today's limit"), or the turn. */
const raiseKey = (budget: BudgetName, periods: Periods, turnId: string | null): string =>
  budget === 'agent.turn_tokens' ? `turn:${turnId}` : periods.day;

/** Whether any budget applies to `agent`'s calls (the prompt is counted only then). */
function budgeted(agent: GovernedAgent, settings: Readonly<Settings>): boolean {
  const own = agent.config.budget ?? {};
  const daemon = settings.budget ?? {};
  return [own.turn_tokens, own.day_tokens, own.day_usd, own.month_usd, daemon.day_usd, daemon.month_usd].some(
    (limit) => typeof limit === 'number',
  );
}

/** Models per agent whose factor is remembered (an agent may name any model id; the oldest is forgotten). */
const MAX_MODELS_PER_AGENT = 64;

/** Resolves when `settled` does, or rejects with the abort reason when `signal` fires first. */
function untilSettledOrAborted(settled: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    void settled.then(() => {
      signal.removeEventListener('abort', abort);
      resolve();
    });
  });
}

export class SpendGovernor {
  private readonly reservations = new Set<Reservation>();
  /** Prompt counts, on a worker thread. */
  readonly tokens = new TokenCounter();
  /**
   * Per agent and `provider/model`: the input tokens the provider reported over the count, on the latest
   * call that settled (at least 1). Reservations in flight read it when counted, so one that settles with
   * more than its count raises what the others hold.
   */
  private readonly factors = new WeakMap<GovernedAgent, Map<string, number>>();
  /** Per agent and `provider/model`: the call in flight while the factor is unknown, and its end. */
  private readonly probes = new WeakMap<GovernedAgent, Map<string, Promise<void>>>();

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

  /** The wrapped client: every `complete` (and `embed`) reserves, calls, settles and records. */
  wrap(agent: GovernedAgent, providerId: string, client: ModelClient): ModelClient {
    const embed = client.embed?.bind(client);
    return {
      complete: (request) => this.complete(agent, providerId, client, request),
      ...(embed ? { embed: (request: EmbeddingRequest) => this.embed(agent, providerId, embed, request) } : {}),
    };
  }

  /**
   * An embedding call under the same budgets as model calls: its worst case is its input (chars / 4,
   * no output), and its real input tokens go to the ledger with purpose `memory_embedding`. Outside a
   * turn (background embedding, the owner's routes) a budget it would pass fails it: nobody waits on an ask.
   */
  private async embed(
    agent: GovernedAgent,
    providerId: string,
    embed: NonNullable<ModelClient['embed']>,
    request: EmbeddingRequest,
  ): Promise<EmbeddingResponse> {
    const kind = this.deps.providerKind(agent, providerId);
    const price = priceFor(this.deps.settings(), providerId, kind, request.model);
    const tokens = Math.ceil(request.input.reduce((n, text) => n + text.length, 0) / 4);
    const need = () => ({ tokens, usd: price ? usdOf({ input: tokens, output: 0 }, price.price) : 0 });
    const turnId = request.turnId ?? null;
    const where = { ...(request.loop ? { loop: request.loop } : {}), ...(turnId ? { turnId } : {}) };
    const outcome = this.reserve(agent, turnId, need);
    if ('exceeded' in outcome) {
      this.deps.emit('budget.exceeded', agent.id, { ...outcome.exceeded, action: 'fail', task_id: null }, where);
      throw budgetExceeded(outcome.exceeded);
    }
    try {
      const response = await embed(request);
      if (agent.file.isOpen) {
        const input = response.inputTokens || tokens;
        this.ledger(agent).record({
          at: this.deps.now(),
          loop: request.loop ?? 'main',
          turnId,
          purpose: 'memory_embedding',
          provider: providerId,
          model: response.model || request.model,
          input,
          output: 0,
          cacheRead: 0,
          cacheWrite: 0,
          costUsd: price ? usdOf({ input, output: 0 }, price.price) : null,
        });
      }
      return response;
    } finally {
      this.reservations.delete(outcome.reservation);
    }
  }

  /** The limits in force for `agent` and the daemon, after owner raises of today. */
  limits(
    agent: GovernedAgent,
    periods: Periods,
    turnId: string | null = null,
  ): Array<{ budget: BudgetName; limit: number }> {
    const own = agent.config.budget ?? {};
    const daemon = this.deps.settings().budget ?? {};
    const ledger = this.ledger(agent);
    // A daemon budget's raise (given on any agent's task) applies to every agent.
    const daemonRaised = (budget: BudgetName) =>
      this.deps.agents().reduce((n, a) => n + (a.file.isOpen ? this.ledger(a).raised(budget, periods.day) : 0), 0);
    const out: Array<{ budget: BudgetName; limit: number }> = [];
    const add = (budget: BudgetName, limit: number | undefined, raised: () => number) => {
      if (typeof limit === 'number') out.push({ budget, limit: limit + raised() });
    };
    add('agent.turn_tokens', own.turn_tokens, () =>
      turnId ? ledger.raised('agent.turn_tokens', raiseKey('agent.turn_tokens', periods, turnId)) : 0,
    );
    add('agent.day_tokens', own.day_tokens, () => ledger.raised('agent.day_tokens', periods.day));
    add('agent.day_usd', own.day_usd, () => ledger.raised('agent.day_usd', periods.day));
    add('agent.month_usd', own.month_usd, () => ledger.raised('agent.month_usd', periods.day));
    add('daemon.day_usd', daemon.day_usd, () => daemonRaised('daemon.day_usd'));
    add('daemon.month_usd', daemon.month_usd, () => daemonRaised('daemon.month_usd'));
    return out;
  }

  /** Used (recorded) and reserved amounts of one budget. */
  private usage(
    agent: GovernedAgent,
    budget: BudgetName,
    periods: Periods,
    turnId: string | null,
  ): { used: number; reserved: number } {
    const mine = [...this.reservations].filter((r) => r.agentId === agent.id);
    const all = [...this.reservations];
    switch (budget) {
      case 'agent.turn_tokens': {
        if (!turnId) return { used: 0, reserved: 0 };
        const spent = this.ledger(agent).ofTurn(turnId);
        return {
          used: spent.input + spent.output,
          reserved: mine.filter((r) => r.turnId === turnId).reduce((n, r) => n + r.tokens, 0),
        };
      }
      case 'agent.day_tokens': {
        const spent = this.ledger(agent).spent(periods.dayStart, periods.dayEnd);
        return { used: spent.input + spent.output, reserved: mine.reduce((n, r) => n + r.tokens, 0) };
      }
      case 'agent.day_usd':
        return {
          used: this.ledger(agent).spent(periods.dayStart, periods.dayEnd).costUsd,
          reserved: mine.reduce((n, r) => n + r.usd, 0),
        };
      case 'agent.month_usd':
        return {
          used: this.ledger(agent).spent(periods.monthStart, periods.monthEnd).costUsd,
          reserved: mine.reduce((n, r) => n + r.usd, 0),
        };
      case 'daemon.day_usd':
      case 'daemon.month_usd': {
        const [from, to] =
          budget === 'daemon.day_usd' ? [periods.dayStart, periods.dayEnd] : [periods.monthStart, periods.monthEnd];
        const used = this.deps
          .agents()
          .reduce((n, a) => n + (a.file.isOpen ? this.ledger(a).spent(from, to).costUsd : 0), 0);
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
      out[budget] = {
        limit,
        used: round(used),
        reserved: round(reserved),
        remaining: round(Math.max(0, limit - used - reserved)),
        resets_at: new Date(resets).toISOString(),
      };
    }
    return out;
  }

  /**
   * Checks every budget and, when all hold, reserves. Synchronous on purpose: no other call can
   * reserve between the check and the reservation. Returns the first budget that would be passed.
   */
  reserve(
    agent: GovernedAgent,
    turnId: string | null,
    need: () => { tokens: number; usd: number },
  ): { reservation: Reservation; budgets: BudgetName[] } | { exceeded: Exceeded } {
    const periods = this.periods();
    const budgets: BudgetName[] = [];
    for (const { budget, limit } of this.limits(agent, periods, turnId)) {
      const needed = budget.endsWith('_usd') ? need().usd : need().tokens;
      const { used, reserved } = this.usage(agent, budget, periods, turnId);
      if (used + reserved + needed > limit + 1e-9)
        return { exceeded: { budget, limit, used: used + reserved, needed } };
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

  private async complete(
    agent: GovernedAgent,
    providerId: string,
    client: ModelClient,
    request: ModelRequest,
  ): Promise<ModelResponse> {
    const kind = this.deps.providerKind(agent, providerId);
    const price = priceFor(this.deps.settings(), providerId, kind, request.model.model_id);
    const model = `${providerId}/${request.model.model_id}`;
    const maxTokens = request.model.max_tokens ?? DEFAULT_MAX_TOKENS;
    // Counted (a worker round trip) only when a budget applies; a budget set meanwhile gets the
    // 3-characters estimate, made when first asked.
    let prompt = budgeted(agent, this.deps.settings())
      ? await this.tokens.promptTokens(tokenFamily(kind, request.model.model_id), request)
      : undefined;
    const need = () => {
      prompt ??= fallbackTokens(promptPieces(request).pieces);
      const input = Math.ceil(prompt * (this.factors.get(agent)?.get(model) ?? 1));
      return { tokens: input + maxTokens, usd: price ? usdOf({ input, output: maxTokens }, price.price) : 0 };
    };
    const turnId = request.turnId ?? null;
    const where = { ...(request.loop ? { loop: request.loop } : {}), ...(turnId ? { turnId } : {}) };
    let outcome: { reservation: Reservation; budgets: BudgetName[] };
    let probe: (() => void) | undefined;
    for (;;) {
      let reserved = this.reserve(agent, turnId, need);
      while ('exceeded' in reserved) {
        await this.askOrFail(agent, request, reserved.exceeded, where);
        reserved = this.reserve(agent, turnId, need);
      }
      outcome = reserved;
      if (outcome.budgets.length === 0 || this.factors.get(agent)?.has(model)) break;
      // The factor is unknown: this call goes alone and tells it; others of the model wait for it.
      const probes = this.probes.get(agent) ?? new Map<string, Promise<void>>();
      this.probes.set(agent, probes);
      const running = probes.get(model);
      if (!running) {
        probes.set(model, new Promise<void>((resolve) => (probe = resolve)));
        break;
      }
      this.reservations.delete(outcome.reservation);
      await untilSettledOrAborted(running, request.signal);
    }
    if (outcome.budgets.length > 0) {
      this.deps.emit(
        'budget.reserved',
        agent.id,
        {
          budget_names: outcome.budgets,
          tokens: need().tokens,
          usd: price ? need().usd : null,
          purpose: request.purpose ?? 'turn',
        },
        where,
      );
    }
    try {
      const response = await client.complete(request);
      if (prompt !== undefined && prompt > 0 && typeof response.usage?.input === 'number')
        this.calibrate(agent, model, response.usage.input / prompt);
      // The cost every later reader sees (loop row, llm.completed) is the one at the price in force.
      return { ...response, cost: this.settle(agent, request, response, price) };
    } finally {
      this.reservations.delete(outcome.reservation);
      if (probe) {
        this.probes.get(agent)?.delete(model);
        probe();
      }
    }
  }

  /** Remembers what the provider reported over the count (at least 1) for the agent's next calls of `model`. */
  private calibrate(agent: GovernedAgent, model: string, ratio: number): void {
    if (!Number.isFinite(ratio)) return;
    const factors = this.factors.get(agent) ?? new Map<string, number>();
    this.factors.set(agent, factors);
    factors.delete(model);
    factors.set(model, Math.max(1, ratio));
    if (factors.size > MAX_MODELS_PER_AGENT) factors.delete(factors.keys().next().value!);
  }

  /**
   * A call would pass `over`: with `on_exceeded: fail` (or outside a turn: compaction has nobody to
   * wait) it throws `budget_exceeded`; with `ask` (the default) it waits on an owner task of kind
   * `budget` and returns once the owner raised the limit (approve; `amount`, default what this call
   * lacks), or throws when the owner denies. The task's call id is the turn's next ledger row number, so
   * a turn resumed after a restart takes up the same task (recovery.ts).
   */
  private async askOrFail(
    agent: GovernedAgent,
    request: ModelRequest,
    over: Exceeded,
    where: { loop?: string; turnId?: string },
  ): Promise<void> {
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
      args: {
        budget: over.budget,
        limit: over.limit,
        used: round(over.used),
        needed: round(over.needed),
        shortfall,
        question,
      },
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
  private settle(
    agent: GovernedAgent,
    request: ModelRequest,
    response: ModelResponse,
    price: PriceInForce | null,
  ): number | null {
    const usage = response.usage ?? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
    const reported = typeof response.cost === 'number' ? response.cost : null;
    const costUsd =
      price?.source === 'settings'
        ? usdOf(usage, price.price)
        : (reported ?? (price ? usdOf(usage, price.price) : null));
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
