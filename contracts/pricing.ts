/**
 * The shipped list prices (USD per million tokens) of common models, shared by the kernel's spend
 * governor (docs/costs.md) and the `providers` extension. Matched by the longest prefix of the model id,
 * so dated ids (`claude-sonnet-4-20250514`, `gpt-4o-2024-08-06`) match. Sources: the vendors' public
 * price pages (anthropic.com/pricing, openai.com/api/pricing) as of 2025; no maintained npm package
 * carries a pinnable table for all four provider kinds, so this small table is the source and the owner
 * overrides it with settings `pricing`. Prices change: a convenience, not billing.
 *
 * @beta
 */
export interface ModelPrice {
  input: number;
  output: number;
  /** Cache-read input; default half of `input`. */
  cacheRead?: number;
  /** Cache-write input; default `input`. */
  cacheWrite?: number;
}

/** @beta */
export const SHIPPED_PRICES: Readonly<Record<string, ModelPrice>> = {
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

/**
 * The entry of `table` whose key is the longest prefix of `model` (`key`, `key-…`, `key:…`), or null.
 *
 * @beta
 */
export function findModelPrice<T>(model: string, table: Readonly<Record<string, T>>): T | null {
  let best: string | null = null;
  for (const prefix of Object.keys(table)) {
    const matches = model === prefix || model.startsWith(`${prefix}-`) || model.startsWith(`${prefix}:`);
    if (matches && (!best || prefix.length > best.length)) best = prefix;
  }
  return best === null ? null : table[best]!;
}

/**
 * Token counts of one call; `input` includes the cached tokens, priced at their own rates.
 *
 * @beta
 */
export interface PricedUsage {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

/**
 * USD of one call at `price`, rounded to 1e-8.
 *
 * @beta
 */
export function usdOf(usage: PricedUsage, price: ModelPrice): number {
  const cacheRead = usage.cacheRead ?? 0;
  const cacheWrite = usage.cacheWrite ?? 0;
  const uncached = Math.max(0, usage.input - cacheRead - cacheWrite);
  const usd =
    uncached * price.input +
    cacheRead * (price.cacheRead ?? price.input * 0.5) +
    cacheWrite * (price.cacheWrite ?? price.input) +
    usage.output * price.output;
  return Math.round((usd / 1_000_000) * 1e8) / 1e8;
}
