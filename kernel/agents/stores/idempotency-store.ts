/**
 * `agt_idempotency`: the `Idempotency-Key`s of `POST chat` and `POST trigger` with the turn id their first
 * request was answered with. One namespace per agent (the file) for both routes; a key is kept
 * {@link IDEMPOTENCY_TTL_MS} (24 h) and an agent keeps at most {@link IDEMPOTENCY_MAX_KEYS_PER_AGENT}
 * (its oldest go first), so a busy agent never pushes out another agent's keys. The key is committed
 * in the same transaction as the accepted turn it names, so a retry after a crash finds both or neither.
 */
import type { Sql } from '../sql.js';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
export const IDEMPOTENCY_MAX_KEYS_PER_AGENT = 10_000;
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

export class IdempotencyKeyStore {
  constructor(
    private readonly sql: Sql,
    /** Tests shorten the bound. */
    readonly maxKeys = IDEMPOTENCY_MAX_KEYS_PER_AGENT,
    readonly ttlMs = IDEMPOTENCY_TTL_MS,
  ) {}

  /** The turn id a live key was first answered with; undefined when unknown or older than the TTL. */
  get(key: string, now: number): string | undefined {
    const row = this.sql.one<{ turn_id: string; created_at: number }>('SELECT turn_id, created_at FROM agt_idempotency WHERE key = ?', key);
    if (!row || row.created_at <= now - this.ttlMs) return undefined;
    return row.turn_id;
  }

  /**
   * Records `key` → `turnId` (a re-put moves the key to the newest end), drops expired keys and then the
   * oldest beyond the bound. Call inside the transaction that commits the accepted turn.
   */
  put(key: string, turnId: string, now: number): void {
    this.sql.transaction(() => {
      this.sql.run('INSERT OR REPLACE INTO agt_idempotency (key, turn_id, created_at) VALUES (?, ?, ?)', key, turnId, now);
      this.sql.run('DELETE FROM agt_idempotency WHERE created_at <= ?', now - this.ttlMs);
      const excess = this.count() - this.maxKeys;
      if (excess > 0) {
        this.sql.run('DELETE FROM agt_idempotency WHERE rowid IN (SELECT rowid FROM agt_idempotency ORDER BY created_at, rowid LIMIT ?)', excess);
      }
    });
  }

  delete(key: string): boolean {
    return this.sql.run('DELETE FROM agt_idempotency WHERE key = ?', key).changes > 0;
  }

  count(): number {
    return this.sql.one<{ n: number }>('SELECT count(*) AS n FROM agt_idempotency')!.n;
  }
}
