/**
 * The memory's vectors, on libsql's native vector functions: `agt_memory_vectors` holds each memory's
 * embedding as float32 (what `F32_BLOB` stores), `agt_memory_bits` the same vector in 1 bit per dimension
 * (`vector1bit`), a compact copy that a large search scans first (memory-store.ts). Both tables are
 * plain and made by the migration: a BLOB column takes any width, so no DDL depends on the model.
 * `agt_memory_state` says which model (`provider/model/dimensions`) the stored vectors were made with;
 * when the owner's model changes they are deleted and every memory waits to be embedded again.
 *
 * No DiskANN index (`libsql_vector_idx`): a backup (`VACUUM INTO`) of a file with one carries its
 * metadata row twice and fails SQLite's integrity check, and each insert costs milliseconds and kilobytes
 * (docs/memory.md "What libsql offers here").
 */
import type { Sql } from '../agents/sql.js';

/** The widest vector accepted (text-embedding-3-large has 3072). */
export const MAX_DIMENSIONS = 4096;

/** The embedding model the stored vectors were made with (`provider/model/dimensions`), or undefined. */
export function vectorModel(sql: Sql): string | undefined {
  return sql.one<{ value: string }>("SELECT value FROM agt_memory_state WHERE key = 'embeddings'")?.value;
}

/**
 * Makes `model` the one the stored vectors belong to: when another model made them, they are deleted,
 * so every memory waits to be embedded again (the re-embedding resumes from whatever is missing). True
 * when the vectors were cleared.
 */
export function useVectorModel(sql: Sql, model: string): boolean {
  if (vectorModel(sql) === model) return false;
  sql.transaction(() => {
    sql.run('DELETE FROM agt_memory_vectors');
    sql.run('DELETE FROM agt_memory_bits');
    sql.run(
      "INSERT INTO agt_memory_state (key, value) VALUES ('embeddings', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
      model,
    );
  });
  return true;
}

/** A vector as libsql's float32 vector BLOB (little-endian float32, what `vector32` makes). */
export function vectorBlob(vector: readonly number[] | Float32Array): Buffer {
  const floats = vector instanceof Float32Array ? vector : Float32Array.from(vector);
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength);
}
