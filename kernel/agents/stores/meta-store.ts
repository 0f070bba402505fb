/**
 * `agt_meta`: small key/value facts the agent keeps, each with a protection level.
 *
 * Protection binds the agent's own tools (actor `agent`), never the owner (actor `owner`, the HTTP
 * routes):
 * - `none`: the agent may set and delete the key.
 * - `readonly`: the agent may read it only; set and delete are refused.
 * - `increment`: the value is an integer the agent may only raise (a new value strictly greater than
 *   the current one); delete is refused.
 * A key the agent creates gets `none`; only the owner chooses another protection.
 */
import type { Sql } from '../sql.js';
import {
  metaCannotBecomeIncrement,
  metaIncrementOnly,
  metaNotInteger,
  metaProtected,
  metaProtectionOwnerOnly,
  metaReadonly,
} from './errors.js';

export const META_PROTECTIONS = ['none', 'readonly', 'increment'] as const;
export type MetaProtection = (typeof META_PROTECTIONS)[number];
export type MetaActor = 'owner' | 'agent';

export interface MetaEntry {
  key: string;
  value: string;
  protection: MetaProtection;
}

const INTEGER = /^-?\d{1,15}$/;

export class MetaStore {
  constructor(private readonly sql: Sql) {}

  /** All entries, sorted by key. */
  list(): MetaEntry[] {
    return this.sql.all<MetaEntry>('SELECT key, value, protection FROM agt_meta ORDER BY key');
  }

  get(key: string): MetaEntry | undefined {
    return this.sql.one<MetaEntry>('SELECT key, value, protection FROM agt_meta WHERE key = ?', key);
  }

  /**
   * Sets a value. `protection` absent keeps the current one (`none` for a new key). Throws `forbidden`
   * when the agent breaks the protection, `bad_request` for a non-integer value under `increment`.
   */
  set(key: string, value: string, options: { actor: MetaActor; protection?: MetaProtection }): MetaEntry {
    const current = this.get(key);
    if (options.actor === 'agent') {
      if (options.protection !== undefined && options.protection !== (current?.protection ?? 'none')) {
        throw metaProtectionOwnerOnly(key);
      }
      if (current?.protection === 'readonly') throw metaReadonly(key);
      if (current?.protection === 'increment') {
        if (!INTEGER.test(value) || Number(value) <= Number(current.value)) {
          throw metaIncrementOnly(key, current.value);
        }
      }
    }
    const protection = options.protection ?? current?.protection ?? 'none';
    if (protection === 'increment' && !INTEGER.test(value)) {
      throw metaNotInteger(key);
    }
    this.sql.run(
      'INSERT INTO agt_meta (key, value, protection, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, protection = excluded.protection, updated_at = excluded.updated_at',
      key,
      value,
      protection,
      Date.now(),
    );
    return { key, value, protection };
  }

  /** Deletes a key; false when absent. The agent cannot delete a protected key (`forbidden`). */
  delete(key: string, actor: MetaActor): boolean {
    const current = this.get(key);
    if (!current) return false;
    if (actor === 'agent' && current.protection !== 'none') {
      throw metaProtected(key, current.protection);
    }
    return this.sql.run('DELETE FROM agt_meta WHERE key = ?', key).changes > 0;
  }

  /** Owner only: changes the protection of an existing key; false when absent. */
  setProtection(key: string, protection: MetaProtection): boolean {
    const current = this.get(key);
    if (!current) return false;
    if (protection === 'increment' && !INTEGER.test(current.value)) {
      throw metaCannotBecomeIncrement(key);
    }
    return (
      this.sql.run('UPDATE agt_meta SET protection = ?, updated_at = ? WHERE key = ?', protection, Date.now(), key)
        .changes > 0
    );
  }
}
