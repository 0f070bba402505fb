/**
 * The spend governor (docs/costs.md): prices and cost per model call, budgets reserved before each call
 * (also under 50 concurrent turns), `fail`, the owner ceiling on a file's budget, compaction counted,
 * the day boundary in the owner's time zone, and the views. One daemon for the file; each test uses its
 * own agents and (where the daemon budget matters) sets and clears the settings it needs.
 */
import t from 'tap';
import type { ModelClientProvider, ModelRequest, ModelResponse } from '../contracts/model.js';
import { crashCopy, runtimeHarness, type RuntimeHarness } from './fixtures/runtime/harness.js';
import { Gate } from './fixtures/runtime/scripted-model.js';
import { periodsAt } from '../kernel/spend/calendar.js';
import { agtInProcess } from './helpers/cli-in-process.js';

/** A model reporting fixed usage (1000 in, of them 200 cached; 500 out) that can hold calls at a gate. */
class MeterModel implements ModelClientProvider {
  readonly calls: ModelRequest[] = [];
  gate: Gate | undefined;
  constructor(readonly ids: string[]) {}
  resolve(providerId: string) {
    if (!this.ids.includes(providerId)) return undefined;
    return { complete: (request: ModelRequest) => this.complete(request) };
  }
  private async complete(request: ModelRequest): Promise<ModelResponse> {
    this.calls.push(request);
    if (this.gate) await this.gate.opened;
    return {
      text: 'metered',
      toolCalls: [],
      stopReason: 'end',
      usage: { input: 1000, output: 500, cacheRead: 200, cacheWrite: 0 },
      // The provider's own figure (as OpenRouter reports one) for `billed` models only.
      cost: /(^billed|-billed$)/.test(request.model.model_id) ? 0.5 : null,
      provider: request.model.provider,
      model: request.model.model_id,
    };
  }
}

let h: RuntimeHarness;
let meter: MeterModel;
let now = Date.UTC(2026, 5, 10, 12, 0);
const clock = { now: () => now };

t.before(async () => {
  h = await runtimeHarness(t, { settings: { timezone: 'UTC' } });
  meter = new MeterModel(['meter', 'meter2', 'vendor']);
  h.d.daemon.kernel.contributions.forExtension('test-meter').modelClients(meter);
  // Only the governor reads this clock (its `now`); timers keep the harness's real one.
  const governor = h.service.governor as unknown as { deps: { now: () => number } };
  governor.deps.now = clock.now;
});

const settings = (patch: Record<string, unknown>) => h.d.request('PATCH', '/settings', patch);
const chat = async (id: string, text = 'hi') => (await h.d.request('POST', `/agents/${id}/chat`, { text })).body.turnId as string;
const usage = async (id: string) => (await h.d.request('GET', `/agents/${id}/usage`)).body;

t.test('each call is priced at the price in force for its model; unknown models count tokens with cost null', async (t) => {
  await settings({ pricing: { 'meter/model-a': { input: 2, output: 10, cached: 1 }, meter: { input: 1, output: 1 } } });
  t.teardown(() => settings({ pricing: null }));
  const a = await h.agent({ model: { provider: 'meter', model_id: 'model-a-billed' } });
  const b = await h.agent({ model: { provider: 'meter', model_id: 'other' } });
  const c = await h.agent({ model: { provider: 'vendor', model_id: 'gpt-4o-mini' } });
  const d = await h.agent({ model: { provider: 'meter2', model_id: 'billed-homebrew' } });
  const f = await h.agent({ model: { provider: 'vendor', model_id: 'gpt-4o-mini-billed' } });
  const e = await h.agent({ model: { provider: 'meter2', model_id: 'free-model' } });
  for (const id of [a, b, c, d, e, f]) t.equal((await h.ended(await chat(id))).event_type, 'turn.completed');
  // a: 800 uncached x 2 + 200 cached x 1 + 500 x 10 = 6800 / 1e6
  t.equal((await usage(a)).cost_usd, 0.0068, 'settings `meter/model-a` by prefix, cached at its own rate; the owner\'s price wins over a reported cost');
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
  t.same([free.cost_usd, free.spend.unpriced_calls, free.spend.input, free.spend.output, free.spend.cached], [null, 1, 1000, 500, 200]);
  const all = (await h.d.request('GET', '/usage?groupBy=model')).body;
  t.ok(all.warnings.includes('no price for meter2/free-model: its calls count tokens, cost_usd null (settings pricing)'));
  t.match(all.groups.find((g: { key: string }) => g.key === 'meter/model-a-billed'), { calls: 1, cost_usd: 0.0068, input: 1000, output: 500, cached: 200 });
  const completed = h.of('llm.completed', a).at(-1)!;
  t.equal((completed.payload as { cost: number }).cost, 0.0068, 'llm.completed carries the cost at the price in force');
});

