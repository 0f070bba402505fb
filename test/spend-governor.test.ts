/**
 * The spend governor (docs/costs.md) on the built daemon: prices and cost per model call, budgets
 * reserved before each call (also under 50 concurrent turns), `fail`, the owner ceiling on a file's
 * budget, compaction counted, a budget task that survives a crash, and the views. One daemon for the
 * file; each test uses its own agents and (where the daemon budget matters) sets and clears the settings
 * it needs. The model is a fake OpenAI-format server reporting fixed usage, behind several providers.
 * The day boundary (an injected clock) is in spend-governor-internals.test.ts.
 */
import t from 'tap';
import { reply, type FakeReply, type RecordedRequest } from './fakes/openai.js';
import { Gate } from './fixtures/runtime/scripted-model.js';
import { agtInProcess } from './helpers/cli-in-process.js';
import { eventLog } from './helpers/events.js';
import { endsTurn, wireDaemon, type WireDaemon } from './helpers/wire-daemon.js';
import { until } from './helpers/turn-ends.js';

/**
 * Every call reports fixed usage (1000 in, of them 200 cached; 500 out) and, for `billed` models only,
 * the provider's own cost (as OpenRouter reports one); calls can be held at a gate. Replies a test
 * queues (`script`) come first.
 */
const script: FakeReply[] = [];
let gate: Gate | undefined;
async function meter(request: RecordedRequest): Promise<FakeReply> {
  const queued = script.shift();
  if (queued) return queued;
  const held = gate;
  if (held) await Promise.race([held.opened, request.done]);
  const billed = /(^billed|-billed$)/.test(String(request.body?.model));
  return reply.text('metered', {
    usage: { input: 1000, output: 500, cacheRead: 200, ...(billed ? { cost: 0.5 } : {}) },
  });
}

let h: WireDaemon;
/** The model calls that reached the fake server so far (held ones included). */
const calls = () => h.fake.chatRequests().length;

t.before(async () => {
  h = await wireDaemon(t, {
    script: meter,
    settings: { timezone: 'UTC' },
    env: { VENDOR_TEST_KEY: 'vendor-test-key' },
  });
  // The fake answers every provider: `local` (the wire harness's), two more openai-compatible ones and
  // an `openai` one (a first-party kind: the shipped price table applies to it).
  const base = { type: 'openai-compatible', baseUrl: h.fake.baseUrl };
  const providers = [
    ...(await h.d.request('GET', '/settings')).body.providers,
    { id: 'meter', name: 'Meter', ...base },
    { id: 'meter2', name: 'Meter 2', ...base },
    { id: 'vendor', name: 'Vendor', type: 'openai', baseUrl: h.fake.baseUrl, apiKeyEnv: 'VENDOR_TEST_KEY' },
  ];
  const set = await h.d.request('PATCH', '/settings', { providers });
  if (set.status !== 200) throw new Error(`providers: ${set.status} ${JSON.stringify(set.body)}`);
});

/** Today and tomorrow (UTC, the daemon's time zone here) as YYYY-MM-DD. */
const today = () => new Date().toISOString().slice(0, 10);
const tomorrow = () => new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
const settings = (patch: Record<string, unknown>) => h.d.request('PATCH', '/settings', patch);
const chat = async (id: string, text = 'hi') =>
  (await h.d.request('POST', `/agents/${id}/chat`, { text })).body.turnId as string;
const usage = async (id: string) => (await h.d.request('GET', `/agents/${id}/usage`)).body;

