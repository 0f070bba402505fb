/**
 * What holds agent memory in bounds, on the built daemon (docs/memory.md): re-embedding after a model change
 * resumes where it stopped, across a failure of the embedder and a restart, without embedding a memory twice;
 * embedding calls are held to the agent's budget by the spend governor (search falls back to full-text);
 * the memory tools follow the agent's tool declarations (restricted: the owner approves or denies each call;
 * disabled: neither offered nor run); recall keeps to the agent's token budget and is off when its config says
 * so; search ranks recent memories up; and a memory forgotten more than 30 days ago is deleted when the file is
 * loaded.
 */
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { runDaemon, shippedManifest, tempDir } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';
import { startToolDriver } from './helpers/tool-driver.js';
import { embedText, startFakeEmbedder } from './fakes/embedder.js';
import { useVectorModel } from '../kernel/memory/vectors.js';

const root = t;
const DAY = 86_400_000;
const driver = await startToolDriver(t);
const embedder = await startFakeEmbedder(t);
const dir = tempDir(t);

// Seventy memories embedded by an older model (64 dimensions), and two forgotten ones.
const TEXTS = Array.from({ length: 70 }, (_, i) => `Memory number ${i}: the weekly report goes to desk ${i}`);
const keeperPath = await createAgentFile(
  dir,
  { name: 'keeper', model: driver.model },
  {
    seed: (file) => {
      useVectorModel(file.raw, 'embed/hash/64');
      const now = Date.now();
      const memories = file.transaction(() => TEXTS.map((text) => file.memory.add({ text, source: 'owner' }, now)));
      file.memory.putVectors(memories.map((m) => ({ id: m.id, text: m.text, vector: embedText(m.text, 64) })));
      const old = file.memory.add({ text: 'forgotten long ago', source: 'owner' }, now - 40 * DAY);
      const recent = file.memory.add({ text: 'forgotten last month', source: 'owner' }, now - 40 * DAY);
      file.memory.forget(old.id, now - 31 * DAY);
      file.memory.forget(recent.id, now - 29 * DAY);
    },
  },
);
const frugalPath = await createAgentFile(dir, {
  name: 'frugal',
  model: driver.model,
  budget: { day_tokens: 40, on_exceeded: 'fail' },
});

const settings = {
  providers: [driver.provider, embedder.provider],
  memory: { embeddings: { provider: 'embed', model: 'hash', dimensions: 128 } },
};
let d = await runDaemon(t, { extensions: shippedManifest({ providers: { maxRetries: 0 } }), settings });
let log = await eventLog(t, d);
const load = async (filePath: string) => {
  const loaded = await d.request('POST', '/agents/load', { filePath });
  if (loaded.status !== 200) throw new Error(`load: ${loaded.status} ${JSON.stringify(loaded.body)}`);
  return loaded.body.id as string;
};

t.test('a memory forgotten more than 30 days ago is deleted at load; a younger one is kept', async (t) => {
  // The embedder answers one batch, then goes down: the next test's re-embedding stops half way.
  embedder.answersLeft = 1;
  const keeper = await load(keeperPath);
  const forgotten = (await d.request('GET', `/agents/${keeper}/memory?forgotten=true`)).body.memories;
  t.same(
    forgotten.map((m: { text: string }) => m.text),
    ['forgotten last month'],
  );
});

t.test('re-embedding after a model change resumes where it stopped, after a failure and a restart', async (t) => {
  const keeper = 'keeper';
  const first = await log.waitFor((e) => e.event_type === 'memory.embedded', 'the first batch');
  t.match(first.payload, { count: 32, pending: 38, model: 'embed/hash/128' }, 'the old vectors were set aside');
  await embedder.handled(2);
  t.equal(embedder.answered().length, 1, 'the second batch failed');
  const halfway = (await d.request('GET', `/agents/${keeper}/memory?limit=1`)).body.status.embeddings;
  t.match(halfway, { model: 'embed/hash/128', embedded: 32, pending: 38 });
  const done = new Set(embedder.answered().flat());

  embedder.answersLeft = null;
  d = await d.restart();
  // Read for the rest of the file: closed with the file's own test, not this one.
  log = await eventLog(root, d);
  const from = log.events.length;
  await load(keeperPath);
  await log.waitFor(
    (e) => e.event_type === 'memory.embedded' && (e.payload as { pending: number }).pending === 0,
    'the rest embedded',
    { from },
  );
  const after = embedder.answered().slice(1).flat();
  t.equal(after.length, 38, 'only the memories still waiting went to the embedder');
  t.same(
    after.filter((text) => done.has(text)),
    [],
    'none of the first batch again',
  );
  t.same(new Set([...done, ...after]), new Set(TEXTS), 'every memory has a vector of the new model');
  t.match((await d.request('GET', `/agents/${keeper}/memory?limit=1`)).body.status.embeddings, {
    model: 'embed/hash/128',
    embedded: 70,
    pending: 0,
  });
  const found = (await d.request('GET', `/agents/${keeper}/memory?q=${encodeURIComponent('desk 7')}`)).body;
  t.equal(found.mode, 'hybrid');
});