t.test('50 turns at once against a budget that fits 10 calls: exactly 10 calls reach the model', async (t) => {
  now = Date.UTC(2026, 5, 11, 12, 0); // a fresh day
  await settings({ pricing: { 'meter/burst': { input: 0, output: 1000 } } });
  t.teardown(() => settings({ pricing: null }));
  // Each call reserves max_tokens 1000 x 1000 USD/M = 1 USD (input is free). A first call tells the
  // governor how the provider counts (until then a budgeted agent has one call of the model in flight):
  // it settles at 0.5 USD, and the 10 USD left fit 10 calls.
  const loops = Array.from({ length: 50 }, (_, i) => ({ name: `l${i}`, goal: 'g', enabled: true }));
  const id = await h.agent({ model: { provider: 'meter', model_id: 'burst', max_tokens: 1000 }, budget: { day_usd: 10.5, on_exceeded: 'fail' }, loops });
  t.equal((await h.ended(await chat(id))).event_type, 'turn.completed', 'the first call');
  const before = meter.calls.length;
  const gate = new Gate();
  meter.gate = gate;
  t.teardown(() => (meter.gate = undefined));
  const turns = await Promise.all(loops.map(async (loop) => (await h.d.request('POST', `/agents/${id}/chat?loop=${loop.name}`, { text: 'go' })).body.turnId as string));
  // The 40 refused turns end while the 10 admitted calls are still held: nothing settled before.
  await h.waitFor(() => h.of('agent.error', id).length === 40, '40 refused turns');
  t.equal(meter.calls.length - before, 10, 'exactly 10 calls reached the model');
  gate.release();
  const ends = await Promise.all(turns.map((turn) => h.ended(turn)));
  t.equal(ends.filter((e) => e.event_type === 'turn.completed').length, 10);
  const failed = ends.filter((e) => e.event_type === 'agent.error');
  t.equal(failed.length, 40);
  t.ok(failed.every((e) => (e.payload as { code: string }).code === 'budget_exceeded'));
  t.match((failed[0]!.payload as { message: string }).message, /agent\.day_usd/);
  t.equal(meter.calls.length - before, 10);
  const view = await usage(id);
  t.equal(view.spend.calls, 11);
  t.equal(view.budget.used['agent.day_usd'], 5.5, 'settled at the real usage: 11 x 500 tokens x 1000 USD/M');
  t.equal(view.budget.remaining['agent.day_usd'], 5);
});

t.test('fail: a call that would pass day_tokens ends the turn in agent.error budget_exceeded before the model is called', async (t) => {
  const id = await h.agent({ model: { provider: 'meter', model_id: 'tiny' }, budget: { day_tokens: 100, on_exceeded: 'fail' } });
  const before = meter.calls.length;
  const end = await h.ended(await chat(id));
  t.equal(end.event_type, 'agent.error');
  t.match(end.payload, { code: 'budget_exceeded', message: /agent\.day_tokens \(100\)/ });
  t.equal(meter.calls.length, before, 'the model was never called');
  const exceeded = h.of('budget.exceeded', id).at(-1)!;
  t.match(exceeded.payload, { budget: 'agent.day_tokens', limit: 100, used: 0, action: 'fail', task_id: null });
});

t.test('an agent file asking a bigger budget than the owner allows is capped to the owner\'s', async (t) => {
  await settings({ budget: { day_usd: 1, month_usd: 20 } });
  t.teardown(() => settings({ budget: null }));
  const id = await h.agent({ model: { provider: 'meter', model_id: 'x' }, budget: { day_usd: 5, month_usd: 10 } });
  const view = await usage(id);
  t.equal(view.budget.limits['agent.day_usd'], 1, 'capped at settings budget.day_usd');
  t.equal(view.budget.limits['agent.month_usd'], 10, 'below the owner\'s: kept');
  t.equal(view.budget.limits['daemon.day_usd'], 1);
  const status = (await h.d.request('GET', `/agents/${id}`)).body;
  t.ok(JSON.stringify(status).includes('budget.day_usd'), 'the cap is listed with the others');
});

