// Where a large memory search's time goes (docs/memory.md "Performance"): the steps of the search worker
// (kernel/memory/search-worker.mjs) timed one by one on a file kept by `bench/memory-search.ts --keep=`, in
// this thread: opening the read-only connection, the full-text list (counting each word's memories, then
// BM25), the 1-bit scan of the in-memory copy and the float32 rescoring of its candidates; then what the
// daemon's thread does with the two lists (reading the hits' rows and fusing them, kernel/memory/fusion.ts).
//
// Run: node --import tsx bench/memory-search-steps.mjs <file> [queries=200]
import { createRequire } from 'node:module';
import { BitIndex, bitBytes } from '../kernel/memory/bit-index.mjs';
import { fuse } from '../kernel/memory/fusion.js';
import { BITS_SQL, candidateCount, fullTextRows, RESCORE_SQL } from '../kernel/memory/search-sql.mjs';

const Database = createRequire(import.meta.url)('libsql');
const path = process.argv[2];
const queries = Number(process.argv[3] ?? 200);
if (!path) throw new Error('usage: node --import tsx bench/memory-search-steps.mjs <file> [queries]');

let seed = 7;
const random = () => (seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32;
// The words of bench/memory-search.ts: 5,000 made-up words drawn by Zipf's law.
const VOCABULARY = Array.from({ length: 5_000 }, (_, i) => `w${i.toString(36)}`);
const cumulative = [];
VOCABULARY.reduce((sum, _, i) => (cumulative[i] = sum + 1 / (i + 1)), 0);
const word = () => {
  const x = random() * cumulative.at(-1);
  let lo = 0;
  let hi = cumulative.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cumulative[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return VOCABULARY[lo];
};

const open = () => {
  const db = new Database(path, { readonly: true, timeout: 5_000 });
  db.exec('PRAGMA trusted_schema = OFF');
  return db;
};
const allOf = (db) => (sql, params) => db.prepare(sql).all(params);
const setup = open();
const dims = setup.prepare('SELECT length(embedding) AS n FROM agt_memory_vectors LIMIT 1').get([]).n / 4;
const index = new BitIndex(bitBytes(dims));
for (const [id, blob] of setup.prepare('SELECT memory_id, bits FROM agt_memory_bits').raw(true).all([]))
  index.set(id, new Uint8Array(blob));
const unit = () => {
  const v = Float32Array.from({ length: dims }, () => random() * 2 - 1);
  const norm = Math.hypot(...v);
  return Buffer.from(v.map((x) => x / norm).buffer);
};

// The hits' rows as the memory store reads them on the daemon's connection (memory-store.ts `many`).
const rowsOf = setup.prepare(
  `SELECT id, text, kind, source, loop, turn_id, row_id, pinned, created_at, updated_at, used_at, forgotten_at
   FROM agt_memory WHERE +forgotten_at IS NULL AND id IN (SELECT value FROM json_each(?))`,
);
const steps = { open: [], fulltext: [], bits_sql: [], scan: [], rescore: [], fusion: [], total: [] };
for (let i = 0; i < queries + 10; i++) {
  const terms = [word(), word(), word()];
  const blob = unit();
  const t0 = performance.now();
  const db = open();
  const t1 = performance.now();
  const all = allOf(db);
  db.exec('BEGIN');
  const text = fullTextRows(all, [...new Set(terms)], 50);
  const t2 = performance.now();
  const query = new Uint8Array(all(BITS_SQL, [blob])[0].bits);
  const t3 = performance.now();
  const candidates = index.nearest(query, candidateCount(50));
  const t4 = performance.now();
  const vector = all(RESCORE_SQL, [blob, JSON.stringify(candidates), 50]);
  db.exec('COMMIT');
  db.close();
  const t5 = performance.now();
  const found = new Map(
    rowsOf.all([JSON.stringify([...new Set([...text, ...vector].map((hit) => hit.id))])]).map((row) => [row.id, row]),
  );
  fuse(text, vector, (id) => found.get(id), Date.now());
  const t6 = performance.now();
  if (i < 10) continue;
  steps.open.push(t1 - t0);
  steps.fulltext.push(t2 - t1);
  steps.bits_sql.push(t3 - t2);
  steps.scan.push(t4 - t3);
  steps.rescore.push(t5 - t4);
  steps.fusion.push(t6 - t5);
  steps.total.push(t6 - t0);
}
const at = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
const out = {};
for (const [step, times] of Object.entries(steps)) {
  const sorted = times.sort((a, b) => a - b);
  out[step] = { p50: +at(sorted, 50).toFixed(2), p95: +at(sorted, 95).toFixed(2) };
}
console.log(JSON.stringify({ memories: index.live, dims, queries, ms: out }));