t.test(
  'each call is priced at the price in force for its model; unknown models count tokens with cost null',
  async (t) => {
    await settings({
      pricing: { 'meter/model-a': { input: 2, output: 10, cached: 1 }, meter: { input: 1, output: 1 } },
    });
    t.teardown(() => settings({ pricing: null }));
    const a = await h.agent({ model: { provider: 'meter', model_id: 'model-a-billed' } });
    const b = await h.agent({ model: { provider: 'meter', model_id: 'other' } });
    const c = await h.agent({ model: { provider: 'vendor', model_id: 'gpt-4o-mini' } });
    const d = await h.agent({ model: { provider: 'meter2', model_id: 'billed-homebrew' } });
    const f = await h.agent({ model: { provider: 'vendor', model_id: 'gpt-4o-mini-billed' } });
    const e = await h.agent({ model: { provider: 'meter2', model_id: 'free-model' } });
    for (const id of [a, b, c, d, e, f]) t.equal((await h.ended(await chat(id))).event_type, 'turn.completed');
    // a: 800 uncached x 2 + 200 cached x 1 + 500 x 10 = 6800 / 1e6
    t.equal(
      (await usage(a)).cost_usd,
      0.0068,
      "settings `meter/model-a` by prefix, cached at its own rate; the owner's price wins over a reported cost",
    );
    // b: 800 x 1 + 200 x 0.5 (cached defaults to half of input) + 500 x 1 = 1400 / 1e6
    t.equal((await usage(b)).cost_usd, 0.0014, 'settings `meter`: the provider default');
    // c: shipped gpt-4o-mini: 800 x 0.15 + 200 x 0.075 + 500 x 0.6 = 435 / 1e6
    t.equal((await usage(c)).cost_usd, 0.000435, 'the shipped table');
    const unpriced = await usage(d);
    t.equal(unpriced.spend.calls, 1);
    t.equal(unpriced.spend.unpriced_calls, 0, 'the provider reported its own cost');
    t.equal(unpriced.cost_usd, 0.5);
    t.equal((await usage(f)).cost_usd, 0.5, 'a reported cost wins over the shipped table');
    const free = await usage(e);
    t.same(
      [free.cost_usd, free.spend.unpriced_calls, free.spend.input, free.spend.output, free.spend.cached],
      [null, 1, 1000, 500, 200],
    );
    const all = (await h.d.request('GET', '/usage?groupBy=model')).body;
    t.ok(
      all.warnings.includes('no price for meter2/free-model: its calls count tokens, cost_usd null (settings pricing)'),
    );
    t.match(
      all.groups.find((g: { key: string }) => g.key === 'meter/model-a-billed'),
      { calls: 1, cost_usd: 0.0068, input: 1000, output: 500, cached: 200 },
    );
    const completed = h.of('llm.completed', a).at(-1)!;
    t.equal(
      (completed.payload as { cost: number }).cost,
      0.0068,
      'llm.completed carries the cost at the price in force',
    );
  },
);

t.test('50 turns at once against a budget that fits 10 calls: exactly 10 calls reach the model', async (t) => {
  await settings({ pricing: { 'meter/burst': { input: 0, output: 1000 } } });
  t.teardown(() => settings({ pricing: null }));
  // Each call reserves max_tokens 1000 x 1000 USD/M = 1 USD (input is free). A first call tells the
  // governor how the provider counts (until then a budgeted agent has one call of the model in flight):
  // it settles at 0.5 USD, and the 10 USD left fit 10 calls.
  const loops = Array.from({ length: 50 }, (_, i) => ({ name: `l${i}`, goal: 'g', enabled: true }));
  const id = await h.agent({
    model: { provider: 'meter', model_id: 'burst', max_tokens: 1000 },
    budget: { day_usd: 10.5, on_exceeded: 'fail' },
    loops,
  });
  t.equal((await h.ended(await chat(id))).event_type, 'turn.completed', 'the first call');
  const before = calls();
  const held = (gate = new Gate());
  t.teardown(() => (gate = undefined));
  const turns = await Promise.all(
    loops.map(
      async (loop) =>
        (await h.d.request('POST', `/agents/${id}/chat?loop=${loop.name}`, { text: 'go' })).body.turnId as string,
    ),
  );
  // The 40 refused turns end while the 10 admitted calls are still held: nothing settled before.
  await h.waitFor(() => h.of('agent.error', id).length === 40, '40 refused turns');
  t.equal(calls() - before, 10, 'exactly 10 calls reached the model');
  held.release();
  const ends = await Promise.all(turns.map((turn) => h.ended(turn)));
  t.equal(ends.filter((e) => e.event_type === 'turn.completed').length, 10);
  const failed = ends.filter((e) => e.event_type === 'agent.error');
  t.equal(failed.length, 40);
  t.ok(failed.every((e) => (e.payload as { code: string }).code === 'budget_exceeded'));
  t.match((failed[0]!.payload as { message: string }).message, /agent\.day_usd/);
  t.equal(calls() - before, 10);
  const view = await usage(id);
  t.equal(view.spend.calls, 11);
  t.equal(view.budget.used['agent.day_usd'], 5.5, 'settled at the real usage: 11 x 500 tokens x 1000 USD/M');
  t.equal(view.budget.remaining['agent.day_usd'], 5);
});

