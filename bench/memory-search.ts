/**
 * Memory search latency in one agent file (docs/memory.md "Performance"): `n` memories (made-up
 * sentences, a seeded generator) with vectors of `dims` floats (random unit
 * vectors: the index's work depends on the width and the count, not on what the vectors mean), written
 * through the memory store as the daemon writes them; then `q` queries of each kind, timed on the
 * daemon's connection, which is also how long each blocks the event loop:
 * - full-text: the FTS5 BM25 query of 3 words (depth 50, as the service asks);
 * - vector: the 50 nearest by cosine distance (every float32 vector up to 20,000 of them; beyond, the 1-bit
 *   copies scanned first, the candidates ranked on float32: memory-store.ts `nearest`);
 * - hybrid: both, the rows of the candidates read and fused (fusion.ts): the search minus the embedding call.
 *
 * Run: `node --import tsx bench/memory-search.ts [n=10000] [dims=768] [q=200] [--keep=<path>]`
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentFile } from '../kernel/agents/agent-file.js';
import { fuse } from '../kernel/memory/fusion.js';
import { EXACT_SEARCH_LIMIT } from '../kernel/memory/search-sql.mjs';
import { useVectorModel } from '../kernel/memory/vectors.js';
import { agentConfig } from '../test/helpers/agent-file.js';

const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const n = Number(args[0] ?? 10_000);
const dims = Number(args[1] ?? 768);
const queries = Number(args[2] ?? 200);
const keep = process.argv.find((a) => a.startsWith('--keep='))?.slice(7);

let seed = 42;
const random = () => (seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32;
// A vocabulary of 5,000 made-up words drawn with Zipf's law (s = 1), as words in text are: a few very
// common ones, most rare. Queries draw from the same law.
const VOCABULARY = Array.from({ length: 5_000 }, (_, i) => `w${i.toString(36)}`);
const weights = VOCABULARY.map((_, i) => 1 / (i + 1));
const cumulative: number[] = [];
weights.reduce((sum, w, i) => (cumulative[i] = sum + w), 0);
const total = cumulative.at(-1)!;
const word = () => {
  const x = random() * total;
  let lo = 0;
  let hi = cumulative.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cumulative[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return VOCABULARY[lo]!;
};
const sentence = (length: number) => Array.from({ length }, word).join(' ');
const unitVector = () => {
  const v = Array.from({ length: dims }, () => random() * 2 - 1);
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
};
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
const summary = (times: number[]) => {
  const sorted = [...times].sort((a, b) => a - b);
  return {
    p50: +percentile(sorted, 50).toFixed(2),
    p95: +percentile(sorted, 95).toFixed(2),
    max: +sorted.at(-1)!.toFixed(2),
  };
};

const dir = mkdtempSync(join(tmpdir(), 'agt-memory-bench-'));
const path = keep ?? join(dir, 'bench.agt');
const file = AgentFile.create(path, agentConfig({ name: 'bench' }));
file.finishCreation();
useVectorModel(file.raw, `bench/random/${dims}`);

const started = performance.now();
const BATCH = 500;
for (let done = 0; done < n; done += BATCH) {
  const batch = Array.from({ length: Math.min(BATCH, n - done) }, () => ({
    text: sentence(8 + Math.floor(random() * 16)),
    vector: unitVector(),
  }));
  const memories = file.transaction(() =>
    batch.map((item) => file.memory.add({ text: item.text, source: 'agent' }, Date.now())),
  );
  file.memory.putVectors(memories.map((m, i) => ({ id: m.id, text: m.text, vector: batch[i]!.vector })));
  if ((done / BATCH) % 20 === 0) process.stderr.write(`\r${done + batch.length} / ${n}`);
}
const writeSeconds = (performance.now() - started) / 1000;
process.stderr.write('\n');

const time = (fn: () => unknown) => {
  const t0 = performance.now();
  fn();
  return performance.now() - t0;
};
// One pass first so pages are in SQLite's cache, as in a daemon that searched before.
for (let i = 0; i < 20; i++) file.memory.fullText(sentence(3), 50), file.memory.nearest(unitVector(), 50);
const texts = Array.from({ length: queries }, () => sentence(3));
const vectors = Array.from({ length: queries }, () => unitVector());
const fullText = texts.map((q) => time(() => file.memory.fullText(q, 50)));
const vector = vectors.map((v) => time(() => file.memory.nearest(v, 50)));
const hybrid = texts.map((q, i) =>
  time(() => {
    const a = file.memory.fullText(q, 50);
    const b = file.memory.nearest(vectors[i]!, 50);
    const found = new Map(
      file.memory.many([...new Set([...a.map((h) => h.id), ...b.map((h) => h.id)])]).map((m) => [m.id, m]),
    );
    fuse(a, b, (id) => found.get(id), Date.now());
  }),
);
await file.close();
const bytes = statSync(path).size;
console.log(
  JSON.stringify({
    memories: n,
    dims,
    vector_search: n <= EXACT_SEARCH_LIMIT ? 'exact' : '1-bit scan, float32 rerank',
    queries,
    write_seconds: +writeSeconds.toFixed(1),
    file_mb: +(bytes / 1024 / 1024).toFixed(1),
    fulltext_ms: summary(fullText),
    vector_ms: summary(vector),
    hybrid_ms: summary(hybrid),
  }),
);
if (!keep) rmSync(dir, { recursive: true, force: true });
