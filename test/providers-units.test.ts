/**
 * The providers extension's pure pieces: typed params, reasoning intents, prices, Retry-After,
 * redaction, backoff bounds, stream assembly edge cases of compatible servers, and the bound on the size
 * of an answer (against a local server that never stops sending).
 */
import t from 'tap';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { parseRetryAfter, redact } from '../extensions/providers/errors.js';
import { retryDelay } from '../extensions/providers/model-client.js';
import { ChatStreamState } from '../extensions/providers/openai-wire.js';
import { resolveOptions } from '../extensions/providers/options.js';
import { budgetOf, effortOf, readReasoning, typedValue } from '../extensions/providers/params.js';
import { costOf, findPrice, priceCall } from '../extensions/providers/pricing.js';
import { AgtError } from '../contracts/errors.js';
import { SpacingGates } from '../extensions/providers/spacing.js';
import { createServer } from 'node:http';
import { CallGuard } from '../extensions/providers/call-guard.js';
import {
  MAX_ANSWER_BYTES,
  postEvents,
  postJson,
  SseParser,
  WireTooLargeError,
} from '../extensions/providers/wire-http.js';
import { makeTarget } from './fakes/providers-harness.js';

t.test('params are typed by their look', async (t) => {
  t.equal(typedValue('42'), 42);
  t.equal(typedValue('-0.5'), -0.5);
  t.equal(typedValue('1e3'), 1000);
  t.equal(typedValue('true'), true);
  t.equal(typedValue('false'), false);
  t.equal(typedValue('null'), null);
  t.same(typedValue('{"a":[1,2]}'), { a: [1, 2] });
  t.same(typedValue('["x"]'), ['x']);
  t.equal(typedValue('"quoted"'), 'quoted');
  t.equal(typedValue('{not json'), '{not json');
  t.equal(typedValue('gpt-4o'), 'gpt-4o');
  t.equal(typedValue(''), '');
  t.equal(typedValue('12abc'), '12abc');
});

t.test('reasoning intents', async (t) => {
  t.equal(readReasoning(undefined), null);
  t.equal(readReasoning({}), null);
  t.equal(readReasoning({ enabled: false, effort: 'high' }), null);
  t.same(readReasoning({ enabled: true }), {});
  t.same(readReasoning({ effort: 'low' }), { effort: 'low' });
  t.same(readReasoning({ budget_tokens: 5000.7 }), { budgetTokens: 5000 });
  t.same(readReasoning({ max_tokens: 3000 }), { budgetTokens: 3000 });
  t.equal(budgetOf({}), 8192);
  t.equal(budgetOf({ effort: 'high' }), 24576);
  t.equal(budgetOf({ budgetTokens: 10 }), 1024, 'Anthropic minimum');
  t.equal(effortOf({ budgetTokens: 2000 }), 'low');
  t.equal(effortOf({ budgetTokens: 20000 }), 'high');
  t.equal(effortOf({}), 'medium');
});

t.test('prices: longest prefix, dated ids, unknown is null', async (t) => {
  t.equal(findPrice('gpt-4o-mini-2024-07-18')?.input, 0.15, 'gpt-4o-mini, not gpt-4o');
  t.equal(findPrice('gpt-4o-2024-08-06')?.input, 2.5);
  t.equal(findPrice('claude-sonnet-4-20250514')?.output, 15);
  t.equal(findPrice('gpt-4oo'), null, 'a prefix must end at a separator');
  t.equal(findPrice('llama3.2'), null);
  const usage = { input: 1_000_000, output: 1_000_000, cacheRead: 0, cacheWrite: 0 };
  t.equal(costOf(usage, { input: 1, output: 2 }), 3);
  t.equal(
    costOf({ ...usage, cacheRead: 1_000_000 }, { input: 1, output: 2 }),
    2.5,
    'cache reads at half the input price by default',
  );
  t.equal(priceCall('openai', 'gpt-4.1', usage, null, {}), 10);
  t.equal(priceCall('openai-compatible', 'gpt-4.1', usage, null, {}), null);
  t.equal(priceCall('openrouter', 'openai/gpt-4.1', usage, 0.5, {}), 0.5, 'reported cost wins');
  t.equal(priceCall('anthropic', 'claude-unknown', usage, null, {}), null);
});

