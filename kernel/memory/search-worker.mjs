// The memory's searches of large files, on a worker thread with read-only connections of its own: a
// search over tens of thousands of memories would hold the daemon's event loop for milliseconds of scanning
// (search-thread.ts). Plain JavaScript importing only libsql and the shared modules.
//
// message: {id, path, terms (the words of the full-text search), vector (float32 BLOB or null), depth,
//           bits: {key, changed}: which copy of the file's 1-bit vectors is current, and the memories whose
//           vectors changed since the last message}
// reply:   {id, ok: true, text: [{id, score}], vector: [{id, distance}]} | {id, ok: false, message}
import { createRequire } from 'node:module';
import { parentPort } from 'node:worker_threads';
import { BitIndex, bitBytes } from './bit-index.mjs';
import { BITS_SQL, candidateCount, EXACT_SEARCH_LIMIT, EXACT_SQL, fullTextRows, RESCORE_SQL } from './search-sql.mjs';

const Database = createRequire(import.meta.url)('libsql');
const BUSY_TIMEOUT_MS = 5_000;
/** Files whose 1-bit vectors are held (about 3 MB per 100,000 vectors of 256 dimensions); the least recent goes. */
const HELD_FILES = 4;
// BLOBs come back from `all` as ArrayBuffer: made Buffers, so they bind as BLOBs again.
const clean = (row) =>
  Object.fromEntries(
    Object.entries(row)
      .filter(([key]) => key !== '_metadata')
      .map(([key, value]) => [key, value instanceof ArrayBuffer ? Buffer.from(value) : value]),
  );
const bytesOf = (value) =>
  value instanceof ArrayBuffer
    ? new Uint8Array(value)
    : new Uint8Array(value.buffer, value.byteOffset, value.byteLength);

/** path -> {key, bytes, index}, in use order (the most recent last). */
const held = new Map();

/**
 * The file's 1-bit vectors in memory: read whole when this worker has none of the file's, or another copy
 * (`key` changes when the file is opened again or its vectors are cleared), else brought up to date with
 * the memories named in `changed` (read again: present, set; absent, removed).
 */
function bitIndex(db, path, bits, dims) {
  const bytes = bitBytes(dims);
  let entry = held.get(path);
  held.delete(path);
  if (!entry || entry.key !== bits.key || entry.bytes !== bytes) {
    const index = new BitIndex(bytes);
    for (const [id, blob] of db.prepare('SELECT memory_id, bits FROM agt_memory_bits').raw(true).all([]))
      index.set(id, bytesOf(blob));
    entry = { key: bits.key, bytes, index };
  } else if (bits.changed.length > 0) {
    const found = new Map(
      db
        .prepare('SELECT memory_id, bits FROM agt_memory_bits WHERE memory_id IN (SELECT value FROM json_each(?))')
        .raw(true)
        .all([JSON.stringify(bits.changed)]),
    );
    for (const id of bits.changed) {
      const blob = found.get(id);
      if (blob) entry.index.set(id, bytesOf(blob));
      else entry.index.remove(id);
    }
  }
  held.set(path, entry);
  if (held.size > HELD_FILES) held.delete(held.keys().next().value);
  return entry.index;
}

parentPort.on('message', ({ id, path, terms, vector, depth, bits }) => {
  let db;
  try {
    // Opened per search and closed after: a connection kept open would hold the file's WAL back from
    // being truncated when the agent closes it, and the file may be unloaded or deleted between searches.
    db = new Database(path, { readonly: true, timeout: BUSY_TIMEOUT_MS });
    db.exec('PRAGMA trusted_schema = OFF');
    const all = (sql, params) => db.prepare(sql).all(params).map(clean);
    // One read transaction: both lists, and the 1-bit vectors read, see the same committed state.
    db.exec('BEGIN');
    const text = fullTextRows(all, terms, depth);
    let near = [];
    if (vector) {
      const blob = Buffer.from(vector);
      const index = bitIndex(db, path, bits, blob.length / 4);
      if (index.live <= EXACT_SEARCH_LIMIT) near = index.live === 0 ? [] : all(EXACT_SQL, [blob, depth]);
      else {
        const query = all(BITS_SQL, [blob])[0].bits;
        const candidates = index.nearest(query, candidateCount(depth));
        near = all(RESCORE_SQL, [blob, JSON.stringify(candidates), depth]);
      }
    }
    db.exec('COMMIT');
    parentPort.postMessage({ id, ok: true, text, vector: near });
  } catch (error) {
    // A copy that may be half read is dropped: the next search reads the file's again.
    held.delete(path);
    parentPort.postMessage({ id, ok: false, message: error instanceof Error ? error.message : String(error) });
  } finally {
    db?.close();
  }
});
