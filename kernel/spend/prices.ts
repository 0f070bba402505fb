/**
 * The price in force for a model call (docs/costs.md): settings `pricing` first (`<provider id>/<model>`,
 * longest model prefix, then `<provider id>` as that provider's default), then the shipped table of
 * `contracts/pricing.ts` by model id (an OpenRouter-style `vendor/model` id by its part after the
 * slash). A local `openai-compatible` provider never takes a shipped price: its model may share a
 * vendor's name, but nobody bills for it. No price: null (tokens are still counted). After the call, a
 * cost the provider reported (OpenRouter's) wins over a shipped price, never over the owner's.
 */
import { findModelPrice, SHIPPED_PRICES, type ModelPrice, type PriceSettings, type Settings } from '@agt/contracts';

const fromSettings = (price: PriceSettings): ModelPrice => ({
  input: price.input,
  output: price.output,
  ...(price.cached !== undefined ? { cacheRead: price.cached } : {}),
});

export interface PriceInForce {
  price: ModelPrice;
  /** `settings`: the owner's, which wins over a provider's reported cost; `shipped`: the table's, which does not. */
  source: 'settings' | 'shipped';
}

export function priceFor(
  settings: Readonly<Settings>,
  providerId: string,
  providerKind: string | undefined,
  model: string,
): PriceInForce | null {
  const pricing = settings.pricing ?? {};
  const prefix = `${providerId}/`;
  const own: Record<string, PriceSettings> = {};
  for (const [key, value] of Object.entries(pricing)) if (key.startsWith(prefix)) own[key.slice(prefix.length)] = value;
  const exact = findModelPrice(model, own);
  if (exact) return { price: fromSettings(exact), source: 'settings' };
  if (Object.hasOwn(pricing, providerId)) return { price: fromSettings(pricing[providerId]!), source: 'settings' };
  if (providerKind === 'openai-compatible') return null;
  const shipped = findModelPrice(model.includes('/') ? model.slice(model.indexOf('/') + 1) : model, SHIPPED_PRICES);
  return shipped ? { price: shipped, source: 'shipped' } : null;
}