t.test('compaction calls go through the governor and are counted', async (t) => {
  const id = await h.agent({ model: { provider: 'meter', model_id: 'compact-me' } });
  for (let i = 0; i < 4; i++) await h.ended(await chat(id, `turn ${i}`));
  // Over the daemon's day budget, the summary is refused as budget_exceeded (429), not as a provider error.
  await settings({ budget: { day_usd: 0.000001 }, pricing: { 'meter/compact-me': { input: 0, output: 1000 } } });
  const refused = await h.d.request('POST', `/agents/${id}/compact`);
  t.equal(refused.status, 429);
  t.match(refused.body, { code: 'budget_exceeded', error: /daemon\.day_usd/ });
  await settings({ budget: null, pricing: null });
  const calls = meter.calls.length;
  const res = await h.d.request('POST', `/agents/${id}/compact`);
  t.equal(res.status, 200);
  t.equal(meter.calls.length, calls + 1);
  t.equal(meter.calls.at(-1)!.purpose, 'compaction');
  const view = await usage(id);
  t.equal(view.spend.calls, 5, '4 turns + 1 summary, kept although compaction deleted loop rows');
});

t.test('days start at midnight in the owner\'s time zone (injected clock, settings timezone)', async (t) => {
  await settings({ timezone: 'Asia/Tokyo', pricing: { 'meter/daily': { input: 0, output: 1000 } } });
  t.teardown(() => settings({ timezone: 'UTC', pricing: null }));
  // 23:59 in Tokyo (14:59 UTC): each call reserves 1 USD and settles at 0.5; 1.2 USD fit one.
  now = Date.UTC(2026, 5, 12, 14, 59);
  const id = await h.agent({ model: { provider: 'meter', model_id: 'daily', max_tokens: 1000 }, budget: { day_usd: 1.2, on_exceeded: 'fail' } });
  t.equal((await h.ended(await chat(id))).event_type, 'turn.completed');
  t.equal((await h.ended(await chat(id))).event_type, 'agent.error', 'the second call would pass the day');
  t.equal((await usage(id)).budget.resets_at['agent.day_usd'], '2026-06-12T15:00:00.000Z');
  now = Date.UTC(2026, 5, 12, 15, 0, 30); // 00:00:30 in Tokyo, still 12 June in UTC
  t.equal((await h.ended(await chat(id))).event_type, 'turn.completed', 'a new day in Tokyo');
  const days = (await h.d.request('GET', '/usage?from=2026-06-12T00:00:00Z&to=2026-06-13T00:00:00Z&groupBy=day')).body;
  t.same(days.groups.map((g: { key: string; calls: number }) => [g.key, g.calls]), [['2026-06-12', 1], ['2026-06-13', 1]], 'day groups in Tokyo time');
  t.equal(days.timezone, 'Asia/Tokyo');
  t.equal(periodsAt(now, 'Asia/Tokyo').day, '2026-06-13');
});


// max_tokens 100 alone passes day_tokens 50: the first call of each turn asks.
const asking = { model: { provider: 'local', model_id: 'ask-me', max_tokens: 100 }, budget: { day_tokens: 50 } };

t.test('ask: a budget task in GET /tasks; approve with an amount raises today\'s limit and the call goes on', async (t) => {
  const id = await h.agent(asking);
  const calls = h.model.calls.length;
  const turn = await chat(id);
  const exceeded = await h.waitFor((e) => e.event_type === 'budget.exceeded' && e.agent_id === id);
  const taskId = (exceeded.payload as { task_id: string }).task_id;
  t.match(exceeded.payload, { budget: 'agent.day_tokens', limit: 50, action: 'ask' });
  const pending = (await h.d.request('GET', '/tasks?kind=budget')).body.tasks;
  t.match(pending, [{ kind: 'budget', id: taskId, agentId: id, tool: 'budget', args: { budget: 'agent.day_tokens', question: /agent\.day_tokens 50 reached/ } }]);
  t.equal(h.model.calls.length, calls, 'no call while the owner decides');
  const res = await h.d.request('POST', `/agents/${id}/tasks/${taskId}/resolve`, { action: 'approve', amount: 100000 });
  t.equal(res.status, 200);
  t.equal((await h.ended(turn)).event_type, 'turn.completed');
  t.match(h.of('budget.raised', id), [{ payload: { budget: 'agent.day_tokens', amount: 100000, task_id: taskId } }]);
  t.equal((await usage(id)).budget.limits['agent.day_tokens'], 100050, 'today\'s limit raised by the amount');
  t.match((await h.d.request('GET', `/agents/${id}/tasks/${taskId}`)).body, { kind: 'budget', status: 'completed', resolution: { action: 'approve', modifiedArgs: { amount: 100000 } } });
});

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