t.test(
  'fail: a call that would pass day_tokens ends the turn in agent.error budget_exceeded before the model is called',
  async (t) => {
    const id = await h.agent({
      model: { provider: 'meter', model_id: 'tiny' },
      budget: { day_tokens: 100, on_exceeded: 'fail' },
    });
    const before = calls();
    const end = await h.ended(await chat(id));
    t.equal(end.event_type, 'agent.error');
    t.match(end.payload, { code: 'budget_exceeded', message: /agent\.day_tokens \(100\)/ });
    t.equal(calls(), before, 'the model was never called');
    const exceeded = h.of('budget.exceeded', id).at(-1)!;
    t.match(exceeded.payload, { budget: 'agent.day_tokens', limit: 100, used: 0, action: 'fail', task_id: null });
  },
);

t.test("an agent file asking a bigger budget than the owner allows is capped to the owner's", async (t) => {
  await settings({ budget: { day_usd: 1, month_usd: 20 } });
  t.teardown(() => settings({ budget: null }));
  const id = await h.agent({ model: { provider: 'meter', model_id: 'x' }, budget: { day_usd: 5, month_usd: 10 } });
  const view = await usage(id);
  t.equal(view.budget.limits['agent.day_usd'], 1, 'capped at settings budget.day_usd');
  t.equal(view.budget.limits['agent.month_usd'], 10, "below the owner's: kept");
  t.equal(view.budget.limits['daemon.day_usd'], 1);
  const status = (await h.d.request('GET', `/agents/${id}`)).body;
  t.ok(JSON.stringify(status).includes('budget.day_usd'), 'the cap is listed with the others');
});

t.test('compaction calls go through the governor and are counted', async (t) => {
  // A budget far from reach, so each call's reservation is an event that names its purpose.
  const id = await h.agent({
    model: { provider: 'meter', model_id: 'compact-me' },
    budget: { day_tokens: 10_000_000 },
  });
  for (let i = 0; i < 4; i++) await h.ended(await chat(id, `turn ${i}`));
  // Over the daemon's day budget, the summary is refused as budget_exceeded (429), not as a provider error.
  await settings({ budget: { day_usd: 0.000001 }, pricing: { 'meter/compact-me': { input: 0, output: 1000 } } });
  const refused = await h.d.request('POST', `/agents/${id}/compact`);
  t.equal(refused.status, 429);
  t.match(refused.body, { code: 'budget_exceeded', error: /daemon\.day_usd/ });
  await settings({ budget: null, pricing: null });
  const before = calls();
  const res = await h.d.request('POST', `/agents/${id}/compact`);
  t.equal(res.status, 200);
  t.equal(calls(), before + 1);
  // The event may reach GET /events after the answer: waited for, not looked up.
  await h.waitFor(
    (e) =>
      e.event_type === 'budget.reserved' &&
      e.agent_id === id &&
      (e.payload as { purpose: string }).purpose === 'compaction',
    'a reservation for the compaction call',
  );
  const view = await usage(id);
  t.equal(view.spend.calls, 5, '4 turns + 1 summary, kept although compaction deleted loop rows');
});

// max_tokens 100 alone passes day_tokens 50: the first call of each turn asks.
const asking = { model: { provider: 'local', model_id: 'ask-me', max_tokens: 100 }, budget: { day_tokens: 50 } };

