/** The wait before a retry of a failed provider call (chat and embeddings alike). */
import type { Failure } from './errors.js';
import type { ResolvedOptions } from './options.js';

/** Exponential backoff with up to 25 % jitter, capped; a server's `Retry-After` replaces it. */
export function retryDelay(attempt: number, failure: Failure, options: ResolvedOptions): number | null {
  if (failure.retryAfterMs !== undefined)
    return failure.retryAfterMs > options.maxRetryAfterMs ? null : failure.retryAfterMs;
  const base = Math.min(options.retryBaseMs * 2 ** attempt, options.retryMaxMs);
  return Math.round(base * (1 - Math.random() * 0.25));
}
