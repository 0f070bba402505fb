// The memory search worker as it was before the in-memory 1-bit scan (bench/memory-search.ts compares
// the two): both lists in SQL on a read-only connection per search, the 1-bit vectors scanned by SQLite,
// BM25 over every memory holding any of the words.
import { createRequire } from 'node:module';
import { parentPort } from 'node:worker_threads';
import { anyOf, FULL_TEXT_SQL, nearestRows } from '../kernel/memory/search-sql.mjs';

const Database = createRequire(import.meta.url)('libsql');
const clean = (row) =>
  Object.fromEntries(
    Object.entries(row)
      .filter(([key]) => key !== '_metadata')
      .map(([key, value]) => [key, value instanceof ArrayBuffer ? Buffer.from(value) : value]),
  );

parentPort.on('message', ({ id, path, terms, vector, depth }) => {
  const db = new Database(path, { readonly: true, timeout: 5_000 });
  try {
    db.exec('PRAGMA trusted_schema = OFF');
    const all = (sql, params) => db.prepare(sql).all(params).map(clean);
    db.exec('BEGIN');
    const match = anyOf(terms);
    const text = match ? all(FULL_TEXT_SQL, [match, depth]) : [];
    const near = vector ? nearestRows(all, Buffer.from(vector), depth) : [];
    db.exec('COMMIT');
    parentPort.postMessage({ id, ok: true, text, vector: near });
  } catch (error) {
    parentPort.postMessage({ id, ok: false, message: String(error) });
  } finally {
    db.close();
  }
});