t.test("embedding calls are held to the agent's budget: past it, search is full-text and says why", async (t) => {
  const frugal = await load(frugalPath);
  const from = log.events.length;
  const long = `The spare key hangs in the shed ${'behind the blue door '.repeat(10)}`;
  t.equal((await d.request('POST', `/agents/${frugal}/memory`, { text: long })).status, 201);
  const exceeded = await log.waitFor(
    (e) => e.event_type === 'budget.exceeded' && e.agent_id === frugal,
    'the background embedding refused',
    { from },
  );
  t.match(exceeded.payload, { budget: 'agent.day_tokens', limit: 40, action: 'fail' });
  const search = (await d.request('GET', `/agents/${frugal}/memory?q=${encodeURIComponent(long)}`)).body;
  t.equal(search.mode, 'fulltext');
  t.match(search.note, /budget agent\.day_tokens \(40\) would be passed/);
  t.match(search.hits[0].memory.text, /spare key/, 'full-text still answers');
  t.match((await d.request('GET', `/agents/${frugal}/memory?limit=1`)).body.status.embeddings, {
    embedded: 0,
    pending: 1,
  });
  t.notOk(
    embedder.inputs().some((batch) => batch.some((text) => text.includes('spare key'))),
    'the embedder was never called for it',
  );
  // Room for the turns of the next tests.
  const raised = await d.request('PATCH', `/agents/${frugal}/config`, {
    budget: { day_tokens: 1_000_000, on_exceeded: 'fail' },
  });
  t.equal(raised.status, 200, JSON.stringify(raised.body));
});

t.test('the memory tools follow the tool declarations: a restricted call waits for the owner', async (t) => {
  const frugal = 'frugal';
  t.equal(
    (await d.request('PUT', `/agents/${frugal}/tools/memory_save`, { restricted: true })).status,
    200,
    'memory_save restricted',
  );
  const approval = async (from: number) => {
    const requested = await log.waitFor(
      (e) => e.event_type === 'hil.requested' && (e.payload as { tool?: string }).tool === 'memory_save',
      'the approval task',
      { from },
    );
    return (requested.payload as { taskId: string }).taskId;
  };
  const before = (await d.request('GET', `/agents/${frugal}/memory`)).body.status.live;

  let from = log.events.length;
  const denied = driver.run(d, frugal, 'memory_save', { text: 'The owner hates olives' });
  const deny = await d.request('POST', `/agents/${frugal}/tasks/${await approval(from)}/resolve`, {
    action: 'deny',
    reason: 'not worth keeping',
  });
  t.equal(deny.status, 200);
  t.match(await denied, /The owner denied this call of memory_save: not worth keeping/);
  t.equal((await d.request('GET', `/agents/${frugal}/memory`)).body.status.live, before, 'nothing saved');

  from = log.events.length;
  const approved = driver.run(d, frugal, 'memory_save', { text: 'The owner loves capers' });
  const approve = await d.request('POST', `/agents/${frugal}/tasks/${await approval(from)}/resolve`, {
    action: 'approve',
  });
  t.equal(approve.status, 200);
  const saved = JSON.parse(await approved);
  t.match(saved, { saved: true, kind: 'fact' });
  t.match((await d.request('GET', `/agents/${frugal}/memory?limit=1`)).body.memories, [
    { id: saved.id, text: 'The owner loves capers', source: 'agent' },
  ]);
});