t.test(
  "ask: a budget task in GET /tasks; approve with an amount raises today's limit and the call goes on",
  async (t) => {
    const id = await h.agent(asking);
    const before = calls();
    const turn = await chat(id);
    const exceeded = await h.waitFor((e) => e.event_type === 'budget.exceeded' && e.agent_id === id);
    const taskId = (exceeded.payload as { task_id: string }).task_id;
    t.match(exceeded.payload, { budget: 'agent.day_tokens', limit: 50, action: 'ask' });
    const pending = (await h.d.request('GET', '/tasks?kind=budget')).body.tasks;
    t.match(pending, [
      {
        kind: 'budget',
        id: taskId,
        agentId: id,
        tool: 'budget',
        args: { budget: 'agent.day_tokens', question: /agent\.day_tokens 50 reached/ },
      },
    ]);
    t.equal(calls(), before, 'no call while the owner decides');
    const res = await h.d.request('POST', `/agents/${id}/tasks/${taskId}/resolve`, {
      action: 'approve',
      amount: 100000,
    });
    t.equal(res.status, 200);
    t.equal((await h.ended(turn)).event_type, 'turn.completed');
    t.match(h.of('budget.raised', id), [{ payload: { budget: 'agent.day_tokens', amount: 100000, task_id: taskId } }]);
    t.equal((await usage(id)).budget.limits['agent.day_tokens'], 100050, "today's limit raised by the amount");
    t.match((await h.d.request('GET', `/agents/${id}/tasks/${taskId}`)).body, {
      kind: 'budget',
      status: 'completed',
      resolution: { action: 'approve', modifiedArgs: { amount: 100000 } },
    });
  },
);

t.test('ask: deny ends the turn in agent.error budget_exceeded', async (t) => {
  const id = await h.agent(asking);
  const turn = await chat(id);
  const exceeded = await h.waitFor((e) => e.event_type === 'budget.exceeded' && e.agent_id === id);
  const taskId = (exceeded.payload as { task_id: string }).task_id;
  await h.d.request('POST', `/agents/${id}/tasks/${taskId}/resolve`, { action: 'deny', reason: 'enough for today' });
  const end = await h.ended(turn);
  t.equal(end.event_type, 'agent.error');
  t.match(end.payload, { code: 'budget_exceeded', message: /agent\.day_tokens.*denied more: enough for today/ });
});

t.test('settings refuse an unknown time zone and a malformed price (400)', async (t) => {
  const zone = await settings({ timezone: 'Mars/Olympus_Mons' });
  t.equal(zone.status, 400);
  t.match(zone.body, { code: 'bad_request', error: /timezone/ });
  t.equal((await settings({ pricing: { meter: { input: -1, output: 1 } } })).status, 400);
  t.equal((await h.d.request('GET', '/usage?from=yesterday')).status, 400);
  t.equal((await h.d.request('GET', '/usage?groupBy=weekday')).status, 400);
});

/** Runs `agt` against the shared daemon in this process (helpers/cli-in-process.ts: no Node start per
 * command; the CLI's process-level behaviour is checked in cli-agt.test.ts). */
function agt(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return agtInProcess(args, { NO_COLOR: '1', AGT_DAEMON_URL: h.d.url, AGT_DAEMON_TOKEN: h.d.token });
}

t.test("agt budget sets a budget; agt usage prints totals by model and one agent's budgets", async (t) => {
  const id = await h.agent({ name: 'spender', model: { provider: 'meter', model_id: 'billed-cli' } });
  const set = await agt('budget', 'spender', '--day-usd', '2', '--on-exceeded', 'fail');
  t.equal(set.code, 0, set.stderr);
  t.match(set.stdout, /agent\.day_usd\s+2\s+0\s+2\s+\d{4}-/);
  const config = (await h.d.request('GET', `/agents/${id}/config`)).body.config;
  t.same(config.budget, { day_usd: 2, on_exceeded: 'fail' });
  t.equal((await h.ended(await chat(id))).event_type, 'turn.completed');
  const byModel = await agt('usage', '--by', 'model', '--from', today(), '--to', tomorrow());
  t.equal(byModel.code, 0, byModel.stderr);
  t.match(byModel.stdout, /meter\/billed-cli\s+1\s+1000\s+200\s+500\s+\$0\.5000/);
  const one = await agt('--json', 'usage', '--agent', 'spender');
  t.match(JSON.parse(one.stdout), { agentId: id, cost_usd: 0.5, budget: { limits: { 'agent.day_usd': 2 } } });
  t.equal((await agt('budget', 'spender', '--day-usd', 'lots')).code, 2, 'bad usage');
});

t.test("an agent cannot change its own budget (sys_update_config refuses, the owner's field)", async (t) => {
  const id = await h.agent({
    model: { provider: 'local', model_id: 'self' },
    budget: { day_usd: 1 },
    tools: [{ name: 'sys_update_config', enabled: true }],
  });
  script.push(
    reply.toolCalls([{ name: 'sys_update_config', args: { patch: { budget: { day_usd: 1000 } } } }]),
    reply.text('tried'),
  );
  t.equal((await h.ended(await chat(id))).event_type, 'turn.completed');
  const result = h.of('tool.completed', id).at(-1)!;
  t.match(result.payload, { tool: 'sys_update_config', ok: false });
  t.same((await h.d.request('GET', `/agents/${id}/config`)).body.config.budget, { day_usd: 1 });
});

