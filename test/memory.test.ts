/**
 * Agent memory on the built daemon (docs/memory.md), against a real agent file made at schema version 8
 * (before memory) and migrated at load: the agent's memory tools (full-text only and saying so without an
 * embedding model), refusal of credential values and past the storage quota; with the test embedder
 * (test/fakes/embedder.ts) the background embedding, hybrid search finding a paraphrase full-text
 * cannot, its tokens in the usage ledger, and the fall-back when the embedder fails; recall before a
 * turn (the marked block in the model's system prompt, `memory.recalled`); the owner's routes; what
 * compaction summarizes kept as memories; and all of it again after a restart.
 */
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { runDaemon, shippedManifest, tempDir } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';
import { agtInProcess } from './helpers/cli-in-process.js';
import { startToolDriver } from './helpers/tool-driver.js';
import { embedText, startFakeEmbedder } from './fakes/embedder.js';
import { useVectorModel } from '../kernel/memory/vectors.js';
import { reply, type RecordedRequest } from './fakes/openai.js';

const root = t;
const SUMMARY = 'Summary: the owner likes green tea and drives a red Volvo.';
const isSummaryCall = (request: RecordedRequest) =>
  String((request.body.messages as Array<{ content: unknown }>)[0]?.content).startsWith('You compact');
const driver = await startToolDriver(t, (request) =>
  isSummaryCall(request) ? reply.text(SUMMARY) : reply.text('noted'),
);
const embedder = await startFakeEmbedder(t);
const EMBEDDINGS = { provider: 'embed', model: 'hash', dimensions: 256 };
const path = await createAgentFile(tempDir(t), { name: 'rememberer', model: driver.model }, { version: 8 });

let d = await runDaemon(t, {
  extensions: shippedManifest({ providers: { maxRetries: 0 } }),
  settings: { providers: [driver.provider, embedder.provider] },
});
let log = await eventLog(t, d);
const PASSPHRASE = 'memory test passphrase';
const identity = await d.request('POST', '/identity/create', { passphrase: PASSPHRASE });
if (identity.status !== 201) throw new Error(`identity: ${identity.status} ${JSON.stringify(identity.body)}`);
const load = async () => {
  const loaded = await d.request('POST', '/agents/load', { filePath: path }).catch((error: unknown) => {
    throw new Error(`load: ${String(error)}; the daemon said: ${d.stderr()}`);
  });
  if (loaded.status !== 200) throw new Error(`load: ${loaded.status} ${JSON.stringify(loaded.body)}`);
  return loaded.body.id as string;
};
const id = await load();
const memory = (query = '') => d.request('GET', `/agents/${id}/memory${query}`);
const run = (tool: string, args: Record<string, unknown>) => driver.run(d, id, tool, args);
const settle = async (what: string) => {
  // Background embedding ends with nothing pending.
  const start = log.events.length;
  const status = (await memory()).body.status;
  if (status.embeddings.pending === 0) return;
  await log.waitFor(
    (e) => e.event_type === 'memory.embedded' && (e.payload as { pending: number }).pending === 0,
    what,
    { from: Math.max(start - 50, 0) },
  );
};

t.test(
  'an old file is migrated; without an embedding model the agent saves and searches full-text, and says so',
  async (t) => {
    const saved = JSON.parse(await run('memory_save', { text: 'The owner prefers green tea in the morning' }));
    t.match(saved, { saved: true, kind: 'fact' });
    const event = await log.waitFor((e) => e.event_type === 'memory.saved', 'memory.saved');
    t.match(event.payload, { memory_id: saved.id, kind: 'fact', source: 'agent' });
    await run('memory_save', { text: 'Deploys happen on Tuesdays after the standup', kind: 'instruction' });

    const found = JSON.parse(await run('memory_search', { query: 'which tea does the owner like?' }));
    t.equal(found.mode, 'fulltext');
    t.match(found.note, /no embedding model configured/);
    t.same(
      found.memories.map((m: { id: number }) => m.id),
      [saved.id],
      'BM25 finds the tea, not the deploys',
    );

    const listed = await memory();
    t.equal(listed.status, 200);
    t.match(listed.body.status, {
      live: 2,
      forgotten: 0,
      embeddings: { configured: false, model: null, embedded: 0, pending: 2 },
    });
    t.same(
      listed.body.memories.map((m: { kind: string }) => m.kind),
      ['instruction', 'fact'],
      'newest first',
    );
    t.match(listed.body.memories[1], { source: 'agent', loop: 'main', used_at: String });
  },
);

