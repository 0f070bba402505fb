/**
 * Reads every stored value of an agent file once, the way the daemon's own reads would convert it. Runs
 * only in the file reader's child process (credentials/file-reader-child.ts), never in the daemon: libsql
 * aborts the whole process on a TEXT value that is not valid UTF-8 (and SQLite stores such bytes as they
 * come), so a file this daemon did not write last is read whole there first. A file that kills that
 * process or fails a read here is refused; one that passes cannot abort the daemon on the values it holds.
 */
import { statSync } from 'node:fs';
import { hasSqliteHeader, isBusyError } from './agent-file.js';
import { agentFileLocked, loadFailed } from './errors.js';
import { releaseClosedHandles } from './handle-release.js';
import { libsql } from './libsql.js';

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** Files read between two collections that give their descriptors back (a collection costs a few ms). */
const FILES_PER_RELEASE = 16;
let readSinceRelease = 0;

/**
 * Walks the schema and each table row by row (`iterate`), so a large file is never held at once. A path
 * that is not a non-empty SQLite file holds no values: the daemon's own open refuses it, saying why.
 */
export async function readWholeFile(filePath: string, busyTimeoutMs: number): Promise<void> {
  try {
    const stat = statSync(filePath);
    if (!stat.isFile() || stat.size === 0 || !hasSqliteHeader(filePath)) return;
  } catch {
    return;
  }
  try {
    const db = new (libsql())(filePath, { timeout: busyTimeoutMs });
    try {
      db.exec('PRAGMA trusted_schema = OFF');
      db.exec('PRAGMA query_only = ON');
      // The schema itself first (names and statements are TEXT too); virtual tables are read through
      // their shadow tables, which are ordinary tables of the schema.
      const schema = db.prepare('SELECT type, name, sql FROM sqlite_schema').raw(true).all() as unknown[][];
      for (const [type, name, sql] of schema) {
        if (type !== 'table' || /^CREATE VIRTUAL/i.test(String(sql ?? ''))) continue;
        for (const _row of db
          .prepare(`SELECT * FROM ${quote(String(name))}`)
          .raw(true)
          .iterate());
      }
    } finally {
      db.close();
    }
  } catch (error) {
    throw isBusyError(error)
      ? agentFileLocked(filePath, error)
      : loadFailed(filePath, 'corrupt', `cannot be read: ${(error as Error).message}`, error);
  } finally {
    // This process reads many files: their descriptors go back every few files, not at some later collection.
    if (++readSinceRelease >= FILES_PER_RELEASE) {
      readSinceRelease = 0;
      await releaseClosedHandles();
    }
  }
}
