/**
 * The provider-agnostic parts of a model config mapped to body fields: `params` (key/value strings
 * typed by their look), `provider_params` (merged as is) and `reasoning` (one intent, rendered per
 * wire format by each adapter).
 */
import type { ModelParam } from '@agt/contracts';

/** `"true"` → true, `"42"` → 42, `"null"` → null, `'{"a":1}'` / `"[1]"` → parsed JSON, anything else stays text. */
export function typedValue(value: string): unknown {
  const text = value.trim();
  if (text === 'true') return true;
  if (text === 'false') return false;
  if (text === 'null') return null;
  if (text !== '' && /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) return Number(text);
  if (/^[[{"]/.test(text)) {
    try {
      return JSON.parse(text);
    } catch {
      // Not JSON after all: keep the text.
    }
  }
  return value;
}

/** Body fields nothing may override: they carry the conversation and the transport mode. */
const RESERVED = new Set(['messages', 'stream', 'stream_options', 'system', 'tools']);

/**
 * Applies, in order (later wins): the provider's default params, the model's params, then
 * `provider_params`. Reserved fields are skipped.
 */
export function applyParams(
  body: Record<string, unknown>,
  providerParams: ModelParam[],
  modelParams: ModelParam[] | undefined,
  extra: Record<string, unknown> | undefined,
): Record<string, unknown> {
  for (const { key, value } of [...providerParams, ...(modelParams ?? [])]) {
    if (key && !RESERVED.has(key)) body[key] = typedValue(value);
  }
  for (const [key, value] of Object.entries(extra ?? {})) {
    if (!RESERVED.has(key)) body[key] = value;
  }
  return body;
}

export interface ReasoningIntent {
  effort?: string;
  budgetTokens?: number;
}

/**
 * Reads the agent's `reasoning` object: `{enabled?: boolean, effort?: 'minimal'|'low'|'medium'|'high',
 * budget_tokens?: number}` (`max_tokens` and `budget` are accepted for the budget). Null when reasoning
 * is off: absent, empty, or `enabled: false`.
 */
export function readReasoning(reasoning: Record<string, unknown> | undefined): ReasoningIntent | null {
  if (!reasoning || reasoning.enabled === false) return null;
  const budget = [reasoning.budget_tokens, reasoning.max_tokens, reasoning.budget].find(
    (v) => typeof v === 'number' && v > 0,
  ) as number | undefined;
  const effort = typeof reasoning.effort === 'string' ? reasoning.effort : undefined;
  if (budget === undefined && effort === undefined && reasoning.enabled !== true) return null;
  return { ...(effort ? { effort } : {}), ...(budget ? { budgetTokens: Math.floor(budget) } : {}) };
}

const EFFORT_BUDGET: Record<string, number> = { minimal: 1024, low: 2048, medium: 8192, high: 24576 };

/** A token budget for budget-based APIs (Anthropic: at least 1024). */
export function budgetOf(intent: ReasoningIntent): number {
  return Math.max(1024, intent.budgetTokens ?? EFFORT_BUDGET[intent.effort ?? 'medium'] ?? 8192);
}

/** An effort level for effort-based APIs (OpenAI `reasoning_effort`). */
export function effortOf(intent: ReasoningIntent): string {
  if (intent.effort) return intent.effort;
  const budget = intent.budgetTokens ?? 8192;
  return budget <= 2048 ? 'low' : budget <= 8192 ? 'medium' : 'high';
}

/** Drops undefined and null fields so the body carries only what was set. */
export function compact(body: Record<string, unknown>): Record<string, unknown> {
  for (const key of Object.keys(body)) if (body[key] === undefined || body[key] === null) delete body[key];
  return body;
}