t.test('the daemon budget holds across agents at once: 10 agents, a day_usd that fits 3 calls', async (t) => {
  await settings({ pricing: { 'meter/shared': { input: 0, output: 1000 } }, budget: { day_usd: 1000 } });
  t.teardown(() => settings({ pricing: null, budget: null }));
  const ids = await Promise.all(
    Array.from({ length: 10 }, () =>
      h.agent({ model: { provider: 'meter', model_id: 'shared', max_tokens: 1000 }, budget: { on_exceeded: 'fail' } }),
    ),
  );
  // The other tests' agents spent today already (the daemon's clock is the real one): 3.5 USD more fit 3 calls.
  const spent = (await usage(ids[0]!)).budget.used['daemon.day_usd'] as number;
  await settings({ budget: { day_usd: spent + 3.5 } });
  const before = calls();
  const held = (gate = new Gate());
  t.teardown(() => (gate = undefined));
  const turns = await Promise.all(ids.map((id) => chat(id)));
  await h.waitFor(() => ids.filter((id) => h.of('agent.error', id).length > 0).length === 7, '7 refused turns');
  // The admitted calls reach the model a moment after the refusals (a turn's first call waits for the
  // requests already read: docs/performance.md, "Bursts of chats"); the gate holds them there.
  await until(() => calls() - before >= 3, '3 calls at the model', 15_000);
  t.equal(calls() - before, 3, 'exactly 3 calls reached the model');
  held.release();
  const ends = await Promise.all(turns.map((turn) => h.ended(turn)));
  t.equal(ends.filter((e) => e.event_type === 'turn.completed').length, 3);
  t.ok(
    ends
      .filter((e) => e.event_type === 'agent.error')
      .every((e) => /daemon\.day_usd/.test((e.payload as { message: string }).message)),
  );
  const day = (await h.d.request('GET', `/usage?from=${today()}&to=${tomorrow()}&groupBy=agent`)).body;
  const mine = day.groups.filter((g: { key: string }) => ids.includes(g.key));
  t.same(
    [
      mine.reduce((n: number, g: { calls: number }) => n + g.calls, 0),
      mine.reduce((n: number, g: { cost_usd: number }) => n + g.cost_usd, 0),
    ],
    [3, 1.5],
    '3 calls, 1.5 USD among the 10',
  );
});

// Last: it ends the file's daemon the hard way and starts it again.
t.test('a budget task survives a crash: after the restart the resumed turn takes up the same task', async (t) => {
  const id = await h.agent(asking);
  const { filePath } = (await h.d.request('GET', `/agents/${id}`)).body;
  const turn = await chat(id);
  const exceeded = await h.waitFor((e) => e.event_type === 'budget.exceeded' && e.agent_id === id);
  const taskId = (exceeded.payload as { task_id: string }).task_id;
  t.equal(await h.d.stop('SIGKILL'), null, 'killed while the owner decides');

  const d = await h.d.restart();
  t.ok(d.url, `started again: ${d.stderr()}`);
  const log = await eventLog(t, d);
  const before = calls();
  const load = await d.request('POST', '/agents/load', { filePath });
  t.equal(load.status, 200, JSON.stringify(load.body));
  const again = await log.waitFor(
    (e) => e.event_type === 'budget.exceeded' && e.agent_id === id,
    'the budget question again',
  );
  t.equal((again.payload as { task_id: string }).task_id, taskId, 'the same task, taken up');
  t.match((await d.request('GET', '/tasks?kind=budget')).body.tasks, [{ id: taskId, kind: 'budget' }]);
  await d.request('POST', `/agents/${id}/tasks/${taskId}/resolve`, { action: 'approve', amount: 100000 });
  const end = await log.waitFor((e) => endsTurn(e, turn), 'the end of the resumed turn');
  t.equal(end.event_type, 'turn.completed', 'the turn went on after the restart');
  t.equal(calls() - before, 1, 'one model call: the one the owner approved');
});
