/**
 * The empty agent file at the current schema version, built once per process and copied for every new
 * agent: running the migrations' DDL for each new file cost ~5 ms per create (SQLite re-parses the
 * whole schema at every CREATE and ALTER), copying ~150 KB costs well under 1 ms.
 *
 * The template is built by the same migrations as ever (the caller passes them in), in a scratch file
 * in the system's temporary folder that is read into memory and deleted. A copy is a byte-for-byte
 * SQLite database (rollback journal mode) at `SCHEMA_VERSION` holding no rows; the caller writes the
 * agent's rows into it, switches it to WAL and makes it durable (agent-file.ts).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { libsql } from './libsql.js';
import { Sql } from './sql.js';

const templates = new Map<number, Buffer>();

/** The bytes of an empty file at `version`, built by `build` (the migrations) on first use. */
export function templateBytes(version: number, build: (sql: Sql, path: string) => void): Buffer {
  let bytes = templates.get(version);
  if (bytes !== undefined) return bytes;
  const dir = mkdtempSync(join(tmpdir(), 'agt-template-'));
  const path = join(dir, 'empty.agt');
  try {
    const db = new (libsql())(path);
    const sql = new Sql(db);
    try {
      sql.exec('PRAGMA trusted_schema = OFF');
      // A scratch file: nothing to sync; the copies are made durable where they are written.
      sql.exec('PRAGMA journal_mode = MEMORY');
      sql.exec('PRAGMA synchronous = OFF');
      build(sql, path);
      const built = Number(sql.one<{ user_version: number }>('PRAGMA user_version')?.user_version ?? 0);
      if (built !== version) throw new Error(`the agent file template was built at schema ${built}, not ${version}`);
    } finally {
      sql.dropStatements();
      db.close();
    }
    bytes = readFileSync(path);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  templates.set(version, bytes);
  return bytes;
}

/** Writes a copy of the template to `path`; fails with EEXIST when something is there already. */
export function writeTemplate(path: string, bytes: Buffer): void {
  // Owner read/write only: an agent file holds its sealed keys, memory and messages, whatever the
  // folder's mode. (SQLite gives its -wal and -shm files the database file's mode.)
  writeFileSync(path, bytes, { flag: 'wx', mode: 0o600 });
}
