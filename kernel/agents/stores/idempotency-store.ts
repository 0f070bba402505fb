/**
 * `agt_idempotency`: the `Idempotency-Key`s of `POST chat` and `POST trigger` with the turn id their first
 * request was answered with. One namespace per agent (the file) for both routes; a key is kept
 * {@link IDEMPOTENCY_TTL_MS} (24 h) and an agent keeps at most {@link IDEMPOTENCY_MAX_KEYS_PER_AGENT}
 * (its oldest go first), so a busy agent never pushes out another agent's keys. The key is committed
 * in the same transaction as the accepted turn it names, so a retry after a crash finds both or neither.
 * With it is kept the digest of the request it came with (schema 8): the same key with another request
 * is refused, as the IETF Idempotency-Key draft says (422); a key kept without one (an older file, a
 * caller that gives none) answers its turn id to any request.
 */
import { createHash } from 'node:crypto';
import type { Sql } from '../sql.js';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
export const IDEMPOTENCY_MAX_KEYS_PER_AGENT = 10_000;
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

/** A key and, when the caller gives it, the digest of its request ({@link requestDigest}). */
export interface Idempotency {
  key: string;
  requestHash?: string;
}

/** The digest of a request's meaning: SHA-256 of the JSON of its parts (route, loop, body). */
export function requestDigest(...parts: unknown[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url');
}

export class IdempotencyKeyStore {
  constructor(
    private readonly sql: Sql,
    /** Tests shorten the bound. */
    readonly maxKeys = IDEMPOTENCY_MAX_KEYS_PER_AGENT,
    readonly ttlMs = IDEMPOTENCY_TTL_MS,
  ) {}

  /**
   * The turn id a live key was first answered with, and the digest of that first request (null when none
   * was kept); undefined when the key is unknown or older than the TTL.
   */
  get(key: string, now: number): { turnId: string; requestHash: string | null } | undefined {
    const row = this.sql.one<{ turn_id: string; created_at: number; request_hash: string | null }>(
      'SELECT turn_id, created_at, request_hash FROM agt_idempotency WHERE key = ?',
      key,
    );
    if (!row || row.created_at <= now - this.ttlMs) return undefined;
    return { turnId: row.turn_id, requestHash: row.request_hash };
  }

  /**
   * Records `key` → `turnId` and the request's digest (a re-put moves the key to the newest end), drops
   * expired keys and then the oldest beyond the bound. Call inside the transaction that commits the
   * accepted turn.
   */
  put(key: string, turnId: string, now: number, requestHash: string | null = null): void {
    this.sql.transaction(() => {
      this.sql.run(
        'INSERT OR REPLACE INTO agt_idempotency (key, turn_id, created_at, request_hash) VALUES (?, ?, ?, ?)',
        key,
        turnId,
        now,
        requestHash,
      );
      this.sql.run('DELETE FROM agt_idempotency WHERE created_at <= ?', now - this.ttlMs);
      const excess = this.count() - this.maxKeys;
      if (excess > 0) {
        this.sql.run(
          'DELETE FROM agt_idempotency WHERE rowid IN (SELECT rowid FROM agt_idempotency ORDER BY created_at, rowid LIMIT ?)',
          excess,
        );
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
