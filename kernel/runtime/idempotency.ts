/**
 * Idempotency keys for `POST chat` and `POST trigger`: a client retrying after a lost answer sends the
 * same `Idempotency-Key` and gets the first answer back, and nothing is queued twice.
 *
 * Keys are scoped per agent (one namespace for both routes: a key used on chat and then on trigger
 * answers the chat's 202), kept 24 h, and bounded per agent ({@link IDEMPOTENCY_MAX_KEYS_PER_AGENT},
 * the agent's oldest keys go first), so one busy agent cannot push another agent's keys out before
 * their 24 h. They live in the daemon's memory only: a restart forgets them.
 */
import type { Clock } from './clock.js';
import { systemClock } from './clock.js';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
export const IDEMPOTENCY_MAX_KEYS_PER_AGENT = 10_000;
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
/** How often every agent's expired keys are swept (agents that are gone included). */
const SWEEP_EVERY_MS = 60 * 1000;

interface Entry<V> {
  at: number;
  value: V;
}

export class IdempotencyStore<V> {
  // Per agent, a Map in insertion order: the first entries are the oldest.
  private readonly agents = new Map<string, Map<string, Entry<V>>>();
  private lastSweep = 0;

  constructor(
    private readonly clock: Pick<Clock, 'now'> = systemClock,
    private readonly ttlMs = IDEMPOTENCY_TTL_MS,
    private readonly maxKeysPerAgent = IDEMPOTENCY_MAX_KEYS_PER_AGENT,
  ) {}

  get(agentId: string, key: string): V | undefined {
    const keys = this.agents.get(agentId);
    if (!keys) return undefined;
    this.expire(agentId, keys);
    return keys.get(key)?.value;
  }

  set(agentId: string, key: string, value: V): void {
    this.sweep();
    let keys = this.agents.get(agentId);
    if (!keys) this.agents.set(agentId, (keys = new Map()));
    keys.delete(key); // a re-set moves to the back
    keys.set(key, { at: this.clock.now(), value });
    while (keys.size > this.maxKeysPerAgent) keys.delete(keys.keys().next().value as string);
  }

  /** Drops one agent's expired entries from the front (they are in time order). */
  private expire(agentId: string, keys: Map<string, Entry<V>>): void {
    const cutoff = this.clock.now() - this.ttlMs;
    for (const [key, entry] of keys) {
      if (entry.at > cutoff) break;
      keys.delete(key);
    }
    if (keys.size === 0) this.agents.delete(agentId);
  }

  /** Every agent's expired entries, at most once a minute. */
  private sweep(): void {
    const now = this.clock.now();
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    for (const [agentId, keys] of this.agents) this.expire(agentId, keys);
  }

  /** Keys held for one agent (all agents without an id). */
  size(agentId?: string): number {
    if (agentId !== undefined) return this.agents.get(agentId)?.size ?? 0;
    let total = 0;
    for (const keys of this.agents.values()) total += keys.size;
    return total;
  }
}