t.test("a memory never holds a credential value; the agent's saves stay within its storage quota", async (t) => {
  const secret = 'correct-horse-battery-staple-42';
  t.equal((await d.request('PUT', `/agents/${id}/credentials/shop_password`, { value: secret })).status, 200);
  const refused = await run('memory_save', { text: `the shop password is ${secret}` });
  t.match(refused, /credential/);
  const owner = await d.request('POST', `/agents/${id}/memory`, { text: `note: ${secret}` });
  t.equal(owner.status, 403);
  t.match(owner.body, { code: 'key_material_refused', error: /credential/ });
  const shaped = await d.request('POST', `/agents/${id}/memory`, {
    text: 'key sk-proj-abcdefghijklmnopqrstuvwxyz0123',
  });
  t.equal(shaped.status, 403, 'a vendor key shape is refused too');
  t.equal((await memory()).body.status.live, 2, 'nothing was stored');

  t.equal((await d.request('PATCH', '/settings', { storage: { agentQuotas: { [id]: 65_536 } } })).status, 200);
  t.match(await run('memory_save', { text: 'one more thing to remember' }), /storage quota/);
  const byOwner = await d.request('POST', `/agents/${id}/memory`, { text: 'the owner writes past the agent quota' });
  t.equal(byOwner.status, 201, "the owner's writes are not held to the agent's quota");
  t.equal((await d.request('DELETE', `/agents/${id}/memory/${byOwner.body.memory.id}?purge=true`)).status, 200);
  t.equal((await d.request('PATCH', '/settings', { storage: null })).status, 200);
});

t.test(
  'with an embedding model: background embedding, hybrid search finds a paraphrase, its tokens in the ledger',
  async (t) => {
    t.equal((await d.request('PATCH', '/settings', { memory: { embeddings: EMBEDDINGS } })).status, 200);
    const car = await d.request('POST', `/agents/${id}/memory`, {
      text: "The owner's car is a red Volvo",
      kind: 'fact',
    });
    t.equal(car.status, 201);
    await settle('every memory embedded');
    const status = (await memory()).body.status;
    t.match(status.embeddings, { configured: true, model: 'embed/hash/256', embedded: 3, pending: 0 });
    t.ok(
      embedder.inputs().flat().includes('The owner prefers green tea in the morning'),
      'memories saved before the model was set were embedded too',
    );

    const fulltextOnly = (await memory(`?q=${encodeURIComponent('automobile')}`)).body;
    t.equal(fulltextOnly.mode, 'hybrid');
    t.equal(fulltextOnly.hits[0].memory.id, car.body.memory.id, 'the paraphrase finds the car');
    t.equal(fulltextOnly.hits[0].text_rank, undefined, 'full-text alone did not find it');
    t.ok(fulltextOnly.hits[0].distance < 0.6);

    const both = (await memory(`?q=${encodeURIComponent('red automobile')}`)).body;
    t.equal(both.hits[0].memory.id, car.body.memory.id);
    t.ok(both.hits[0].text_rank === 1 && both.hits[0].distance !== undefined, 'in both lists: fused');

    const usage = (await d.request('GET', '/usage?groupBy=model')).body;
    const embedding = usage.groups.find((g: { key: string }) => g.key === 'embed/hash');
    t.ok(embedding && embedding.input > 0 && embedding.output === 0, 'embedding calls are in the spend ledger');

    embedder.failWith = 500;
    const degraded = (await memory('?q=car')).body;
    t.equal(degraded.mode, 'fulltext');
    t.match(degraded.note, /embedding call failed/);
    t.equal(degraded.hits[0].memory.id, car.body.memory.id, 'full-text still answers');
    embedder.failWith = null;
  },
);

