/**
 * The memory's vector table, on libsql's native vector type: `F32_BLOB(n)` column, a DiskANN index made
 * with `libsql_vector_idx` (cosine), read with `vector_top_k`. Its width is the owner's embedding
 * model's, which no migration can know, so the table is made when vectors are first written and made
 * again (empty) when the model or its width changes; `agt_memory_state` says which model filled it.
 *
 * The agent's own SQL never reaches these objects: its b-trees must belong to `local_*` tables and
 * `vector_top_k` is no function it may call (kernel/runtime/sql-sandbox/sql-policy.mjs).
 */
import type { Sql } from '../agents/sql.js';

export const VECTOR_TABLE = 'agt_memory_vectors';
export const VECTOR_INDEX = 'agt_memory_vectors_idx';

/** Names of the tables and indexes the vector index brings (its shadow table and libsql's metadata). */
export const MEMORY_RUNTIME_OBJECTS: ReadonlySet<string> = new Set([
  VECTOR_TABLE,
  VECTOR_INDEX,
  `${VECTOR_INDEX}_shadow`,
  `${VECTOR_INDEX}_shadow_idx`,
  'libsql_vector_meta_shadow',
]);

/**
 * DiskANN settings: with libsql's defaults each node keeps its neighbours' full vectors (2,000 random
 * 768-float vectors: 315 MB, 20 ms per insert); 1-bit neighbours and at most 32 of them cut that to about
 * a tenth (docs/memory.md "Performance"). Distances of the results are computed on the full vectors.
 */
const INDEX_OPTIONS = "'metric=cosine', 'compress_neighbors=float1bit', 'max_neighbors=32'";

/** The widest vector accepted (text-embedding-3-large has 3072). */
export const MAX_DIMENSIONS = 4096;

/** The embedding model the vector table holds vectors of (`provider/model/dimensions`), or undefined. */
export function vectorModel(sql: Sql): string | undefined {
  return sql.one<{ value: string }>("SELECT value FROM agt_memory_state WHERE key = 'embeddings'")?.value;
}

/** Width of the vector table now, or undefined when there is none. */
export function vectorWidth(sql: Sql): number | undefined {
  const row = sql.one<{ sql: string }>("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", VECTOR_TABLE);
  const match = row ? /F32_BLOB\((\d+)\)/i.exec(row.sql) : null;
  return match ? Number(match[1]) : undefined;
}

/**
 * Makes sure the vector table holds vectors of `model` with `dimensions`: when another model (or none)
 * filled it, it is dropped and made again empty, so every memory waits to be embedded again (the
 * re-embedding resumes from whatever is missing). True when it was (re)made.
 */
export function ensureVectorTable(sql: Sql, model: string, dimensions: number): boolean {
  if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > MAX_DIMENSIONS) throw new RangeError(`dimensions ${dimensions}`);
  if (vectorModel(sql) === model && vectorWidth(sql) === dimensions) return false;
  sql.transaction(() => {
    dropVectorTable(sql);
    // `dimensions` is an integer checked above: DDL cannot bind it.
    sql.exec(`CREATE TABLE ${VECTOR_TABLE} (memory_id INTEGER PRIMARY KEY, embedding F32_BLOB(${dimensions}) NOT NULL)`);
    sql.exec(`CREATE INDEX ${VECTOR_INDEX} ON ${VECTOR_TABLE}(libsql_vector_idx(embedding, ${INDEX_OPTIONS}))`);
    sql.run("INSERT INTO agt_memory_state (key, value) VALUES ('embeddings', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", model);
  });
  return true;
}

/** Drops the vector table and its index (no vectors: full-text search only). */
export function dropVectorTable(sql: Sql): void {
  sql.exec(`DROP INDEX IF EXISTS ${VECTOR_INDEX}`);
  sql.exec(`DROP TABLE IF EXISTS ${VECTOR_TABLE}`);
  sql.run("DELETE FROM agt_memory_state WHERE key = 'embeddings'");
}

export function hasVectorTable(sql: Sql): boolean {
  return sql.one("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = ?", VECTOR_TABLE) !== undefined;
}

/** A vector as the BLOB libsql's `F32_BLOB` stores (little-endian float32). */
export function vectorBlob(vector: readonly number[] | Float32Array): Buffer {
  const floats = vector instanceof Float32Array ? vector : Float32Array.from(vector);
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength);
}
