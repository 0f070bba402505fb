/**
 * Idempotency keys for `POST chat` and `POST trigger`: a client retrying after a lost answer sends the
 * same `Idempotency-Key` and gets the first answer back, and nothing is queued twice. Keys are scoped
 * per agent and per route, kept 24 h, and the store is bounded (oldest entries go first), so a client
 * minting a key per request cannot grow memory without limit.
 */
import type { Clock } from './clock.js';
import { systemClock } from './clock.js';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
export const IDEMPOTENCY_MAX_KEYS = 20_000;
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

export class IdempotencyStore<V> {
  // Map keeps insertion order: the first entries are the oldest.
  private readonly entries = new Map<string, { at: number; value: V }>();

  constructor(
    private readonly clock: Pick<Clock, 'now'> = systemClock,
    private readonly ttlMs = IDEMPOTENCY_TTL_MS,
    private readonly maxKeys = IDEMPOTENCY_MAX_KEYS,
  ) {}

  private slot(agentId: string, route: string, key: string): string {
    return `${agentId}\u0000${route}\u0000${key}`;
  }

  get(agentId: string, route: string, key: string): V | undefined {
    this.expire();
    return this.entries.get(this.slot(agentId, route, key))?.value;
  }

  set(agentId: string, route: string, key: string, value: V): void {
    this.expire();
    this.entries.set(this.slot(agentId, route, key), { at: this.clock.now(), value });
    while (this.entries.size > this.maxKeys) this.entries.delete(this.entries.keys().next().value as string);
  }

  /** Drops expired entries from the front (they are in time order). */
  private expire(): void {
    const cutoff = this.clock.now() - this.ttlMs;
    for (const [slot, entry] of this.entries) {
      if (entry.at > cutoff) break;
      this.entries.delete(slot);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}
