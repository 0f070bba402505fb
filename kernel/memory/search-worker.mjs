// The memory's searches of large files, on a worker thread with read-only connections of its own: a
// search over tens of thousands of memories takes tens of milliseconds of SQLite, which the daemon's
// event loop never waits on (search-thread.ts). Plain JavaScript importing only libsql and the shared SQL.
//
// message: {id, path, match (FTS5 query or null), vector (float32 BLOB or null), depth}
// reply:   {id, ok: true, text: [{id, score}], vector: [{id, distance}]} | {id, ok: false, message}
import { createRequire } from 'node:module';
import { parentPort } from 'node:worker_threads';
import { FULL_TEXT_SQL, nearestRows } from './search-sql.mjs';

const Database = createRequire(import.meta.url)('libsql');
const BUSY_TIMEOUT_MS = 5_000;
// BLOBs come back from `all` as ArrayBuffer: made Buffers, so they bind as BLOBs again.
const clean = (row) =>
  Object.fromEntries(
    Object.entries(row)
      .filter(([key]) => key !== '_metadata')
      .map(([key, value]) => [key, value instanceof ArrayBuffer ? Buffer.from(value) : value]),
  );

parentPort.on('message', ({ id, path, match, vector, depth }) => {
  let db;
  try {
    // Opened per search and closed after: a connection kept open would hold the file's WAL back from
    // being truncated when the agent closes it, and the file may be unloaded or deleted between searches.
    db = new Database(path, { readonly: true, timeout: BUSY_TIMEOUT_MS });
    db.exec('PRAGMA trusted_schema = OFF');
    const all = (sql, params) => db.prepare(sql).all(params).map(clean);
    // One read transaction: both lists see the same committed state.
    db.exec('BEGIN');
    const text = match ? all(FULL_TEXT_SQL, [match, depth]) : [];
    const near = vector ? nearestRows(all, Buffer.from(vector), depth) : [];
    db.exec('COMMIT');
    parentPort.postMessage({ id, ok: true, text, vector: near });
  } catch (error) {
    parentPort.postMessage({ id, ok: false, message: error instanceof Error ? error.message : String(error) });
  } finally {
    db?.close();
  }
});
