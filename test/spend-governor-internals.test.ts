/**
 * The spend governor's day boundary (docs/costs.md) against a clock the test sets: days start at midnight
 * in the owner's time zone. In process because the governor's clock is injected (a built daemon keeps
 * the real one), with a model client that reports fixed usage; the rest of the governor is tested on the
 * built daemon in spend-governor.test.ts.
 */
import t from 'tap';
import type { ModelClientProvider, ModelRequest, ModelResponse } from '../contracts/model.js';
import { periodsAt } from '../kernel/spend/calendar.js';
import { runtimeHarness, type RuntimeHarness } from './fixtures/runtime/harness.js';
import type { Gate } from './fixtures/runtime/scripted-model.js';

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
let now = Date.UTC(2026, 5, 10, 12, 0);
const clock = { now: () => now };

t.before(async () => {
  h = await runtimeHarness(t, { settings: { timezone: 'UTC' } });
  h.d.daemon.kernel.contributions.forExtension('test-meter').modelClients(new MeterModel(['meter']));
  // Only the governor reads this clock (its `now`); timers keep the harness's real one.
  const governor = h.service.governor as unknown as { deps: { now: () => number } };
  governor.deps.now = clock.now;
});

const settings = (patch: Record<string, unknown>) => h.d.request('PATCH', '/settings', patch);
const chat = async (id: string, text = 'hi') =>
  (await h.d.request('POST', `/agents/${id}/chat`, { text })).body.turnId as string;
const usage = async (id: string) => (await h.d.request('GET', `/agents/${id}/usage`)).body;

t.test("days start at midnight in the owner's time zone (injected clock, settings timezone)", async (t) => {
  await settings({ timezone: 'Asia/Tokyo', pricing: { 'meter/daily': { input: 0, output: 1000 } } });
  t.teardown(() => settings({ timezone: 'UTC', pricing: null }));
  // 23:59 in Tokyo (14:59 UTC): each call reserves 1 USD and settles at 0.5; 1.2 USD fit one.
  now = Date.UTC(2026, 5, 12, 14, 59);
  const id = await h.agent({
    model: { provider: 'meter', model_id: 'daily', max_tokens: 1000 },
    budget: { day_usd: 1.2, on_exceeded: 'fail' },
  });
  t.equal((await h.ended(await chat(id))).event_type, 'turn.completed');
  t.equal((await h.ended(await chat(id))).event_type, 'agent.error', 'the second call would pass the day');
  t.equal((await usage(id)).budget.resets_at['agent.day_usd'], '2026-06-12T15:00:00.000Z');
  now = Date.UTC(2026, 5, 12, 15, 0, 30); // 00:00:30 in Tokyo, still 12 June in UTC
  t.equal((await h.ended(await chat(id))).event_type, 'turn.completed', 'a new day in Tokyo');
  const days = (await h.d.request('GET', '/usage?from=2026-06-12T00:00:00Z&to=2026-06-13T00:00:00Z&groupBy=day')).body;
  t.same(
    days.groups.map((g: { key: string; calls: number }) => [g.key, g.calls]),
    [
      ['2026-06-12', 1],
      ['2026-06-13', 1],
    ],
    'day groups in Tokyo time',
  );
  t.equal(days.timezone, 'Asia/Tokyo');
  t.equal(periodsAt(now, 'Asia/Tokyo').day, '2026-06-13');
});
