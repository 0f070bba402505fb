/**
 * Memory search latency in one agent file (docs/memory.md "Performance"): `n` memories (made-up
 * sentences, a seeded generator) with vectors of `dims` floats (random unit vectors: the scan's work depends
 * on the width and the count, not on what the vectors mean), written through the memory store as the daemon
 * writes them; then `q` hybrid searches as the daemon runs them beyond 2,000 memories: the two candidate
 * lists on the search worker (kernel/memory/search-worker.mjs), the rows of the candidates read and fused on
 * the daemon's connection (the search minus the embedding call). Each query runs on the daemon's worker
 * ("after") and on the previous one, which scanned the 1-bit vectors in SQL (bench/memory-search-before.mjs,
 * "before"), interleaved, first one then the other, so both see the same load. Also timed on the worker:
 * the full-text list alone and the vector list alone.
 *
 * Exactness: for `q` queries made from a stored vector plus noise (a near duplicate), recall@50 and @10 of
 * the worker's vector list against an exact float32 scan of every vector, and how often the stored vector
 * comes first.
 *
 * Run: `node --import tsx bench/memory-search.ts [n=10000] [dims=768] [q=200] [--keep=<path>] [--file=<path>]`
 * (`--file` searches a file kept by an earlier run instead of writing one)
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { AgentFile } from '../kernel/agents/agent-file.js';
import { fuse } from '../kernel/memory/fusion.js';
import { ftsTerms } from '../kernel/memory/memory-store.js';
import { EXACT_SQL } from '../kernel/memory/search-sql.mjs';
import { endSearchThread, searchOnThread, type ThreadResult } from '../kernel/memory/search-thread.js';
import { useVectorModel, vectorBlob } from '../kernel/memory/vectors.js';
import { agentConfig } from '../test/helpers/agent-file.js';

const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const n = Number(args[0] ?? 10_000);
const dims = Number(args[1] ?? 768);
const queries = Number(args[2] ?? 200);
const keep = process.argv.find((a) => a.startsWith('--keep='))?.slice(7);
const existing = process.argv.find((a) => a.startsWith('--file='))?.slice(7);

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

const dir = existing || keep ? undefined : mkdtempSync(join(tmpdir(), 'agt-memory-bench-'));
const path = existing ?? keep ?? join(dir!, 'bench.agt');
const file = existing ? AgentFile.open(path) : AgentFile.create(path, agentConfig({ name: 'bench' }));
let writeSeconds = 0;
if (!existing) {
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
  writeSeconds = (performance.now() - started) / 1000;
  process.stderr.write('\n');
}
const count = file.memory.count().live;

// The previous worker, answering the same messages.
const before = new Worker(new URL('./memory-search-before.mjs', import.meta.url), { execArgv: [] });
let beforeId = 1;
const onBefore = (search: object) =>
  new Promise<ThreadResult>((resolve, reject) => {
    const id = beforeId++;
    const listener = (reply: { id: number; ok: boolean; message?: string } & ThreadResult) => {
      if (reply.id !== id) return;
      before.off('message', listener);
      if (reply.ok) resolve(reply);
      else reject(new Error(reply.message));
    };
    before.on('message', listener);
    before.postMessage({ id, ...search });
  });

type Search = { terms: string[]; vector: Buffer | null };
const message = (search: Search) => ({ path, depth: 50, ...search, bits: file.memory.takeVectorChanges() });
const fused = (lists: ThreadResult) => {
  const found = new Map(
    file.memory
      .many([...new Set([...lists.text.map((h) => h.id), ...lists.vector.map((h) => h.id)])])
      .map((m) => [m.id, m]),
  );
  return fuse(lists.text, lists.vector, (id) => found.get(id), Date.now());
};
const time = async (fn: () => Promise<unknown>) => {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
};
const after = (search: Search) => time(async () => fused(await searchOnThread(message(search))));
const previous = (search: Search) => time(async () => fused(await onBefore(message(search))));

// A first pass: the worker reads its copy of the 1-bit vectors (timed), and pages are in the OS cache.
const loadMs = await after({ terms: [], vector: vectorBlob(unitVector()) });
for (let i = 0; i < 10; i++) {
  const search = { terms: ftsTerms(sentence(3)), vector: vectorBlob(unitVector()) };
  await after(search);
  await previous(search);
}
const times = { before: [] as number[], after: [] as number[], fulltext: [] as number[], vector: [] as number[] };
for (let i = 0; i < queries; i++) {
  const search = { terms: ftsTerms(sentence(3)), vector: vectorBlob(unitVector()) };
  if (i % 2 === 0) times.after.push(await after(search)), times.before.push(await previous(search));
  else times.before.push(await previous(search)), times.after.push(await after(search));
  times.fulltext.push(await after({ terms: search.terms, vector: null }));
  times.vector.push(await after({ terms: [], vector: search.vector }));
}

// Exactness of the vector list: queries made from stored vectors plus noise.
const stored = file.raw.all<{ id: number; embedding: Uint8Array }>(
  'SELECT memory_id AS id, embedding FROM agt_memory_vectors ORDER BY random() LIMIT ?',
  queries,
);
let top1 = 0;
let recall50 = 0;
let recall10 = 0;
for (const row of stored) {
  const floats = new Float32Array(new Uint8Array(row.embedding).buffer);
  const noisy = Array.from(floats, (x) => x + (random() * 2 - 1) * 0.05);
  const norm = Math.hypot(...noisy);
  const blob = vectorBlob(noisy.map((x) => x / norm));
  const exact = file.raw.all<{ id: number }>(EXACT_SQL, blob, 50).map((r) => r.id);
  const fast = (await searchOnThread(message({ terms: [], vector: blob }))).vector.map((r) => r.id);
  if (fast[0] === row.id) top1++;
  recall50 += fast.filter((id) => exact.includes(id)).length / exact.length;
  recall10 += fast.slice(0, 10).filter((id) => exact.slice(0, 10).includes(id)).length / 10;
}
await endSearchThread();
await before.terminate();
await file.close();
const bytes = statSync(path).size;
console.log(
  JSON.stringify({
    memories: count,
    dims,
    queries,
    write_seconds: +writeSeconds.toFixed(1),
    file_mb: +(bytes / 1024 / 1024).toFixed(1),
    bits_load_ms: +loadMs.toFixed(1),
    hybrid_before_ms: summary(times.before),
    hybrid_after_ms: summary(times.after),
    fulltext_after_ms: summary(times.fulltext),
    vector_after_ms: summary(times.vector),
    near_duplicate_first: +(top1 / stored.length).toFixed(3),
    recall_at_10: +(recall10 / stored.length).toFixed(3),
    recall_at_50: +(recall50 / stored.length).toFixed(3),
  }),
);
if (dir) rmSync(dir, { recursive: true, force: true });
