/**
 * The reservation before a model call (docs/costs.md, "Reservation"): the prompt counted with the model
 * family's tokenizer, corrected by what the provider reported, and one call at a time until that is
 * known, so a budget is passed by at most one call even when the provider reports 3x what was counted.
 * Against the built daemon (`runDaemon`: the tokenizer's worker and its lazily imported encoding run from
 * dist/) and an OpenAI-style fake that over-reports.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import t from 'tap';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { createAgentFile } from './helpers/agent-file.js';
import { runDaemon, shippedManifest, tempDir } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';
import { reply, startFakeOpenAI, type RecordedRequest } from './fakes/openai.js';
import { TokenCounter } from '../kernel/spend/token-count.js';

const KEY = 'sk-reservation-test';
const ENV = 'TEST_RESERVATION_KEY_AGT';

/** Prose of 6,000 characters (1,000 o200k tokens; 2,000 at 3 characters a token). */
const WORDS =
  'the owner keeps budgets for every agent and each model call reserves its worst case before it starts'.split(' ');
const PROSE = Array.from({ length: 1_000 }, (_, i) => WORDS[(i * 7 + (i >> 3)) % WORDS.length])
  .join(' ')
  .slice(0, 6_000);

const textOf = (request: RecordedRequest) =>
  ((request.body as { messages: Array<{ content?: unknown }> }).messages ?? [])
    .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? '')))
    .join('\n');

t.test('a provider reporting 3x the prompt: 50 chats at once end at most one call over day_tokens', async (t) => {
  const reported: number[] = [];
  let releaseFirst!: () => void;
  const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
  let firstArrived!: () => void;
  const arrived = new Promise<void>((resolve) => (firstArrived = resolve));
  const fake = await startFakeOpenAI(t, async (request) => {
    const usage = { input: 3 * countTokens(textOf(request), { disallowedSpecial: new Set() }), output: 20 };
    if (reported.length === 0) {
      reported.push(0);
      firstArrived();
      await firstHeld;
      reported[0] = usage.input + usage.output;
    } else {
      reported.push(usage.input + usage.output);
    }
    return reply.text('ok', { usage, delayMs: 5 });
  });
  const d = await runDaemon(t, {
    extensions: shippedManifest({ providers: { maxRetries: 0 } }),
    settings: { providers: [{ id: 'oa', type: 'openai', name: 'OA', baseUrl: fake.baseUrl, apiKeyEnv: ENV }] },
    env: { [ENV]: KEY },
  });
  t.ok(d.url, d.stderr());
  const call = async (method: string, path: string, body?: unknown) =>
    (await d.request(method, path, body)) as { status: number; body: any };

  const LIMIT = 30_000;
  const loops = Array.from({ length: 50 }, (_, i) => ({ name: `l${i}`, goal: 'answer', enabled: true }));
  const filePath = await createAgentFile(tempDir(t), {
    name: 'Spender',
    model: { provider: 'oa', model_id: 'gpt-4o', max_tokens: 64 },
    budget: { day_tokens: LIMIT, on_exceeded: 'fail' },
    loops,
  });
  const loaded = await call('POST', '/agents/load', { filePath });
  t.equal(loaded.status, 200, loaded.body.error);
  const id = loaded.body.id as string;

  const events = await eventLog(t, d);
  const turns = await Promise.all(
    loops.map(
      async (loop) =>
        (await call('POST', `/agents/${id}/chat?loop=${loop.name}`, { text: PROSE })).body.turnId as string,
    ),
  );

  // The first call goes alone (the provider's count is not known yet): while it is held, the others wait,
  // and what it holds is the tokenizer's count of the prompt plus max_tokens.
  await arrived;
  const held = (await call('GET', `/agents/${id}/usage`)).body.budget;
  t.equal(held.used['agent.day_tokens'], 0);
  const reservedPrompt = LIMIT - held.remaining['agent.day_tokens'] - 64;
  const first = fake.chatRequests()[0]!;
  const sent = textOf(first) + JSON.stringify((first.body as { tools?: unknown }).tools ?? []);
  const sentTokens = countTokens(sent);
  t.ok(
    reservedPrompt >= sentTokens * 0.95 && reservedPrompt < sentTokens * 1.1,
    `reserved ${reservedPrompt} for a prompt of ${sentTokens} o200k tokens (${sent.length} characters)`,
  );
  t.ok(reservedPrompt < sent.length / 3.5, 'counted by the tokenizer, not by characters');
  t.equal(fake.chatRequests().length, 1, 'one call in flight until the first settles');
  releaseFirst();

  const ended = (turn: string) =>
    events.waitFor(
      (e) =>
        e.agent_id === id &&
        (e.turn_id ?? (e.payload as { turn_id?: string }).turn_id) === turn &&
        (e.event_type === 'turn.completed' || e.event_type === 'agent.error'),
      `the end of ${turn}`,
    );
  const ends = await Promise.all(turns.map(ended));
  const completed = ends.filter((e) => e.event_type === 'turn.completed').length;
  const refused = ends.filter((e) => (e.payload as { code?: string }).code === 'budget_exceeded').length;
  t.equal(completed + refused, 50, 'every turn completed or was refused by the budget');
  t.ok(completed >= 5, `${completed} calls ran`);
  t.ok(refused > 0, `${refused} refused`);

  const view = (await call('GET', `/agents/${id}/usage`)).body;
  const used = view.spend.input + view.spend.output;
  t.equal(
    used,
    reported.reduce((a, b) => a + b, 0),
    'the ledger holds what the provider reported',
  );
  const oneCall = Math.max(...reported);
  t.ok(used <= LIMIT + oneCall, `used ${used} of ${LIMIT}: at most one call (${oneCall}) over`);
  t.ok(used > LIMIT - 2 * oneCall, `the budget was used, not refused early (${used})`);
  t.equal(view.budget.remaining['agent.day_tokens'], Math.max(0, LIMIT - used), 'nothing stays reserved');
});

t.test('counting a large prompt does not stall the event loop: the tokenizer runs on the worker', async (t) => {
  const counter = new TokenCounter();
  t.teardown(() => counter.close());
  t.equal(await counter.count('o200k', ['warm up']), 2, 'the encoding is loaded (on the worker)');
  const text = PROSE.repeat(300); // 1.8 MB
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  const started = performance.now();
  const tokens = await counter.count('o200k', [text]);
  const took = performance.now() - started;
  delay.disable();
  const stalled = delay.max / 1e6;
  t.ok(tokens !== null && Math.abs(tokens - countTokens(text)) === 0, 'the same count as the library in this thread');
  t.ok(
    stalled < Math.max(50, took / 2),
    `longest event-loop stall ${stalled.toFixed(1)} ms while counting took ${took.toFixed(0)} ms`,
  );
  const again = performance.now();
  t.equal(await counter.count('o200k', [text]), tokens, 'a piece seen before');
  t.ok(performance.now() - again < took / 2, 'is remembered, not counted again');
  t.equal(
    await counter.count('claude', ['hello <META> world']),
    await counter.count('claude', ['hello <META> world']),
    'special-token spellings count as text',
  );
});
