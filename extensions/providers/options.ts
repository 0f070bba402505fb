/**
 * The `providers` extension's manifest `config` (TypeBox: validation, type and docs at once) and the
 * defaults applied to it. Per-provider settings (`timeoutMs`, `maxRetries`, `requestDelayMs` of an app
 * provider) override these daemon-wide defaults.
 */
import { Type, type Static } from 'typebox';

const Price = Type.Object(
  {
    input: Type.Number({ minimum: 0, description: 'USD per million uncached input tokens' }),
    output: Type.Number({ minimum: 0, description: 'USD per million output tokens' }),
    cacheRead: Type.Optional(Type.Number({ minimum: 0 })),
    cacheWrite: Type.Optional(Type.Number({ minimum: 0 })),
  },
  { additionalProperties: false },
);

export const ProvidersOptions = Type.Object(
  {
    /** Whole HTTP exchange of one attempt, stream included. */
    timeoutMs: Type.Optional(Type.Integer({ minimum: 1 })),
    /** Longest silence allowed on a streaming attempt (no byte from the server) before it is abandoned. */
    idleTimeoutMs: Type.Optional(Type.Integer({ minimum: 1 })),
    /** Retries after the first attempt, on 408/429/5xx and connection failures. */
    maxRetries: Type.Optional(Type.Integer({ minimum: 0, maximum: 10 })),
    /** First backoff delay; doubles per retry, with up to 25 % jitter. */
    retryBaseMs: Type.Optional(Type.Integer({ minimum: 0 })),
    /** Cap of the computed backoff delay. */
    retryMaxMs: Type.Optional(Type.Integer({ minimum: 0 })),
    /** A `Retry-After` longer than this is not waited for: the call fails at once with the 429. */
    maxRetryAfterMs: Type.Optional(Type.Integer({ minimum: 0 })),
    /** Timeout of `POST /providers/{id}/check` and `GET /providers/{id}/models`. */
    checkTimeoutMs: Type.Optional(Type.Integer({ minimum: 1 })),
    /** `max_tokens` sent to Anthropic when the agent sets none (the Messages API requires one). */
    defaultMaxTokens: Type.Optional(Type.Integer({ minimum: 1 })),
    /** Extra or overriding prices by model id (longest prefix match), USD per million tokens. */
    prices: Type.Optional(Type.Record(Type.String(), Price)),
  },
  { additionalProperties: false },
);

export type ProvidersOptions = Static<typeof ProvidersOptions>;
export type Price = Static<typeof Price>;

export type ResolvedOptions = Required<Omit<ProvidersOptions, 'prices'>> & { prices: Record<string, Price> };

export const DEFAULTS: ResolvedOptions = {
  timeoutMs: 120_000,
  idleTimeoutMs: 60_000,
  maxRetries: 3,
  retryBaseMs: 500,
  retryMaxMs: 8_000,
  maxRetryAfterMs: 60_000,
  checkTimeoutMs: 15_000,
  defaultMaxTokens: 4_096,
  prices: {},
};

export function resolveOptions(config: ProvidersOptions | undefined): ResolvedOptions {
  const out: ResolvedOptions = { ...DEFAULTS, prices: { ...config?.prices } };
  for (const [key, value] of Object.entries(config ?? {})) {
    if (key !== 'prices' && value !== undefined) (out as unknown as Record<string, unknown>)[key] = value;
  }
  return out;
}