t.test('a budget task survives a restart: the resumed turn takes up the same task', async (t) => {
  const id = await h.agent(asking);
  const turn = await chat(id);
  const exceeded = await h.waitFor((e) => e.event_type === 'budget.exceeded' && e.agent_id === id);
  const taskId = (exceeded.payload as { task_id: string }).task_id;
  const copy = crashCopy(h, id);
  // Let the original daemon's turn go, so the two daemons do not share more than the copied file.
  await h.d.request('POST', `/agents/${id}/tasks/${taskId}/resolve`, { action: 'deny' });
  await h.ended(turn);

  const h2 = await runtimeHarness(t, { settings: { timezone: 'UTC' } });
  const load = await h2.d.request('POST', '/agents/load', { filePath: copy });
  t.equal(load.status, 200);
  const again = await h2.waitFor((e) => e.event_type === 'budget.exceeded' && e.agent_id === id);
  t.equal((again.payload as { task_id: string }).task_id, taskId, 'the same task, taken up');
  t.match((await h2.d.request('GET', '/tasks?kind=budget')).body.tasks, [{ id: taskId, kind: 'budget' }]);
  await h2.d.request('POST', `/agents/${id}/tasks/${taskId}/resolve`, { action: 'approve', amount: 100000 });
  const end = await h2.ended(turn);
  t.equal(end.event_type, 'turn.completed', 'the turn went on after the restart');
  t.equal(h2.model.calls.length, 1);
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

t.test('agt budget sets a budget; agt usage prints totals by model and one agent\'s budgets', async (t) => {
  const id = await h.agent({ name: 'spender', model: { provider: 'meter', model_id: 'billed-cli' } });
  const set = await agt('budget', 'spender', '--day-usd', '2', '--on-exceeded', 'fail');
  t.equal(set.code, 0, set.stderr);
  t.match(set.stdout, /agent\.day_usd\s+2\s+0\s+2\s+\d{4}-/);
  const config = (await h.d.request('GET', `/agents/${id}/config`)).body.config;
  t.same(config.budget, { day_usd: 2, on_exceeded: 'fail' });
  t.equal((await h.ended(await chat(id))).event_type, 'turn.completed');
  const byModel = await agt('usage', '--by', 'model', '--from', '2026-06-01', '--to', '2026-07-01');
  t.equal(byModel.code, 0, byModel.stderr);
  t.match(byModel.stdout, /meter\/billed-cli\s+1\s+1000\s+200\s+500\s+\$0\.5000/);
  const one = await agt('--json', 'usage', '--agent', 'spender');
  t.match(JSON.parse(one.stdout), { agentId: id, cost_usd: 0.5, budget: { limits: { 'agent.day_usd': 2 } } });
  t.equal((await agt('budget', 'spender', '--day-usd', 'lots')).code, 2, 'bad usage');
});

t.test('an agent cannot change its own budget (sys_update_config refuses, the owner\'s field)', async (t) => {
  const id = await h.agent({ model: { provider: 'local', model_id: 'self' }, budget: { day_usd: 1 }, tools: [{ name: 'sys_update_config', enabled: true }] });
  h.model.push({ toolCalls: [{ name: 'sys_update_config', args: { patch: { budget: { day_usd: 1000 } } } }] }, { text: 'tried' });
  t.equal((await h.ended(await chat(id))).event_type, 'turn.completed');
  const result = h.of('tool.completed', id).at(-1)!;
  t.match(result.payload, { tool: 'sys_update_config', ok: false });
  t.same((await h.d.request('GET', `/agents/${id}/config`)).body.config.budget, { day_usd: 1 });
});

t.test('the daemon budget holds across agents at once: 10 agents, a day_usd that fits 3 calls', async (t) => {
  now = Date.UTC(2026, 5, 20, 12, 0); // a fresh day for every agent of this daemon
  await settings({ pricing: { 'meter/shared': { input: 0, output: 1000 } }, budget: { day_usd: 3.5 } });
  t.teardown(() => settings({ pricing: null, budget: null }));
  const ids = await Promise.all(Array.from({ length: 10 }, () => h.agent({ model: { provider: 'meter', model_id: 'shared', max_tokens: 1000 }, budget: { on_exceeded: 'fail' } })));
  const before = meter.calls.length;
  const gate = new Gate();
  meter.gate = gate;
  t.teardown(() => (meter.gate = undefined));
  const turns = await Promise.all(ids.map((id) => chat(id)));
  await h.waitFor(() => ids.filter((id) => h.of('agent.error', id).length > 0).length === 7, '7 refused turns');
  t.equal(meter.calls.length - before, 3, 'exactly 3 calls reached the model');
  gate.release();
  const ends = await Promise.all(turns.map((turn) => h.ended(turn)));
  t.equal(ends.filter((e) => e.event_type === 'turn.completed').length, 3);
  t.ok(ends.filter((e) => e.event_type === 'agent.error').every((e) => /daemon\.day_usd/.test((e.payload as { message: string }).message)));
  const day = (await h.d.request('GET', '/usage?from=2026-06-20&to=2026-06-21&groupBy=agent')).body;
  t.match(day.totals, { calls: 3, cost_usd: 1.5 });
});
