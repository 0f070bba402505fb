/**
 * The owner's ceiling: an agent file's own `security` and `limits` can only narrow what
 * the owner's settings allow (`agentCeiling`, per agent `agentCeilings`). This is the one place the
 * effective config is computed: `LoadedAgent.config` (what the runtime, the tools, the command runner and
 * every extension read) is the file's config passed through {@link capConfig}; the review and the load
 * answer list the same caps. Defaults are safe: no fetch host beyond the public internet, no unsandboxed
 * commands, no compute network, and the maxima in {@link DEFAULT_LIMIT_MAXIMA}.
 *
 * What is capped: `security.fetch_allow_hosts` (entries the owner's list does not cover are dropped),
 * `security.allow_unsandboxed_commands` and `security.compute_network` (true only when the owner allows
 * it), and each numeric `limits` field of {@link CAPPED_LIMITS} (lowered to the owner's maximum). The
 * compute tier `host` has its own owner consent (settings `computeHostAgents`, the compute extension).
 */
import { type AgentConfig, CAPPED_LIMITS, type AgentCeiling, type Settings } from '@agt/contracts';
import type { CappedField } from '../http-api/agents-api.js';
import { parseAllowEntry } from './fetch-policy.js';
import {
  COMMAND_DEFAULT_TIMEOUT_MS,
  DEFAULT_LIMITS,
  LAMBDA_DEFAULT_TIMEOUT_MS,
  SQL_DEFAULT_TIMEOUT_MS,
} from './limit-defaults.js';

type CappedLimit = (typeof CAPPED_LIMITS)[number];

/** The largest value of each `limits` field when the owner's settings do not say. */
export const DEFAULT_LIMIT_MAXIMA: Readonly<Record<CappedLimit, number>> = {
  sql_timeout_ms: 10_000,
  tool_timeout_ms: 600_000,
  turn_timeout_ms: 3_600_000,
  lambda_timeout_ms: 60_000,
  command_timeout_ms: 600_000,
  max_llm_calls_per_turn: 200,
  max_tool_calls_per_turn: 1_000,
};

/**
 * What the runtime uses when a file gives no valid value (`limitOf`'s fallbacks; none: no limit at all,
 * as `turn_timeout_ms`). A file that leaves a limit out, or gives a string, zero or a negative number, must
 * not get more than the owner's maximum through these: {@link capConfig} then applies the maximum.
 */
const RUNTIME_DEFAULTS: Readonly<Partial<Record<CappedLimit, number>>> = {
  sql_timeout_ms: SQL_DEFAULT_TIMEOUT_MS,
  tool_timeout_ms: DEFAULT_LIMITS.tool_timeout_ms,
  lambda_timeout_ms: LAMBDA_DEFAULT_TIMEOUT_MS,
  command_timeout_ms: COMMAND_DEFAULT_TIMEOUT_MS,
  max_llm_calls_per_turn: DEFAULT_LIMITS.max_llm_calls_per_turn,
  max_tool_calls_per_turn: DEFAULT_LIMITS.max_tool_calls_per_turn,
};

/** The ceiling that applies to one agent: `agentCeilings[id]` over `agentCeiling` over the defaults. */
export interface ResolvedCeiling {
  fetchAllowHosts: readonly string[];
  allowUnsandboxedCommands: boolean;
  computeNetwork: boolean;
  limits: Readonly<Record<CappedLimit, number>>;
  /** Provider ids the agent's own config changes may move it to (see `config-locks.ts`); none by default. */
  providers: readonly string[];
  /** The owner's daemon-wide spend limits (settings `budget`): an agent file's `budget` may not ask more. */
  budget: Readonly<{ day_usd?: number; month_usd?: number }>;
}

export function ceilingFor(settings: Readonly<Settings>, agentId: string): ResolvedCeiling {
  const all: AgentCeiling = settings.agentCeiling ?? {};
  // Own-property lookup: an agent id such as `__proto__` must not reach Object.prototype.
  const own: AgentCeiling =
    (settings.agentCeilings && Object.hasOwn(settings.agentCeilings, agentId)
      ? settings.agentCeilings[agentId]
      : undefined) ?? {};
  const limits = { ...DEFAULT_LIMIT_MAXIMA };
  for (const name of CAPPED_LIMITS) {
    const value = own.limits?.[name] ?? all.limits?.[name];
    if (typeof value === 'number') limits[name] = value;
  }
  return {
    fetchAllowHosts: own.fetchAllowHosts ?? all.fetchAllowHosts ?? [],
    allowUnsandboxedCommands: own.allowUnsandboxedCommands ?? all.allowUnsandboxedCommands ?? false,
    computeNetwork: own.computeNetwork ?? all.computeNetwork ?? false,
    limits,
    providers: own.providers ?? all.providers ?? [],
    budget: settings.budget ?? {},
  };
}

