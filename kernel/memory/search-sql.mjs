// The memory's two searches as SQL on a libsql connection: the daemon's own (memory-store.ts) and the
// search worker's (search-worker.mjs) run the same statements. Plain JavaScript, so the worker loads it
// without the TypeScript loader.

/** Full-text matches of an FTS5 query (memory-store.ts `ftsQuery`), best first by BM25. */
export const FULL_TEXT_SQL =
  'SELECT rowid AS id, bm25(agt_memory_fts) AS score FROM agt_memory_fts WHERE agt_memory_fts MATCH ? ORDER BY score LIMIT ?';

/** Words as an FTS5 query matching any of them (each quoted: no FTS5 syntax comes from the words), or null. */
export const anyOf = (terms) => (terms.length === 0 ? null : terms.map((word) => `"${word}"`).join(' OR '));
const allOf = (terms) => terms.map((word) => `"${word}"`).join(' AND ');

/**
 * A word found in more memories than this is left out of a large file's full-text search when the query
 * has rarer words: BM25 is computed for every memory that matches, so one common word would make it rank
 * most of the file, and such a word weighs little in BM25 anyway (its inverse document frequency is low).
 */
export const COMMON_WORD_MEMORIES = 2_000;
const WORD_COUNT_SQL = `SELECT COUNT(*) AS n FROM (SELECT 1 FROM agt_memory_fts WHERE agt_memory_fts MATCH ? LIMIT ${COMMON_WORD_MEMORIES + 1})`;
/** The newest matches, ranked by BM25 among themselves (a query of common words only). */
const NEWEST_TEXT_SQL = `SELECT id, score FROM (SELECT rowid AS id, bm25(agt_memory_fts) AS score FROM agt_memory_fts
  WHERE agt_memory_fts MATCH ? ORDER BY rowid DESC LIMIT ?) ORDER BY score`;

/**
 * The full-text list of a large file's search (the search worker): BM25 over the words that are in at most
 * {@link COMMON_WORD_MEMORIES} memories each; when every word is more common than that, the newest memories
 * holding all of them (else any of them), ranked by BM25 among themselves. Counting a word stops at the bound,
 * so it costs at most that many rows of its index.
 */
export function fullTextRows(all, terms, limit) {
  if (terms.length === 0) return [];
  const rare = terms.filter((word) => Number(all(WORD_COUNT_SQL, [anyOf([word])])[0].n) <= COMMON_WORD_MEMORIES);
  if (rare.length > 0) return all(FULL_TEXT_SQL, [anyOf(rare), limit]);
  const every = all(NEWEST_TEXT_SQL, [allOf(terms), limit]);
  return every.length > 0 || terms.length === 1 ? every : all(NEWEST_TEXT_SQL, [anyOf(terms), limit]);
}

/** Up to this many vectors a search compares every float32 vector; beyond, it scans the 1-bit copies first. */
export const EXACT_SEARCH_LIMIT = 2_000;
/** Candidates from the 1-bit scan per result asked, and at least this many. */
export const OVERSAMPLE = 8;
export const MIN_CANDIDATES = 400;

// Counted only up to the limit: a COUNT(*) of a large table would itself be a scan.
export const COUNT_SQL = 'SELECT COUNT(*) AS n FROM (SELECT 1 FROM agt_memory_bits LIMIT ?)';
export const EXACT_SQL =
  'SELECT memory_id AS id, vector_distance_cos(embedding, ?) AS distance FROM agt_memory_vectors ORDER BY distance LIMIT ?';
export const BITS_SQL = 'SELECT vector1bit(?) AS bits';
/** Candidates the 1-bit scan brings for `limit` results. */
export const candidateCount = (limit) => Math.max(limit * OVERSAMPLE, MIN_CANDIDATES);
/** The candidates (a JSON array of ids) ranked on their float32 vectors. */
export const RESCORE_SQL = `SELECT memory_id AS id, vector_distance_cos(embedding, ?) AS distance FROM agt_memory_vectors
  WHERE memory_id IN (SELECT value FROM json_each(?)) ORDER BY distance LIMIT ?`;
/** The 1-bit scan in SQL (every row read through SQLite): the search worker scans its copy in memory instead. */
export const PREFILTER_SQL = `SELECT v.memory_id AS id, vector_distance_cos(v.embedding, ?) AS distance
  FROM (SELECT memory_id FROM agt_memory_bits ORDER BY vector_distance_cos(bits, ?) LIMIT ?) AS c
  JOIN agt_memory_vectors AS v ON v.memory_id = c.memory_id ORDER BY distance LIMIT ?`;

/**
 * The `limit` nearest memories to `blob` (a float32 vector BLOB), best first. `all(sql, params)` runs a
 * statement with positional parameters and returns its rows. Up to {@link EXACT_SEARCH_LIMIT} vectors every
 * float32 vector is compared; beyond, the 1-bit copies (a 32nd of the bytes) are scanned first for
 * {@link OVERSAMPLE} times `limit` candidates, and those are ranked on their float32 vectors.
 */
export function nearestRows(all, blob, limit) {
  const count = Number(all(COUNT_SQL, [EXACT_SEARCH_LIMIT + 1])[0]?.n ?? 0);
  if (count === 0) return [];
  if (count <= EXACT_SEARCH_LIMIT) return all(EXACT_SQL, [blob, limit]);
  // The query's 1-bit form made once, not once per row scanned.
  const bits = all(BITS_SQL, [blob])[0].bits;
  return all(PREFILTER_SQL, [blob, bits, candidateCount(limit), limit]);
}
