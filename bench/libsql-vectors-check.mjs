// What the installed `libsql` package offers for memory search (docs/memory.md "What libsql offers here"):
// FTS5 and libsql's vector type, functions and DiskANN index, each tried on a scratch file with
// `PRAGMA trusted_schema = OFF` as the daemon's connections run; then whether a copy made by `VACUUM INTO`
// (how a backup is made, docs/backups.md) of a file with a vector index passes `PRAGMA integrity_check`.
//
// Run: node bench/libsql-vectors-check.mjs
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const Database = require('libsql');
const version = JSON.parse(readFileSync(join(require.resolve('libsql'), '../package.json'), 'utf8')).version;
const dir = mkdtempSync(join(tmpdir(), 'agt-libsql-check-'));
const db = new Database(join(dir, 'check.db'));
db.exec('PRAGMA trusted_schema = OFF');

const results = {};
const check = (name, fn) => {
  try {
    results[name] = fn() ?? 'works';
  } catch (error) {
    results[name] = `fails: ${error.message}`;
  }
};
const vector = (values) => `[${values.join(',')}]`;

check('fts5 contentless_delete, MATCH, bm25()', () => {
  db.exec("CREATE VIRTUAL TABLE f USING fts5(text, content='', contentless_delete=1)");
  db.prepare('INSERT INTO f (rowid, text) VALUES (?, ?)').run([1, 'green tea in the morning']);
  db.prepare('DELETE FROM f WHERE rowid = ?').run([1]);
  db.prepare('INSERT INTO f (rowid, text) VALUES (?, ?)').run([2, 'a red car']);
  const row = db.prepare("SELECT rowid, bm25(f) AS s FROM f WHERE f MATCH 'car'").get([]);
  if (row.rowid !== 2) throw new Error('no match');
});
check('F32_BLOB column, vector32(), vector_distance_cos()', () => {
  db.exec('CREATE TABLE v (id INTEGER PRIMARY KEY, e F32_BLOB(4))');
  const insert = db.prepare('INSERT INTO v (id, e) VALUES (?, vector32(?))');
  for (let i = 1; i <= 50; i++) insert.run([i, vector([i, 1, (i * 7) % 5, 1])]);
  const row = db
    .prepare('SELECT vector_distance_cos(e, vector32(?)) AS d FROM v WHERE id = 3')
    .get([vector([3, 1, 1, 1])]);
  if (!(row.d < 1e-6)) throw new Error(`distance ${row.d}`);
});
check('F8_BLOB, F1BIT_BLOB, vector1bit()', () => {
  db.exec('CREATE TABLE b (id INTEGER PRIMARY KEY, e8 F8_BLOB(4), e1 F1BIT_BLOB(4))');
  db.prepare('INSERT INTO b VALUES (1, vector8(?), vector1bit(?))').run([vector([1, 2, 3, 4]), vector([1, -2, 3, -4])]);
});
check('libsql_vector_idx (DiskANN) and vector_top_k()', () => {
  db.exec("CREATE INDEX v_idx ON v (libsql_vector_idx(e, 'metric=cosine'))");
  const rows = db.prepare("SELECT id FROM vector_top_k('v_idx', vector32(?), 3)").all([vector([3, 1, 1, 1])]);
  return `works (top 3 of 50: ${rows.map((r) => r.id).join(', ')})`;
});
check('a VACUUM INTO copy of a file with a vector index passes integrity_check', () => {
  const copy = join(dir, 'copy.db');
  db.exec(`VACUUM INTO '${copy}'`);
  const copied = new Database(copy, { readonly: true });
  const verdict = copied
    .prepare('PRAGMA integrity_check')
    .all([])
    .map((row) => row.integrity_check);
  copied.close();
  if (verdict.join() !== 'ok') throw new Error(verdict.slice(0, 2).join('; '));
});

db.close();
rmSync(dir, { recursive: true, force: true });
console.log(JSON.stringify({ libsql: version, node: process.version, ...results }, null, 1));
