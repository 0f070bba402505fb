/**
 * Reads every stored value of an agent file once, the way the daemon's own reads would convert it. Runs
 * only in the file reader's child process (credentials/file-reader-child.ts), never in the daemon: libsql
 * aborts the whole process on a TEXT value that is not valid UTF-8 (and SQLite stores such bytes as they
 * come), so a file this daemon did not write last is read whole there first. A file that kills that
 * process or fails a read here is refused; one that passes cannot abort the daemon on the values it holds.
 */
import { libsql } from './libsql.js';

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** Walks each table row by row (`iterate`), so a large file is never held at once. */
export function readWholeFile(filePath: string, busyTimeoutMs: number): { tables: number; rows: number } {
  const db = new (libsql())(filePath, { timeout: busyTimeoutMs });
  try {
    db.exec('PRAGMA trusted_schema = OFF');
    db.exec('PRAGMA query_only = ON');
    let rows = 0;
    // The schema itself first (names and statements are TEXT too); virtual tables are read through
    // their shadow tables, which are ordinary tables of the schema.
    const schema = db.prepare('SELECT type, name, tbl_name, sql FROM sqlite_schema').raw(true).all() as unknown[][];
    const tables = schema.filter(([type, , , sql]) => type === 'table' && !/^CREATE VIRTUAL/i.test(String(sql ?? '')));
    for (const [, name] of tables) {
      for (const _row of db
        .prepare(`SELECT * FROM ${quote(String(name))}`)
        .raw(true)
        .iterate())
        rows += 1;
    }
    return { tables: tables.length, rows };
  } finally {
    db.close();
  }
}