/** Whether an owner entry covers a file's entry: same host, and the owner's port is any or the same. */
function covered(entry: string, owner: readonly string[]): boolean {
  const asked = parseAllowEntry(entry);
  if (!asked) return false;
  const host = asked.host.replace(/\.$/, '');
  return owner.some((candidate) => {
    const allowed = parseAllowEntry(candidate);
    return (
      allowed !== null &&
      allowed.host.replace(/\.$/, '') === host &&
      (allowed.port === null || allowed.port === asked.port)
    );
  });
}

export interface CappedConfig {
  /** The config that applies: the file's, narrowed to the ceiling (the file's own object when nothing was capped). */
  config: AgentConfig;
  /** What was narrowed, in field order; empty when the file stays within the ceiling. */
  capped: CappedField[];
}

/** The file's config under the owner's ceiling. Pure: never changes `config`. */
export function capConfig(config: AgentConfig, ceiling: ResolvedCeiling): CappedConfig {
  const capped: CappedField[] = [];
  const security = { ...((config.security ?? {}) as Record<string, unknown>) };
  const limits = { ...((config.limits ?? {}) as Record<string, unknown>) };

  const hosts = security.fetch_allow_hosts;
  if (Array.isArray(hosts)) {
    const kept = hosts.filter((entry) => typeof entry === 'string' && covered(entry, ceiling.fetchAllowHosts));
    if (kept.length !== hosts.length) {
      capped.push({ field: 'security.fetch_allow_hosts', asked: hosts, applied: kept });
      security.fetch_allow_hosts = kept;
    }
  }
  for (const [field, allowed] of [
    ['allow_unsandboxed_commands', ceiling.allowUnsandboxedCommands],
    ['compute_network', ceiling.computeNetwork],
  ] as const) {
    if (security[field] === true && !allowed) {
      capped.push({ field: `security.${field}`, asked: true, applied: false });
      security[field] = false;
    }
  }
  let filled = false;
  for (const name of CAPPED_LIMITS) {
    const value = limits[name];
    const max = ceiling.limits[name];
    if (typeof value === 'number' && Number.isFinite(value) && value > 0) {
      if (value > max) {
        capped.push({ field: `limits.${name}`, asked: value, applied: max });
        limits[name] = max;
      }
    } else {
      // No valid value (absent, a string, zero, negative): the runtime would use its default, or no
      // limit at all; the owner's maximum applies when that is more. Listed as capped only when the
      // file said something.
      const fallback = RUNTIME_DEFAULTS[name];
      if (fallback === undefined || fallback > max) {
        if (value !== undefined) capped.push({ field: `limits.${name}`, asked: value, applied: max });
        limits[name] = max;
        filled = true;
      }
    }
  }
  const budget = config.budget ? { ...config.budget } : undefined;
  for (const name of ['day_usd', 'month_usd'] as const) {
    const value = budget?.[name];
    const max = ceiling.budget[name];
    if (budget && typeof value === 'number' && typeof max === 'number' && value > max) {
      capped.push({ field: `budget.${name}`, asked: value, applied: max });
      budget[name] = max;
    }
  }
  if (capped.length === 0 && !filled) return { config, capped };
  return {
    config: {
      ...config,
      security: security as AgentConfig['security'],
      limits: limits as AgentConfig['limits'],
      ...(budget ? { budget } : {}),
    },
    capped,
  };
}

/** The owner's unlocks of one agent (settings `agentConfigUnlocks`). */
export function unlocksFor(settings: Readonly<Settings>, agentId: string): readonly string[] {
  const unlocks = settings.agentConfigUnlocks;
  return unlocks && Object.hasOwn(unlocks, agentId) ? (unlocks[agentId] ?? []) : [];
}