t.test('a disabled memory tool is not offered to the model, and a call of it is refused', async (t) => {
  const frugal = 'frugal';
  t.equal((await d.request('PUT', `/agents/${frugal}/tools/memory_forget`, { enabled: false })).status, 200);
  const target = (await d.request('GET', `/agents/${frugal}/memory?limit=1`)).body.memories[0].id as number;
  const sent = driver.fake.chatRequests().length;
  t.match(await driver.run(d, frugal, 'memory_forget', { id: target }), /Unknown or disabled tool: memory_forget/);
  const offered = (driver.fake.chatRequests()[sent]!.body.tools as Array<{ function: { name: string } }>).map(
    (tool) => tool.function.name,
  );
  t.ok(offered.includes('memory_search'), 'the other memory tools are offered');
  t.notOk(offered.includes('memory_forget'), 'the disabled one is not');
  t.equal((await d.request('GET', `/agents/${frugal}/memory?forgotten=true`)).body.memories.length, 0);
  t.match((await d.request('GET', `/agents/${frugal}/memory?limit=1`)).body.memories, [{ id: target }], 'still live');
});

t.test("recall stays within the agent's token budget, and is off when its config says so", async (t) => {
  const frugal = 'frugal';
  for (const text of ['Capers go in the tartare sauce', 'The capers jar is on the top shelf'])
    t.equal((await d.request('POST', `/agents/${frugal}/memory`, { text })).status, 201);
  const turn = async (text: string) => {
    const from = log.events.length;
    const sent = driver.fake.chatRequests().length;
    const turnId = (await d.request('POST', `/agents/${frugal}/chat`, { text })).body.turnId as string;
    await log.waitFor((e) => e.event_type === 'turn.completed' && e.turn_id === turnId, 'the turn ends', { from });
    const recalled = log.events.slice(from).find((e) => e.event_type === 'memory.recalled' && e.turn_id === turnId)
      ?.payload as { memory_ids: number[]; tokens: number } | undefined;
    const messages = driver.fake.chatRequests()[sent]!.body.messages as Array<{ content: unknown }>;
    return { recalled, system: String(messages[0]!.content) };
  };

  const full = await turn('Where are the capers?');
  t.equal(full.recalled?.memory_ids.length, 3, 'the default budget takes every memory about capers');
  t.equal(full.system.match(/\[memory \d+\]/g)?.length, 3);

  t.equal((await d.request('PATCH', `/agents/${frugal}/config`, { memory: { recall_tokens: 60 } })).status, 200);
  const tight = await turn('Where are the capers?');
  t.equal(tight.recalled?.memory_ids.length, 1, 'one fits in 60 tokens');
  t.ok(tight.recalled!.tokens <= 60, `${tight.recalled!.tokens} tokens`);
  t.equal(tight.system.match(/\[memory \d+\]/g)?.length, 1);

  t.equal((await d.request('PATCH', `/agents/${frugal}/config`, { memory: { recall: false } })).status, 200);
  const off = await turn('Where are the capers?');
  t.equal(off.recalled, undefined, 'no memory.recalled');
  t.notMatch(off.system, /recalled-memories/);
});

t.test('search ranks a recent memory above an old one that both lists put first (recency)', async (t) => {
  const now = Date.now();
  const path = await createAgentFile(
    dir,
    { name: 'ranker', model: driver.model },
    {
      seed: (file) => {
        // The newer memory first, so it has the lower id: the tie-break (the higher id) favours the old one.
        file.memory.add({ text: 'Green tea with a slice of lemon in the morning', source: 'owner' }, now);
        file.memory.add({ text: 'Green tea', source: 'owner' }, now - 120 * DAY);
      },
    },
  );
  const from = log.events.length;
  const ranker = await load(path);
  await log.waitFor(
    (e) =>
      e.event_type === 'memory.embedded' && e.agent_id === ranker && (e.payload as { pending: number }).pending === 0,
    'embedded',
    { from },
  );
  const hits = (await d.request('GET', `/agents/${ranker}/memory?q=${encodeURIComponent('green tea')}`)).body.hits;
  t.match(hits[1], { memory: { text: 'Green tea' }, text_rank: 1 }, 'the old one leads full-text');
  t.ok(hits[1].distance < hits[0].distance, 'and the vector list');
  t.match(hits[0], { memory: { text: /lemon/ }, text_rank: 2 }, 'the recent one ranks first');
});