t.test('recall: the relevant and pinned memories go to the model before a turn, marked, with their ids', async (t) => {
  const deploys = (await memory('?kind=instruction')).body.memories[0];
  t.equal((await d.request('PATCH', `/agents/${id}/memory/${deploys.id}`, { pinned: true })).body.memory.pinned, true);
  const car = (await memory('?q=volvo')).body.hits[0].memory;
  const before = driver.fake.chatRequests().length;
  const from = log.events.length;
  const turnId = (await d.request('POST', `/agents/${id}/chat`, { text: 'Which automobile should I take today?' })).body
    .turnId;
  const recalled = await log.waitFor(
    (e) => e.event_type === 'memory.recalled' && e.turn_id === turnId,
    'memory.recalled',
    { from },
  );
  const ids = (recalled.payload as { memory_ids: number[] }).memory_ids;
  t.same(ids.slice(0, 2), [deploys.id, car.id], 'pinned first, then the relevant one');
  t.notOk(ids.includes((await memory('?q=tea')).body.hits[0].memory.id), 'the unrelated tea memory stays out');
  await log.waitFor((e) => e.event_type === 'turn.completed' && e.turn_id === turnId, 'the turn ends', { from });
  const system = String(
    (driver.fake.chatRequests()[before]!.body.messages as Array<{ role: string; content: string }>)[0]!.content,
  );
  t.match(system, /<recalled-memories>[\s\S]*\[memory \d+\][\s\S]*red Volvo[\s\S]*<\/recalled-memories>/);
  t.match(system, new RegExp(`\\[memory ${deploys.id}\\] \\(instruction, pinned`));
});

t.test("the owner's routes: add, change, forget (kept as forgotten), purge; coded errors", async (t) => {
  const added = await d.request('POST', `/agents/${id}/memory`, {
    text: 'The dentist appointment is on Friday',
    kind: 'episode',
  });
  t.equal(added.status, 201);
  const mid = added.body.memory.id;
  const changed = await d.request('PATCH', `/agents/${id}/memory/${mid}`, {
    text: 'The dentist appointment moved to Monday',
  });
  t.match(changed.body.memory, { text: 'The dentist appointment moved to Monday', kind: 'episode' });
  t.same(
    (await memory('?q=friday')).body.hits.filter((h: { memory: { id: number } }) => h.memory.id === mid),
    [],
    'the old text is out of the index',
  );
  t.equal((await memory('?q=monday')).body.hits[0].memory.id, mid);

  t.match(await run('memory_forget', { id: mid }), `forgot memory ${mid}`);
  t.same(
    (await memory('?q=dentist')).body.hits.filter((h: { memory: { id: number } }) => h.memory.id === mid),
    [],
    'out of every search',
  );
  const forgotten = (await memory('?forgotten=true')).body.memories;
  t.match(forgotten, [{ id: mid, forgotten_at: String }], 'kept as forgotten for the owner');
  t.equal((await d.request('DELETE', `/agents/${id}/memory/${mid}?purge=true`)).status, 200);
  t.same((await memory('?forgotten=true')).body.memories, []);

  const missing = await d.request('DELETE', `/agents/${id}/memory/${mid}`);
  t.equal(missing.status, 404);
  t.match(missing.body, { code: 'not_found', error: `no memory ${mid}` });
  t.equal((await d.request('PATCH', `/agents/${id}/memory/${mid}`, {})).status, 400, 'an empty patch');
  t.equal(
    (await d.request('POST', `/agents/${id}/memory`, { text: 'x', kind: 'rumour' })).status,
    400,
    'an unknown kind',
  );
  t.match(await run('memory_forget', { id: 999_999 }), /no memory 999999/);
});