t.test('Retry-After: seconds, milliseconds, HTTP date, garbage', async (t) => {
  const headers = (h: Record<string, string>) => new Headers(h);
  t.equal(parseRetryAfter(headers({ 'retry-after': '3' })), 3000);
  t.equal(parseRetryAfter(headers({ 'retry-after': '0.5' })), 500);
  t.equal(parseRetryAfter(headers({ 'retry-after-ms': '250', 'retry-after': '9' })), 250);
  const now = Date.parse('2025-01-01T00:00:00Z');
  t.equal(parseRetryAfter(headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:05 GMT' }), now), 5000);
  t.equal(
    parseRetryAfter(headers({ 'retry-after': 'Tue, 31 Dec 2024 00:00:00 GMT' }), now),
    0,
    'a past date means now',
  );
  t.equal(parseRetryAfter(headers({ 'retry-after': 'soon' })), undefined);
  t.equal(parseRetryAfter(headers({})), undefined);
});

t.test('redaction removes known secrets and key-shaped tokens', async (t) => {
  t.equal(redact('bad key my-secret-value here', ['my-secret-value']), 'bad key [redacted] here');
  t.equal(redact('Incorrect API key provided: sk-proj-abc********xyz1.'), 'Incorrect API key provided: [redacted].');
  t.equal(redact('header was Bearer abc.def-ghi, sorry'), 'header was Bearer [redacted], sorry');
  t.ok(redact('x'.repeat(1000)).length < 500, 'long upstream text is cut');
});

t.test('backoff: exponential with at most 25 % jitter, capped; Retry-After replaces it', async (t) => {
  const options = resolveOptions({ retryBaseMs: 100, retryMaxMs: 350, maxRetryAfterMs: 1000 });
  const failure = { retryable: true, error: new AgtError('upstream_error', 'x') };
  for (let i = 0; i < 50; i++) {
    const first = retryDelay(0, failure, options)!;
    t.ok(first >= 75 && first <= 100, `attempt 0: ${first}`);
    const third = retryDelay(2, failure, options)!;
    t.ok(third >= 262 && third <= 350, `attempt 2 capped: ${third}`);
  }
  t.equal(retryDelay(0, { ...failure, retryAfterMs: 800 }, options), 800);
  t.equal(retryDelay(0, { ...failure, retryAfterMs: 1001 }, options), null, 'too long to wait');
});

t.test(
  'event-stream parsing: LF, CRLF and CR line ends split anywhere, comments, multi-line data, names',
  async (t) => {
    const stream =
      ': comment\r\nevent: message_start\r\ndata: {"a":1}\r\n\r\ndata: one\ndata: two\n\nevent: ping\rdata:x\r\rdata: [DONE]\n\ndata: no blank line at the end';
    const expected = [
      ['message_start', '{"a":1}'],
      [null, 'one\ntwo'],
      ['ping', 'x'],
      [null, '[DONE]'],
    ];
    // Every split of the text into two chunks, and one character at a time, parse the same.
    for (let cut = 0; cut <= stream.length; cut++) {
      const events: Array<[string | null, string]> = [];
      const parser = new SseParser((event, data) => events.push([event, data]));
      parser.push(stream.slice(0, cut));
      parser.push(stream.slice(cut));
      t.same(events, expected, `split at ${cut}`);
    }
    const events: Array<[string | null, string]> = [];
    const parser = new SseParser((event, data) => events.push([event, data]));
    for (const char of stream) parser.push(char);
    t.same(events, expected, 'one character at a time');
  },
);

t.test('stream assembly: tool-call fragments without index (some compatible servers), repeated names', async (t) => {
  const state = new ChatStreamState();
  const chunk = (delta: object, finish: string | null = null) =>
    ({
      id: 'c',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'm',
      choices: [{ index: 0, delta, finish_reason: finish }],
    }) as ChatCompletionChunk;
  const deltas: string[] = [];
  state.add(chunk({ content: 'Hi' }), (d) => deltas.push(d));
  state.add(chunk({ tool_calls: [{ id: 'a', function: { name: 'one', arguments: '{"x":' } }] }), () => {});
  state.add(chunk({ tool_calls: [{ function: { name: 'one', arguments: '1}' } }] }), () => {});
  state.add(chunk({ tool_calls: [{ id: 'b', function: { name: 'two', arguments: '{}' } }] }), () => {});
  state.add(chunk({}, 'tool_calls'), () => {});
  t.same(deltas, ['Hi']);
  t.same(state.toolCalls(makeTarget('openai-compatible', 'http://x')), [
    { id: 'a', name: 'one', args: { x: 1 } },
    { id: 'b', name: 'two', args: {} },
  ]);
  t.equal(state.finish, 'tool_calls');
});

t.test(
  'spacing gates: calls to one gate start one delay apart, sequential and concurrent; other gates are not held',
  async (t) => {
    // A fake clock: time moves only when the test says; each wait's sleep is recorded in call order.
    let now = 1_000;
    const sleeps: number[] = [];
    const gates = new SpacingGates({ now: () => now, sleep: async (ms) => void sleeps.push(ms) });
    const starts: Record<string, number[]> = {};
    const call = async (key: string, delay: number) => {
      const before = now;
      const index = sleeps.length;
      await gates.wait(key, delay);
      const start = before + (sleeps.length > index ? sleeps[index]! : 0);
      (starts[key] ??= []).push(start);
      return start;
    };
    now = await call('a', 300);
    now = await call('a', 300);
    now += 1_000; // idle long enough: the next call starts at once
    now = await call('a', 300);
    await Promise.all([call('a', 300), call('a', 300)]);
    await call('b', 300);
    await call('c', 0);
    t.same(starts.a, [1_000, 1_300, 2_300, 2_600, 2_900]);
    t.same(starts.b, [now], 'another gate starts without waiting for gate a');
    t.same(starts.c, [now], 'no delay: no wait at all');
  },
);

t.test('spacing gates: an aborted wait rejects with the reason', async (t) => {
  const gates = new SpacingGates({
    now: () => 0,
    sleep: (_ms, signal) =>
      new Promise((_resolve, reject) => signal?.addEventListener('abort', () => reject(signal.reason))),
  });
  await gates.wait('a', 100);
  const controller = new AbortController();
  const waiting = gates.wait('a', 100, controller.signal);
  controller.abort(new Error('stop'));
  await t.rejects(waiting, { message: 'stop' });
});

t.test('an answer that never ends is cut at MAX_ANSWER_BYTES, JSON or stream', async (t) => {
  // 1 MiB chunks, JSON-looking or SSE-looking, until the client goes away.
  const chunk = Buffer.alloc(1024 * 1024, 'a');
  let sent = 0;
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': req.url === '/stream' ? 'text/event-stream' : 'application/json' });
    res.write(req.url === '/stream' ? 'data: ' : '["');
    const more = () => {
      for (let room = true; room && !res.destroyed; sent += chunk.length) room = res.write(chunk);
      if (!res.destroyed) res.once('drain', more);
    };
    res.on('close', () => res.removeAllListeners('drain'));
    more();
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  t.teardown(() => new Promise<void>((done) => server.close(() => done())));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const guards: CallGuard[] = [];
  t.teardown(() => {
    for (const guard of guards) guard.dispose();
  });
  const post = (path: string) => {
    const guard = new CallGuard(undefined, { timeoutMs: 60_000, idleTimeoutMs: 60_000 });
    guards.push(guard);
    return { url: base + path, headers: {}, body: {}, guard, errorOf: (body: unknown) => body };
  };
  for (const [name, call] of [
    ['JSON', () => postJson(post('/json'))],
    ['stream', () => postEvents(post('/stream'), () => {})],
  ] as const) {
    sent = 0;
    await t.rejects(call(), new WireTooLargeError(), `${name}: ended with the bound's error`);
    t.ok(
      sent >= MAX_ANSWER_BYTES - chunk.length * 8 && sent < MAX_ANSWER_BYTES * 2,
      `${name}: the server stopped near the bound (${sent} bytes)`,
    );
  }
});
