/**
 * Memory consolidation on the built daemon (docs/memory.md, "Consolidation"), with a scripted model
 * answer: duplicates merged into one memory (the originals forgotten, not deleted), a stale fact updated
 * (its old text in the changelog), the pinned memory never offered nor changed, and every invalid
 * proposal (unknown id, another agent's id, the pinned id, an unknown op, a text holding a credential value, which
 * the changelog then leaves out) refused and recorded; the call
 * goes through the spend governor; successive runs walk the whole memory, old memories beside the newest;
 * a cron schedule in the agent's config runs it on its own.
 */
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { runDaemon, shippedManifest, tempDir } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';
import { agtInProcess } from './helpers/cli-in-process.js';
import { reply, startFakeOpenAI, type RecordedRequest } from './fakes/openai.js';

const systemOf = (request: RecordedRequest) =>
  String(
    (request.body.messages as Array<{ role: string; content: unknown }>).find((m) => m.role === 'system')?.content ??
      '',
  );
const isConsolidation = (request: RecordedRequest) => systemOf(request).startsWith('You maintain the long-term memory');
let answer = '{"operations": []}';
const fake = await startFakeOpenAI(t, (request) => (isConsolidation(request) ? reply.text(answer) : reply.text('ok')));
const provider = {
  id: 'fake',
  type: 'openai-compatible' as const,
  name: 'Fake',
  baseUrl: fake.baseUrl,
  defaultModel: 'fake-model',
};
const model = { provider: 'fake', model_id: 'fake-model' };
const dir = tempDir(t);
const pathA = await createAgentFile(dir, {
  name: 'consolidating',
  model,
  budget: { day_tokens: 1_000_000, on_exceeded: 'fail' },
});
const pathB = await createAgentFile(dir, { name: 'other', model });

const d = await runDaemon(t, {
  extensions: shippedManifest({ providers: { maxRetries: 0 } }),
  settings: { providers: [provider] },
});
const log = await eventLog(t, d);
const load = async (filePath: string) => {
  const loaded = await d.request('POST', '/agents/load', { filePath });
  if (loaded.status !== 200) throw new Error(`load: ${loaded.status} ${JSON.stringify(loaded.body)}`);
  return loaded.body.id as string;
};
const a = await load(pathA);
const b = await load(pathB);
const add = async (agent: string, text: string, pinned = false) => {
  const added = await d.request('POST', `/agents/${agent}/memory`, { text, pinned });
  if (added.status !== 201) throw new Error(`add: ${added.status} ${JSON.stringify(added.body)}`);
  return added.body.memory.id as number;
};