t.test('compaction keeps what it summarizes away as memories', async (t) => {
  const from = log.events.length;
  const compacted = await d.request('POST', `/agents/${id}/compact`);
  t.equal(compacted.status, 200, JSON.stringify(compacted.body));
  const event = await log.waitFor((e) => e.event_type === 'loop.compacted', 'loop.compacted', { from });
  const kept = (event.payload as { memories: number[] }).memories;
  t.ok(kept.length >= 2, 'the summary and the summarized turns');
  const summaries = (await memory('?kind=summary')).body.memories;
  t.match(summaries, [{ text: SUMMARY, source: 'compaction', kind: 'summary' }]);
  const episodes = (await memory('?kind=episode')).body.memories;
  t.ok(
    episodes.some((m: { text: string }) => /^Asked: run tool 1\nAnswered: done$/.test(m.text)),
    'an episode per summarized turn',
  );
  t.notOk(
    episodes.some((m: { text: string }) => m.text.includes('correct-horse')),
    'no credential value went into a memory',
  );
  await settle('compaction memories embedded');
  t.ok((await memory(`?q=${encodeURIComponent('what did I ask first')}`)).body.hits.length > 0);
});

t.test('agt memory: add, ls, search, pin, rm', async (t) => {
  const agt = (...args: string[]) =>
    agtInProcess(args, { AGT_DAEMON_URL: d.url, AGT_DAEMON_TOKEN: d.token, NO_COLOR: '1' });
  const added = await agt('memory', 'add', 'rememberer', 'The wifi in the office is called Bramble', '--kind', 'fact');
  t.equal(added.code, 0, added.stderr);
  const mid = Number(/saved memory (\d+)/.exec(added.stdout)?.[1]);
  t.ok(mid > 0);
  const listed = await agt('memory', 'ls', 'rememberer');
  t.match(listed.stdout, /memories, \d+ pinned \(\*\), \d+ forgotten; embeddings embed\/hash\/256/);
  t.match(listed.stdout, new RegExp(`${mid} +fact +owner .*Bramble`));
  const found = await agt('memory', 'search', 'rememberer', 'office wifi', '--json');
  t.equal(JSON.parse(found.stdout).memories[0].id, mid);
  t.equal((await agt('memory', 'pin', 'rememberer', String(mid))).code, 0);
  t.match((await agt('memory', 'ls', 'rememberer', '--pinned')).stdout, new RegExp(`${mid} \\*`));
  const refused = await agt('memory', 'add', 'rememberer', 'token ghp_abcdefghijklmnopqrstuvwxyz0123456789');
  t.equal(refused.code, 1);
  t.match(refused.stderr, /key_material_refused/);
  t.equal((await agt('memory', 'rm', 'rememberer', String(mid), '--purge')).code, 0);
  t.equal((await agt('memory', 'rm', 'rememberer', String(mid))).code, 1, 'gone');
});

t.test('after a restart: the memories, their vectors and recall are all still there', async (t) => {
  const before = (await memory()).body;
  // The owner identity unlocked at start: the backup's restore as a new agent needs it.
  d = await d.restart({ AGT_OWNER_PASSPHRASE: PASSPHRASE });
  // Read for the rest of the file: closed with the file's own test, not this one.
  log = await eventLog(root, d);
  await load();
  const after = (await memory()).body;
  t.same(
    after.memories.map((m: { id: number }) => m.id),
    before.memories.map((m: { id: number }) => m.id),
  );
  t.match(after.status.embeddings, { model: 'embed/hash/256', pending: 0 });
  const calls = embedder.inputs().length;
  const search = (await memory('?q=automobile')).body;
  t.equal(search.mode, 'hybrid');
  t.match(search.hits[0].memory.text, /red Volvo/);
  t.equal(embedder.inputs().length, calls + 1, 'only the query was embedded: the stored vectors were kept');
  const turnId = (await d.request('POST', `/agents/${id}/chat`, { text: 'my automobile?' })).body.turnId;
  const recalled = await log.waitFor(
    (e) => e.event_type === 'memory.recalled' && e.turn_id === turnId,
    'recall after the restart',
  );
  const car = search.hits[0].memory.id as number;
  t.ok(
    (recalled.payload as { memory_ids: number[] }).memory_ids.includes(car),
    'a memory saved before the compaction and the restart is recalled',
  );
});

