/**
 * Cost of a call in USD from a small table of list prices (USD per million tokens) for well-known
 * models, matched by the longest prefix of the model id (so dated ids such as
 * `claude-sonnet-4-20250514` or `gpt-4o-2024-08-06` match). OpenRouter's own reported cost wins over
 * the table. Unknown models cost `null`, never a guess. The manifest's `prices` option adds or overrides
 * entries. Prices change: the table is a convenience, not billing.
 */
import type { UsageCounts } from '@agt/contracts';
import { findModelPrice, SHIPPED_PRICES, usdOf } from '@agt/contracts';
import type { Price } from './options.js';
import type { ProviderKind } from './types.js';

/** List prices (USD / 1M tokens): the table shared with the kernel's spend governor. */
export const PRICES: Record<string, Price> = SHIPPED_PRICES as Record<string, Price>;

/** The price of `model` in `table`, by longest matching prefix (`prefix`, `prefix-…` or `prefix:…`). */
export function findPrice(model: string, table: Record<string, Price> = PRICES): Price | null {
  return findModelPrice(model, table);
}

/** USD for one call; `input` includes the cached tokens, which are priced at their own rates. */
export function costOf(usage: UsageCounts, price: Price): number {
  return usdOf(usage, price);
}

/**
 * The cost of a call: OpenRouter's reported cost first; then the manifest's `prices` (any kind, so a
 * self-hosted model can be given a price); then the built-in table for the first-party kinds and for
 * OpenRouter ids such as `openai/gpt-4o`. A local `openai-compatible` model is never priced by the
 * table (its name may match a vendor model but nobody bills for it).
 */
export function priceCall(
  kind: ProviderKind,
  model: string,
  usage: UsageCounts,
  reported: number | null,
  extra: Record<string, Price>,
): number | null {
  if (reported !== null) return reported;
  const custom = findPrice(model, extra);
  if (custom) return costOf(usage, custom);
  if (kind === 'openai-compatible') return null;
  const bare = kind === 'openrouter' ? model.slice(model.indexOf('/') + 1) : model;
  const price = findPrice(bare);
  return price ? costOf(usage, price) : null;
}