t.test(
  'a run merges duplicates and updates a stale fact; the pinned memory and invalid proposals are refused and recorded',
  async (t) => {
    const volvo1 = await add(a, "The owner's car is a red Volvo");
    const volvo2 = await add(a, 'The owner drives a red Volvo car');
    const lyon = await add(a, 'The owner lives in Lyon');
    const paris = await add(a, 'The owner moved to Paris in November');
    const pinned = await add(a, 'Deploys happen on Tuesdays after the standup', true);
    for (let i = 0; i < 7; i++) await add(b, `Other agent note ${i}`);
    const foreign = (await d.request('GET', `/agents/${b}/memory?limit=1`)).body.memories[0].id as number;
    t.ok(foreign > pinned, 'the other agent holds an id this agent does not have');

    answer =
      '```json\n' +
      JSON.stringify({
        operations: [
          { op: 'merge', ids: [volvo1, volvo2], text: 'The owner drives a red Volvo', reason: 'same fact twice' },
          {
            op: 'update',
            id: lyon,
            text: 'The owner lives in Paris (moved from Lyon in November)',
            reason: 'superseded by a newer memory',
          },
          { op: 'update', id: pinned, text: 'Deploys happen on Fridays', reason: 'guess' },
          { op: 'forget', id: 999, reason: 'no such memory' },
          { op: 'merge', ids: [paris, foreign], text: 'mixed', reason: "another agent's memory" },
          { op: 'update', id: volvo1, text: 'again', reason: 'already merged in this run' },
          { op: 'delete', id: paris, reason: 'not an op' },
        ],
      }) +
      '\n```';
    const from = log.events.length;
    const run = await d.request('POST', `/agents/${a}/memory/consolidate`);
    t.equal(run.status, 200, JSON.stringify(run.body));
    t.equal(run.body.offered, 4, 'the four unpinned memories are offered');
    const prompt = fake.chatRequests().filter(isConsolidation).at(-1)!;
    const shown = JSON.stringify(prompt.body.messages);
    t.match(shown, /red Volvo car/);
    t.notMatch(shown, /Deploys/, 'the pinned memory is never shown to the model');

    const changes = run.body.changes as Array<{
      action: string;
      memory_id: number | null;
      from_ids: number[];
      reason: string;
      detail: string | null;
    }>;
    t.same(
      changes.map((c) => c.action),
      ['refused', 'refused', 'refused', 'refused', 'refused', 'merge', 'update'],
    );
    const merge = changes.find((c) => c.action === 'merge')!;
    t.match(merge, { from_ids: [volvo1, volvo2], reason: 'same fact twice', memory_id: Number });
    t.match(
      changes.find((c) => c.action === 'update'),
      { memory_id: lyon, from_ids: [lyon], detail: 'The owner lives in Lyon' },
    );
    const refused = changes.filter((c) => c.action === 'refused');
    t.match(refused[0], { from_ids: [pinned], reason: /not a live unpinned memory/ });
    t.match(refused[1], { from_ids: [999], reason: /not a live unpinned memory offered to this run: 999/ });
    t.match(refused[2], { from_ids: [paris, foreign], reason: new RegExp(`: ${foreign}$`) });
    t.match(refused[3], { from_ids: [volvo1], reason: /already changed by an earlier operation/ });
    t.match(refused[4], { reason: /unknown op/, detail: /"op":"delete"/ });

    const live = (await d.request('GET', `/agents/${a}/memory`)).body;
    const texts = Object.fromEntries(live.memories.map((m: { id: number; text: string }) => [m.id, m.text]));
    t.same(
      Object.keys(texts)
        .map(Number)
        .sort((x, y) => x - y),
      [lyon, paris, pinned, merge.memory_id],
    );
    t.equal(texts[lyon], 'The owner lives in Paris (moved from Lyon in November)');
    t.equal(texts[pinned], 'Deploys happen on Tuesdays after the standup', 'the pinned memory is untouched');
    t.match(
      live.memories.find((m: { id: number }) => m.id === merge.memory_id),
      { source: 'consolidation', kind: 'fact', pinned: false },
      'the merged memory says consolidation made it',
    );
    const forgotten = (await d.request('GET', `/agents/${a}/memory?forgotten=true`)).body.memories
      .map((m: { id: number }) => m.id)
      .sort();
    t.same(forgotten, [volvo1, volvo2], 'the merged memories are forgotten, kept for the owner');
    t.equal(
      (await d.request('GET', `/agents/${b}/memory`)).body.status.live,
      7,
      "the other agent's memories are untouched",
    );

    const changelog = await d.request('GET', `/agents/${a}/memory/changelog`);
    t.equal(changelog.status, 200);
    t.same(
      changelog.body.changes.map((c: { action: string }) => c.action),
      changes.map((c) => c.action).reverse(),
      'newest first',
    );
    t.match(changelog.body.changes[0], { run_id: run.body.run_id, created_at: String });

    const cli = await agtInProcess(['memory', 'changelog', a, '--limit', '2'], {
      AGT_DAEMON_URL: d.url,
      AGT_DAEMON_TOKEN: d.token,
      NO_COLOR: '1',
    });
    t.equal(cli.code, 0, cli.stderr);
    t.match(cli.stdout, /update\s+\d+\s+\d+\s+superseded by a newer memory/);
    t.match(
      cli.stdout,
      new RegExp(`merge\\s+${merge.memory_id}\\s+${volvo1},${volvo2}\\s+same fact twice`),
      'agt memory changelog lists the newest rows',
    );
    const done = await log.waitFor(
      (e) => e.event_type === 'memory.consolidated' && e.agent_id === a,
      'memory.consolidated',
      { from },
    );
    t.match(done.payload, { run_id: run.body.run_id, merged: 1, updated: 1, forgotten: 0, refused: 5 });
    const reserved = log.events.slice(from).find((e) => e.event_type === 'budget.reserved' && e.agent_id === a);
    t.match(
      reserved?.payload,
      { purpose: 'memory_consolidation', budget_names: ['agent.day_tokens'] },
      "the call is reserved against the agent's budget",
    );
    const usage = (await d.request('GET', '/usage?groupBy=agent')).body;
    t.equal(usage.groups.find((g: { key: string }) => g.key === a)?.calls, 1, "the call is in the agent's ledger");
  },
);