t.test('a new embedding model: the vectors are made again in the background, and search stays hybrid', async (t) => {
  const from = log.events.length;
  t.equal(
    (await d.request('PATCH', '/settings', { memory: { embeddings: { ...EMBEDDINGS, dimensions: 128 } } })).status,
    200,
  );
  const first = (await memory('?q=automobile')).body;
  t.equal(first.mode, 'hybrid', 'the search itself embeds its query with the new model');
  await log.waitFor(
    (e) =>
      e.event_type === 'memory.embedded' &&
      (e.payload as { model: string; pending: number }).model === 'embed/hash/128' &&
      (e.payload as { pending: number }).pending === 0,
    're-embedded',
    { from },
  );
  const status = (await memory()).body.status;
  t.match(status.embeddings, { model: 'embed/hash/128', pending: 0, embedded: status.live });
  t.match((await memory('?q=automobile')).body.hits[0].memory.text, /red Volvo/);
  t.ok(
    embedder.inputs().some((batch) => batch.length > 1 && batch.includes("The owner's car is a red Volvo")),
    'every memory went to the embedder again',
  );
});

t.test('a backup carries the memories and their indexes: restored as a new agent, it searches them', async (t) => {
  const copy = await d.request('POST', `/agents/${id}/backup`, { path: tempDir(t) });
  t.equal(copy.status, 200, JSON.stringify(copy.body));
  const restored = await d.request('POST', '/agents/restore', {
    from: copy.body.path,
    to: `${tempDir(t)}/copy.agt`,
    asNew: true,
    name: 'remembered-copy',
  });
  t.equal(restored.status, 200, JSON.stringify(restored.body));
  const copyId = restored.body.agentId as string;
  t.not(copyId, id);
  const mine = (await memory()).body.memories.map((m: { id: number; text: string }) => [m.id, m.text]);
  const theirs = (await d.request('GET', `/agents/${copyId}/memory`)).body;
  t.same(
    theirs.memories.map((m: { id: number; text: string }) => [m.id, m.text]),
    mine,
  );
  t.match(theirs.status.embeddings, { model: 'embed/hash/128', pending: 0 }, 'the vectors came along');
  const search = (await d.request('GET', `/agents/${copyId}/memory?q=automobile`)).body;
  t.equal(search.mode, 'hybrid');
  t.match(search.hits[0].memory.text, /red Volvo/);
});

t.test('a large memory is searched on the worker thread: both lists, the same answers', async (t) => {
  const model = 'embed/hash/128';
  const seeded = await createAgentFile(
    tempDir(t),
    { name: 'hoarder', model: driver.model },
    {
      seed: (file) => {
        useVectorModel(file.raw, model);
        const texts = [
          ...Array.from({ length: 2_100 }, (_, i) => `note ${i} about topic ${i % 50} and the weekly report`),
          'The family dog is called Biscuit',
        ];
        const memories = file.transaction(() =>
          texts.map((text) => file.memory.add({ text, source: 'owner' }, Date.now())),
        );
        file.memory.putVectors(memories.map((m) => ({ id: m.id, text: m.text, vector: embedText(m.text, 128) })));
      },
    },
  );
  const loaded = await d.request('POST', '/agents/load', { filePath: seeded });
  t.equal(loaded.status, 200, JSON.stringify(loaded.body));
  const hoarder = loaded.body.id as string;
  t.match((await d.request('GET', `/agents/${hoarder}/memory?limit=1`)).body.status, {
    live: 2_101,
    embeddings: { model, pending: 0 },
  });
  const byMeaning = (await d.request('GET', `/agents/${hoarder}/memory?q=puppy`)).body;
  t.equal(byMeaning.mode, 'hybrid');
  t.match(byMeaning.hits[0], { memory: { text: 'The family dog is called Biscuit' }, distance: Number });
  t.equal(byMeaning.hits[0].text_rank, undefined, 'found by its vector alone');
  const byWords = (await d.request('GET', `/agents/${hoarder}/memory?q=${encodeURIComponent('note 1234')}`)).body;
  t.match(
    byWords.hits.find((h: { text_rank?: number }) => h.text_rank === 1),
    { memory: { text: /^note 1234 about/ } },
    'BM25 ranks the one with the rare word first',
  );
});
