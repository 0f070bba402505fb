/**
 * The vector list of a large file's memory search (docs/memory.md "Search"): the search worker's in-memory
 * 1-bit scan with float32 rescoring returns the same nearest memories, in the same order, as an exact
 * float32 scan of every vector, on a seeded set of 2,500 memories in 50 clusters (past the 2,000 up to which
 * every vector is compared anyway); and its copy of the 1-bit vectors follows the file: a forgotten memory
 * leaves the list, a new vector enters it, a cleared table empties it. The scan's Hamming distances match a
 * bit-by-bit count for widths up to the widest vector, with holes left by removed vectors. The full-text list
 * of a large file leaves out words found in more than 2,000 memories when the query has rarer ones, and for
 * common words only gives the newest memories holding them all.
 */
import t from 'tap';
import { join } from 'node:path';
import { AgentFile } from '../kernel/agents/agent-file.js';
import { BitIndex, bitBytes } from '../kernel/memory/bit-index.mjs';
import { COMMON_WORD_MEMORIES, EXACT_SEARCH_LIMIT, EXACT_SQL, FULL_TEXT_SQL } from '../kernel/memory/search-sql.mjs';
import { endSearchThread, searchOnThread } from '../kernel/memory/search-thread.js';
import { useVectorModel, vectorBlob } from '../kernel/memory/vectors.js';
import { agentConfig } from './helpers/agent-file.js';
import { tempDir } from './helpers/daemon.js';

const DIMS = 64;
const CLUSTERS = 50;
const PER_CLUSTER = 50;
let seed = 7;
const random = () => (seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32;
const unit = (v: number[]) => {
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
};
const noisy = (center: number[], amount: number) => unit(center.map((x) => x + (random() * 2 - 1) * amount));
const centers = Array.from({ length: CLUSTERS }, () => unit(Array.from({ length: DIMS }, () => random() * 2 - 1)));

const path = join(tempDir(t), 'scan.agt');
const file = AgentFile.create(path, agentConfig({ name: 'scan' }));
file.finishCreation();
t.teardown(async () => {
  await endSearchThread();
  if (file.isOpen) await file.close();
});
useVectorModel(file.raw, `test/clusters/${DIMS}`);
const items = centers.flatMap((center, c) =>
  Array.from({ length: PER_CLUSTER }, (_, i) => ({ text: `cluster ${c} member ${i}`, vector: noisy(center, 0.08) })),
);
const memories = file.transaction(() => items.map((item) => file.memory.add({ text: item.text, source: 'agent' }, 1)));
file.memory.putVectors(memories.map((m, i) => ({ id: m.id, text: m.text, vector: items[i]!.vector })));
t.ok(memories.length > EXACT_SEARCH_LIMIT, 'more vectors than an exact search compares');

const exact = (vector: number[], limit: number) =>
  file.raw.all<{ id: number; distance: number }>(EXACT_SQL, vectorBlob(vector), limit);
const scan = async (vector: number[]) =>
  (
    await searchOnThread({
      path,
      terms: [],
      vector: vectorBlob(vector),
      depth: 10,
      bits: file.memory.takeVectorChanges(),
    })
  ).vector;

t.test('the same nearest memories as an exact scan, in the same order', async (t) => {
  for (let q = 0; q < 20; q++) {
    const query = noisy(centers[(q * 7) % CLUSTERS]!, 0.05);
    const fast = await scan(query);
    const truth = exact(query, 10);
    t.same(
      fast.map((hit) => hit.id),
      truth.map((hit) => hit.id),
      `query ${q}`,
    );
    t.ok(Math.abs(fast[0]!.distance - truth[0]!.distance) < 1e-6, 'with the float32 distance');
  }
});

t.test('full-text: common words left out beside rarer ones; common words alone give the newest', async (t) => {
  const text = async (terms: string[]) =>
    (await searchOnThread({ path, terms, vector: null, depth: 50, bits: file.memory.takeVectorChanges() })).text;
  t.ok(memories.length > COMMON_WORD_MEMORIES, '"cluster" and "member" are in every memory, more than the bound');
  const bm25 = (match: string) => file.raw.all<{ id: number; score: number }>(FULL_TEXT_SQL, match, 50);
  t.same(await text(['cluster', '7']), bm25('"7"'), 'the rare word alone, ranked by BM25 as a search for it');
  const newest = await text(['cluster', 'member']);
  t.same(
    newest.map((hit) => hit.id).sort((a, b) => b - a),
    memories
      .map((m) => m.id)
      .sort((a, b) => b - a)
      .slice(0, 50),
    'the newest 50 holding both',
  );
});

t.test('the in-memory copy follows forgets, new vectors and a cleared table', async (t) => {
  const query = noisy(centers[3]!, 0.05);
  const first = (await scan(query))[0]!;
  t.ok(file.memory.forget(first.id, 2), 'forgot the nearest memory');
  const after = await scan(query);
  t.notOk(
    after.some((hit) => hit.id === first.id),
    'a forgotten memory is out of the list',
  );
  t.same(
    after.map((hit) => hit.id),
    exact(query, 10).map((hit) => hit.id),
    'and the list is still the exact one',
  );

  const added = file.memory.add({ text: 'the query itself', source: 'agent' }, 3);
  file.memory.putVectors([{ id: added.id, text: added.text, vector: query }]);
  t.equal((await scan(query))[0]!.id, added.id, 'a new vector is found at once');

  if (useVectorModel(file.raw, 'test/another-model/64')) file.memory.vectorsCleared();
  t.same(await scan(query), [], 'a cleared table leaves nothing to find');
});

t.test("the scan's distances are a bit-by-bit count, at every width and after removals", async (t) => {
  const ones = (bytes: Uint8Array) => bytes.reduce((n, x) => n + [...x.toString(2)].filter((b) => b === '1').length, 0);
  for (const dims of [20, 256, 768, 1000, 4096]) {
    const bytes = bitBytes(dims);
    const index = new BitIndex(bytes);
    // libsql's 1-bit BLOB: the bits, then a trailer the index ignores.
    const rows = Array.from({ length: 600 }, () => {
      const blob = Uint8Array.from({ length: bytes + 2 }, () => Math.floor(random() * 256));
      if (dims % 8) blob[bytes - 1]! &= (1 << (dims % 8)) - 1;
      return blob;
    });
    for (const [i, blob] of rows.entries()) index.set(i + 1, blob);
    for (let id = 1; id <= rows.length; id += 2) index.remove(id);
    const query = rows[9]!;
    const distance = (id: number) => ones(rows[id - 1]!.subarray(0, bytes).map((x, j) => x ^ query[j]!));
    const truth = rows
      .map((_, i) => i + 1)
      .filter((id) => id % 2 === 0)
      .map((id) => distance(id))
      .sort((a, b) => a - b);
    t.same(index.nearest(query, 50).map(distance), truth.slice(0, 50), `${dims} dimensions`);
  }
});
