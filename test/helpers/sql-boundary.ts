/**
 * What the agent-SQL boundary tests share (test/agent-sql-boundary.test.ts, test/agent-sql-schema.test.ts):
 * a SQL child on a real agent file (`box`), and reading the file from the test's own connection to show
 * it unchanged (`fingerprint`, `integrity`, `sequenceOf`).
 */
import { createHash } from 'node:crypto';
import Database from 'libsql';
import { SqlSandbox, type SqlCall } from '../../kernel/runtime/sql-sandbox/sql-runner.js';
import type { SeenCall } from '../fixtures/runtime/scripted-model.js';
import { createAgentFile } from './agent-file.js';
import { tempDir } from './daemon.js';

/** What the helpers need of a tap test. */
export interface Tap {
  teardown(fn: () => unknown): void;
}

/** JSON without libsql's per-row `_metadata` (it carries timings); BLOBs as hex. */
export const stable = (value: unknown) =>
  JSON.stringify(value, (key, v) =>
    key === '_metadata' ? undefined : v instanceof ArrayBuffer ? Buffer.from(v).toString('hex') : v,
  );

/** Everything in the file that matters: schema, header fields and every table's rows (but `skip`). */
export function fingerprint(path: string, skip: readonly string[] = []): string {
  const db = new Database(path, { readonly: true });
  try {
    const hash = createHash('sha256');
    const schema = db
      .prepare('SELECT type, name, tbl_name, rootpage, sql FROM sqlite_master ORDER BY type, name')
      .all() as Array<{ type: string; name: string; sql: string | null }>;
    hash.update(stable(schema));
    for (const pragma of ['user_version', 'application_id', 'journal_mode', 'page_size'])
      hash.update(stable(db.prepare(`PRAGMA ${pragma}`).get()));
    for (const table of schema.filter((o) => o.type === 'table' && !skip.includes(o.name))) {
      const rows = db.prepare(`SELECT * FROM "${table.name.replace(/"/g, '""')}"`).all();
      hash.update(table.name).update(stable(rows));
    }
    return hash.digest('hex');
  } finally {
    db.close();
  }
}

export function integrity(path: string): string {
  const db = new Database(path, { readonly: true });
  try {
    return String((db.prepare('PRAGMA integrity_check').get() as { integrity_check: string }).integrity_check);
  } finally {
    db.close();
  }
}

/** Reads the file on a connection of the test's own (closed afterwards). */
export function readFile<T>(path: string, read: (db: Database.Database) => T): T {
  const db = new Database(path, { readonly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/** A table's AUTOINCREMENT counter, read from the file by the test itself (agent SQL cannot). */
export const sequenceOf = (path: string, table: string) =>
  readFile(
    path,
    (db) =>
      (db.prepare('SELECT seq FROM sqlite_sequence WHERE name = ?').get(table) as { seq: number } | undefined)?.seq,
  );

export interface Box {
  path: string;
  dir: string;
  sandbox: SqlSandbox;
  query(sql: string, params?: SqlCall['params'], extra?: Partial<SqlCall>): Promise<any>;
  execute(sql: string, params?: SqlCall['params'], extra?: Partial<SqlCall>): Promise<any>;
  /** The error a call ends with (fails the test when it succeeds). */
  refused(mode: 'query' | 'execute', sql: string, extra?: Partial<SqlCall>): Promise<{ code: string; message: string }>;
}

export async function box(t: Tap, seed?: (db: Database.Database) => void): Promise<Box> {
  const dir = tempDir(t, 'agt-sql-');
  const path = await createAgentFile(
    dir,
    {},
    {
      seed: (file) => {
        file.credentials.write('api', Buffer.from('sealed-secret'), { sealed: true, length: 13 });
        file.meta.set('mood', 'good', { actor: 'owner' });
        file.raw.exec('CREATE TABLE local_a (id INTEGER PRIMARY KEY AUTOINCREMENT, body TEXT, n INTEGER)');
        file.raw.exec("INSERT INTO local_a (body, n) VALUES ('one', 1), ('two', 2)");
        if (seed) seed(file.raw.db);
      },
    },
  );
  const sandbox = new SqlSandbox(path);
  t.teardown(() => sandbox.close());
  const call =
    (mode: 'query' | 'execute') =>
    (sql: string, params: SqlCall['params'] = [], extra: Partial<SqlCall> = {}) =>
      mode === 'query' ? sandbox.query({ sql, params, ...extra }) : sandbox.execute({ sql, params, ...extra });
  return {
    path,
    dir,
    sandbox,
    query: call('query'),
    execute: call('execute'),
    async refused(mode, sql, extra = {}) {
      try {
        const result = await call(mode)(sql, [], extra);
        return { code: 'none', message: `succeeded: ${JSON.stringify(result).slice(0, 200)}` };
      } catch (error) {
        return { code: (error as { code: string }).code, message: (error as Error).message };
      }
    },
  };
}

/** The tool results the model saw on its last call. */
export const toolResults = (h: { model: { readonly calls: SeenCall[] } }) =>
  h.model.calls.at(-1)!.messages.filter((m) => m.role === 'tool') as Array<{ content: string; isError?: boolean }>;
