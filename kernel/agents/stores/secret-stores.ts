/**
 * `agt_credentials` and `agt_identity`: opaque blobs. This layer never seals, unseals or interprets them;
 * the identity/credentials module does. Listing credentials returns metadata only, so a caller that
 * forwards `list()` to a response cannot leak a value.
 */
import { parseJson, toJson, type Sql } from '../sql.js';

export interface CredentialMeta {
  name: string;
  /** False only while a replaced value waits for the envelope to unlock (docs/credentials.md#locked). */
  sealed: boolean;
  /** Length of the plaintext value, as recorded by the writer. */
  length: number;
  /** Free metadata the credentials module keeps (no secrets). */
  meta: Record<string, unknown> | null;
  updated_at: number;
}

export interface CredentialRow extends CredentialMeta {
  value: Buffer;
}

type Raw = Omit<CredentialRow, 'sealed' | 'meta'> & { sealed: number; meta: string | null };

const toMeta = (row: Omit<Raw, 'value'>): CredentialMeta => ({
  name: row.name,
  sealed: row.sealed === 1,
  length: row.length,
  meta: parseJson(row.meta) as Record<string, unknown> | null,
  updated_at: row.updated_at,
});

export class CredentialsStore {
  constructor(private readonly sql: Sql) {}

  /** Metadata of every credential, sorted by name. Never the values. */
  list(): CredentialMeta[] {
    return this.sql
      .all<Omit<Raw, 'value'>>('SELECT name, sealed, length, meta, updated_at FROM agt_credentials ORDER BY name')
      .map(toMeta);
  }

  /** Metadata of one credential, or undefined. */
  meta(name: string): CredentialMeta | undefined {
    const row = this.sql.one<Omit<Raw, 'value'>>(
      'SELECT name, sealed, length, meta, updated_at FROM agt_credentials WHERE name = ?',
      name,
    );
    return row && toMeta(row);
  }

  /** The stored (normally sealed) bytes with metadata; for the credentials module only. */
  read(name: string): CredentialRow | undefined {
    const row = this.sql.one<Raw>('SELECT * FROM agt_credentials WHERE name = ?', name);
    return row && { ...toMeta(row), value: Buffer.from(row.value) };
  }

  /** Inserts or replaces a credential's stored bytes. */
  write(
    name: string,
    value: Uint8Array,
    options: { sealed: boolean; length: number; meta?: Record<string, unknown> | null },
  ): void {
    this.sql.run(
      'INSERT INTO agt_credentials (name, value, sealed, length, meta, updated_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value, sealed = excluded.sealed, length = excluded.length, meta = excluded.meta, updated_at = excluded.updated_at',
      name,
      value,
      options.sealed,
      options.length,
      toJson(options.meta ?? null),
      Date.now(),
    );
  }

  /** Deletes a credential; false when absent. */
  delete(name: string): boolean {
    return this.sql.run('DELETE FROM agt_credentials WHERE name = ?', name).changes > 0;
  }
}

export class IdentityStore {
  constructor(private readonly sql: Sql) {}

  /** Stored keys, sorted. */
  keys(): string[] {
    return this.sql.all<{ key: string }>('SELECT key FROM agt_identity ORDER BY key').map((row) => row.key);
  }

  get(key: string): Buffer | undefined {
    const row = this.sql.one<{ value: Buffer }>('SELECT value FROM agt_identity WHERE key = ?', key);
    return row && Buffer.from(row.value);
  }

  put(key: string, value: Uint8Array | string): void {
    this.sql.run(
      'INSERT INTO agt_identity (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at',
      key,
      typeof value === 'string' ? Buffer.from(value, 'utf8') : value,
      Date.now(),
    );
  }

  delete(key: string): boolean {
    return this.sql.run('DELETE FROM agt_identity WHERE key = ?', key).changes > 0;
  }
}
