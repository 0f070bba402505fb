/**
 * Cost of a call in USD from a small table of list prices (USD per million tokens) for well-known
 * models, matched by the longest prefix of the model id (so dated ids such as
 * `claude-sonnet-4-20250514` or `gpt-4o-2024-08-06` match). OpenRouter's own reported cost wins over
 * the table. Unknown models cost `null`, never a guess. The manifest's `prices` option adds or overrides
 * entries. Prices change: the table is a convenience, not billing.
 */
import type { UsageCounts } from '@agt/contracts/events';
import type { Price } from './options.js';
import type { ProviderKind } from './types.js';

/** List prices (USD / 1M tokens). cacheRead / cacheWrite default to 50 % / 100 % of input when absent. */
export const PRICES: Record<string, Price> = {
  'claude-opus-4': { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
  'claude-sonnet-4': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  'claude-3-7-sonnet': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  'claude-3-5-sonnet': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  'claude-3-5-haiku': { input: 0.8, output: 4, cacheRead: 0.08, cacheWrite: 1 },
  'claude-haiku-4-5': { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
  'claude-3-haiku': { input: 0.25, output: 1.25, cacheRead: 0.03, cacheWrite: 0.3 },
  'gpt-4o': { input: 2.5, output: 10, cacheRead: 1.25 },
  'gpt-4o-mini': { input: 0.15, output: 0.6, cacheRead: 0.075 },
  'gpt-4.1': { input: 2, output: 8, cacheRead: 0.5 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6, cacheRead: 0.1 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4, cacheRead: 0.025 },
  o3: { input: 2, output: 8, cacheRead: 0.5 },
  'o3-mini': { input: 1.1, output: 4.4, cacheRead: 0.55 },
  'o4-mini': { input: 1.1, output: 4.4, cacheRead: 0.275 },
};

/** The price of `model` in `table`, by longest matching prefix (`prefix`, `prefix-…` or `prefix:…`). */
export function findPrice(model: string, table: Record<string, Price> = PRICES): Price | null {
  let best: string | null = null;
  for (const prefix of Object.keys(table)) {
    const matches = model === prefix || model.startsWith(`${prefix}-`) || model.startsWith(`${prefix}:`);
    if (matches && (!best || prefix.length > best.length)) best = prefix;
  }
  return best ? table[best]! : null;
}

/** USD for one call; `input` includes the cached tokens, which are priced at their own rates. */
export function costOf(usage: UsageCounts, price: Price): number {
  const uncached = Math.max(0, usage.input - usage.cacheRead - usage.cacheWrite);
  const usd =
    uncached * price.input +
    usage.cacheRead * (price.cacheRead ?? price.input * 0.5) +
    usage.cacheWrite * (price.cacheWrite ?? price.input) +
    usage.output * price.output;
  return Math.round((usd / 1_000_000) * 1e8) / 1e8;
}

/**
 * The cost of a call: OpenRouter's reported cost first; then the manifest's `prices` (any kind, so a
 * self-hosted model can be given a price); then the built-in table for the first-party kinds and for
 * OpenRouter ids such as `openai/gpt-4o`. A local `openai-compatible` model is never priced by the
 * table (its name may match a vendor model but nobody bills for it).
 */
export function priceCall(kind: ProviderKind, model: string, usage: UsageCounts, reported: number | null, extra: Record<string, Price>): number | null {
  if (reported !== null) return reported;
  const custom = findPrice(model, extra);
  if (custom) return costOf(usage, custom);
  if (kind === 'openai-compatible') return null;
  const bare = kind === 'openrouter' ? model.slice(model.indexOf('/') + 1) : model;
  const price = findPrice(bare);
  return price ? costOf(usage, price) : null;
}