t.test(
  "an unreadable answer changes nothing and is recorded; the owner's other routes answer 4xx on bad input",
  async (t) => {
    answer = 'I would rather not.';
    const before = (await d.request('GET', `/agents/${a}/memory`)).body.memories;
    const run = await d.request('POST', `/agents/${a}/memory/consolidate`);
    t.equal(run.status, 200);
    t.match(run.body.changes, [{ action: 'refused', reason: /unreadable answer/, detail: 'I would rather not.' }]);
    t.same((await d.request('GET', `/agents/${a}/memory`)).body.memories, before);

    // A proposed text holding a credential value is refused like any write, and kept out of the changelog.
    const lyon = before.find((m: { text: string }) => m.text.startsWith('The owner lives in Paris')).id as number;
    const key = 'sk-proj-abcdefghijklmnopqrstuvwxyz0123';
    const token = 'ghp_abcdefghijklmnopqrstuvwxyz0123456789';
    answer = JSON.stringify({
      operations: [
        { op: 'update', id: lyon, text: `The owner's key is ${key}`, reason: 'remember the key' },
        { op: 'rewrite', id: lyon, text: `token ${token}`, reason: 'not an op, and a token' },
      ],
    });
    const leaky = await d.request('POST', `/agents/${a}/memory/consolidate`);
    t.equal(leaky.status, 200, JSON.stringify(leaky.body));
    t.match(leaky.body.changes, [
      { action: 'refused', reason: /unknown op/, detail: null },
      { action: 'refused', from_ids: [lyon], reason: /memories never keep credential values/, detail: null },
    ]);
    t.same((await d.request('GET', `/agents/${a}/memory`)).body.memories, before, 'nothing changed');
    const recorded = JSON.stringify((await d.request('GET', `/agents/${a}/memory/changelog?limit=10`)).body);
    t.notOk(recorded.includes(key) || recorded.includes(token), 'neither value is in the changelog');

    answer = JSON.stringify({ operations: Array.from({ length: 9 }, () => ({ op: 'forget', id: 999 })) });
    const flood = await d.request('POST', `/agents/${a}/memory/consolidate`);
    t.equal(flood.body.offered, 3);
    t.same(
      flood.body.changes.map((c: { reason: string }) => c.reason.replace(/:.*/, '')),
      [...Array(6).fill('not a live unpinned memory offered to this run'), 'more than 6 operations proposed'],
      'at most twice the memories offered are read',
    );
    t.match(flood.body.changes.at(-1).reason, /: 3 ignored$/, 'the rest in one row');
    t.same((await d.request('GET', `/agents/${a}/memory`)).body.memories, before);

    const small = await d.request('PATCH', `/agents/${a}/config`, { budget: { day_tokens: 10, on_exceeded: 'fail' } });
    t.equal(small.status, 200);
    const over = await d.request('POST', `/agents/${a}/memory/consolidate`);
    t.match(
      over,
      { status: 429, body: { code: 'budget_exceeded' } },
      "a run the agent's budget cannot take is refused",
    );
    t.same((await d.request('GET', `/agents/${a}/memory`)).body.memories, before);
    t.equal(
      (await d.request('PATCH', `/agents/${a}/config`, { budget: { day_tokens: 1_000_000, on_exceeded: 'fail' } }))
        .status,
      200,
    );

    t.equal((await d.request('GET', `/agents/${a}/memory/changelog?limit=0`)).status, 400);
    t.equal((await d.request('POST', `/agents/nope/memory/consolidate`)).status, 404);
  },
);

t.test('successive runs offer the newest memories and walk the older ones down to the oldest', async (t) => {
  answer = '{"operations": []}';
  const notes = (await d.request('GET', `/agents/${b}/memory?limit=50`)).body.memories
    .map((m: { id: number }) => m.id)
    .sort((x: number, y: number) => y - x) as number[];
  t.equal(notes.length, 7);
  const limited = await d.request('PATCH', `/agents/${b}/config`, {
    memory: { consolidation: { enabled: false, max_memories_per_run: 4 } },
  });
  t.equal(limited.status, 200, JSON.stringify(limited.body));
  const offeredIds = async () => {
    const run = await d.request('POST', `/agents/${b}/memory/consolidate`);
    t.equal(run.status, 200, JSON.stringify(run.body));
    const prompt = JSON.stringify(fake.chatRequests().filter(isConsolidation).at(-1)!.body.messages);
    return [...prompt.matchAll(/\\"id\\": (\d+)/g)].map((m) => Number(m[1]));
  };
  const [n6, n5, n4, n3, n2, n1, n0] = notes;
  t.same(await offeredIds(), [n6, n5, n4, n3], 'the newest two and the next two');
  t.same(await offeredIds(), [n6, n5, n2, n1], 'the next run goes on below them');
  t.same(await offeredIds(), [n6, n5, n0, n4], 'and reaches the oldest, then starts again under the newest');
  t.same(await offeredIds(), [n6, n5, n3, n2], 'on from there');
  const removed = await d.request('PATCH', `/agents/${b}/config`, { memory: {} });
  t.equal(removed.status, 200, JSON.stringify(removed.body));
});

t.test("enabled in the agent's config, a cron schedule runs it on its own; disabling stops it", async (t) => {
  answer = '{"operations": []}';
  const bad = await d.request('PATCH', `/agents/${a}/config`, {
    memory: { consolidation: { enabled: true, every_ms: 5 } },
  });
  t.equal(bad.status, 400, 'an interval under a minute is refused');
  const from = log.events.length;
  const on = await d.request('PATCH', `/agents/${a}/config`, {
    memory: { consolidation: { enabled: true, cron: '* * * * * *', max_memories_per_run: 10 } },
  });
  t.equal(on.status, 200, JSON.stringify(on.body));
  const done = await log.waitFor((e) => e.event_type === 'memory.consolidated' && e.agent_id === a, 'a scheduled run', {
    from,
  });
  t.match(done.payload, { merged: 0, updated: 0, forgotten: 0, refused: 0 });
  t.equal(
    (await d.request('PATCH', `/agents/${a}/config`, { memory: { consolidation: { enabled: false } } })).status,
    200,
  );
});
