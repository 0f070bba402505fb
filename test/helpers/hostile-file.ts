/**
 * Test helper: agent files holding TEXT that is not UTF-8. libsql aborts the process that reads such a
 * value, so the helper writes it with SQL (SQLite stores the bytes as they come) and never reads it back.
 */
import { createRequire } from 'node:module';
import type Database from 'libsql';
import { createAgentFile } from './agent-file.js';

const libsql = createRequire(import.meta.url)('libsql') as typeof Database;

/** 0xFF never occurs in UTF-8. */
const NOT_UTF8 = "CAST(x'7b22ff' AS TEXT)";

function poison(filePath: string, statement: string): void {
  const db = new libsql(filePath);
  try {
    db.exec(statement);
  } finally {
    db.close();
  }
}

/** A valid agent file whose config value is not UTF-8: reading its summary aborts the reader. */
export async function fileWithBadConfig(dir: string, name: string): Promise<string> {
  const path = await createAgentFile(dir, { name });
  poison(path, `UPDATE agt_config SET value = ${NOT_UTF8} WHERE key = 'config'`);
  return path;
}

/** A valid agent file with a sound summary and one stored value elsewhere that is not UTF-8. */
export async function fileWithBadValue(dir: string, name: string): Promise<string> {
  const path = await createAgentFile(dir, { name });
  poison(path, `INSERT INTO agt_config (key, value, updated_at) VALUES ('planted', ${NOT_UTF8}, 0)`);
  return path;
}
