/**
 * Failure handling of the model clients: retries (429 with Retry-After, 5xx), exhausted retries,
 * non-retryable 4xx, stalls, cut/truncated/malformed answers, cancellation that really closes the
 * upstream request, requestDelayMs spacing, unreachable servers, and keys kept out of errors and logs.
 */
import t from 'tap';
import { createServer } from 'node:net';
import type { AgtError } from '../contracts/errors.js';
import { createModelClient } from '../extensions/providers/model-client.js';
import { startFakeAnthropic } from './fakes/anthropic.js';
import { reply, startFakeOpenAI } from './fakes/openai.js';
import { makeRequest, makeRuntime, makeTarget } from './fakes/providers-harness.js';

const KEY = 'sk-secret-KEY-0123456789abcdef';

t.test('429 with Retry-After in seconds, then as an HTTP date: retried after the advertised delay', async (t) => {
  const fake = await startFakeOpenAI(
    t,
    (_request, index) =>
      [
        reply.rateLimited(1),
        reply.text('first'),
        reply.rateLimited(new Date(Date.now() + 2_000).toUTCString()),
        reply.text('second'),
      ][index]!,
  );
  const { runtime, logs } = makeRuntime(t);
  const client = createModelClient(makeTarget('openai', fake.baseUrl, { apiKey: KEY }), runtime);
  t.equal((await client.complete(makeRequest())).text, 'first');
  const [a, b] = fake.chatRequests();
  t.ok(b!.at - a!.at >= 950, `waited ${b!.at - a!.at} ms for Retry-After: 1`);
  t.equal((await client.complete(makeRequest())).text, 'second');
  const [, , c, d] = fake.chatRequests();
  t.ok(d!.at - c!.at >= 900, `waited ${d!.at - c!.at} ms for an HTTP-date Retry-After`);
  t.match(logs.join('\n'), /retrying/);
});

t.test('a Retry-After beyond maxRetryAfterMs fails at once with the 429', async (t) => {
  const fake = await startFakeOpenAI(t, [reply.rateLimited(3600)]);
  const { runtime } = makeRuntime(t, { maxRetryAfterMs: 5_000, retryBaseMs: 10 });
  const client = createModelClient(makeTarget('openai', fake.baseUrl, { apiKey: KEY }), runtime);
  await t.rejects(client.complete(makeRequest()), {
    code: 'upstream_error',
    details: { upstreamStatus: 429, provider: 'test-openai' },
  });
  t.equal(fake.chatRequests().length, 1);
});

t.test('500 and 503 are retried, then the call succeeds', async (t) => {
  const fake = await startFakeOpenAI(t, [reply.error(500), reply.error(503), reply.text('recovered')]);
  const { runtime } = makeRuntime(t);
  const client = createModelClient(makeTarget('openai-compatible', fake.baseUrl, { maxRetries: 2 }), runtime);
  t.equal((await client.complete(makeRequest())).text, 'recovered');
  t.equal(fake.chatRequests().length, 3);
});

t.test('500 until retries run out: upstream_error with the status', async (t) => {
  const fake = await startFakeOpenAI(t, [reply.error(500), reply.error(500), reply.error(500), reply.text('never')]);
  const { runtime } = makeRuntime(t);
  const client = createModelClient(makeTarget('openai-compatible', fake.baseUrl, { maxRetries: 2 }), runtime);
  const error = (await client.complete(makeRequest()).catch((e) => e)) as AgtError;
  t.equal(error.code, 'upstream_error');
  t.equal(error.statusCode, 502);
  t.same(error.details, { provider: 'test-openai-compatible', upstreamStatus: 500 });
  t.match(error.message, /HTTP 500/);
  t.equal(fake.chatRequests().length, 3);
});

t.test('anthropic 529 overloaded is retried; 400 is not', async (t) => {
  const fake = await startFakeAnthropic(t, [
    reply.error(529, { message: 'Overloaded' }),
    reply.text('fine'),
    reply.error(400, { message: 'messages: bad' }),
  ]);
  const { runtime } = makeRuntime(t);
  const client = createModelClient(makeTarget('anthropic', fake.baseUrl, { apiKey: KEY }), runtime);
  t.equal((await client.complete(makeRequest())).text, 'fine');
  const error = (await client.complete(makeRequest()).catch((e) => e)) as AgtError;
  t.match(error, { code: 'upstream_error', details: { upstreamStatus: 400 } });
  t.match(error.message, /invalid_request_error: messages: bad/);
  t.equal(fake.messageRequests().length, 3);
});

for (const kind of ['openai', 'anthropic'] as const) {
  const start = (t: { teardown(fn: () => unknown): void }, script: ReturnType<typeof reply.stall>[]) =>
    kind === 'openai' ? startFakeOpenAI(t, script) : startFakeAnthropic(t, script);

  t.test(`${kind}: a stalled stream ends in timeout and the request is closed`, async (t) => {
    const fake = await start(t, [reply.stall()]);
    const { runtime } = makeRuntime(t);
    const client = createModelClient(
      makeTarget(kind, fake.origin + (kind === 'openai' ? '/v1' : ''), { apiKey: KEY, idleTimeoutMs: 300 }),
      runtime,
    );
    const request = makeRequest();
    await t.rejects(client.complete(request), { code: 'timeout', details: { idleTimeoutMs: 300 } });
    await fake.requests[0]!.done;
    t.equal(fake.requests[0]!.clientAborted, true, 'the server saw the connection close');
  });

  t.test(`${kind}: a JSON call that never answers ends at the total timeout`, async (t) => {
    const fake = await start(t, [reply.stall()]);
    const { runtime } = makeRuntime(t);
    const client = createModelClient(
      makeTarget(kind, fake.origin + (kind === 'openai' ? '/v1' : ''), { apiKey: KEY, timeoutMs: 400 }),
      runtime,
    );
    await t.rejects(client.complete(makeRequest({ onDelta: undefined })), {
      code: 'timeout',
      details: { timeoutMs: 400 },
    });
  });

  t.test(`${kind}: cut, truncated and malformed answers are clear upstream errors`, async (t) => {
    const fake = await start(t, [reply.cut(), reply.truncated(), reply.malformed(), reply.cut(), reply.malformed()]);
    const { runtime } = makeRuntime(t);
    const client = createModelClient(
      makeTarget(kind, fake.origin + (kind === 'openai' ? '/v1' : ''), { apiKey: KEY }),
      runtime,
    );
    const cut = (await client.complete(makeRequest()).catch((e) => e)) as AgtError;
    t.match(cut, { code: 'upstream_error', message: /cut stream/ });
    const truncated = (await client.complete(makeRequest()).catch((e) => e)) as AgtError;
    t.match(truncated, { code: 'upstream_error', message: /truncated stream/ });
    const malformed = (await client.complete(makeRequest()).catch((e) => e)) as AgtError;
    t.match(malformed, { code: 'upstream_error', message: /malformed/ });
    const cutJson = (await client.complete(makeRequest({ onDelta: undefined })).catch((e) => e)) as AgtError;
    t.match(cutJson, { code: 'upstream_error', message: /cut stream/ });
    const badJson = (await client.complete(makeRequest({ onDelta: undefined })).catch((e) => e)) as AgtError;
    t.match(badJson, { code: 'upstream_error', message: /malformed/ });
    t.equal(fake.requests.length, 5, 'none of these is retried');
  });

  t.test(`${kind}: aborting the signal mid-stream cancels the upstream request`, async (t) => {
    const fake = await start(t, [reply.text('a fairly long answer that streams slowly', { chunkDelayMs: 100 })]);
    const { runtime } = makeRuntime(t);
    const client = createModelClient(
      makeTarget(kind, fake.origin + (kind === 'openai' ? '/v1' : ''), { apiKey: KEY }),
      runtime,
    );
    const request = makeRequest();
    const first = new Promise<void>((done) => {
      request.onDelta = (text) => {
        request.deltas.push(text);
        done();
      };
    });
    const pending = client.complete(request);
    await first;
    request.controller.abort();
    await t.rejects(pending, { code: 'aborted', statusCode: 499 });
    await fake.requests[0]!.done;
    t.equal(fake.requests[0]!.clientAborted, true, 'the server saw the connection close');
  });
}

t.test('aborting during a backoff wait or before the answer arrives rejects at once', async (t) => {
  const fake = await startFakeOpenAI(t, [reply.error(500), reply.text('late', { delayMs: 5_000 })]);
  const { runtime } = makeRuntime(t, { retryBaseMs: 10_000, retryMaxMs: 10_000 });
  const client = createModelClient(makeTarget('openai-compatible', fake.baseUrl), runtime);
  const waiting = makeRequest();
  const pending = client.complete(waiting);
  while (fake.chatRequests().length < 1) await new Promise((r) => setTimeout(r, 10));
  waiting.controller.abort();
  await t.rejects(pending, { code: 'aborted' });
  t.equal(fake.chatRequests().length, 1, 'no retry after the abort');

  const { runtime: quick } = makeRuntime(t);
  const slow = makeRequest();
  const second = createModelClient(makeTarget('openai-compatible', fake.baseUrl), quick).complete(slow);
  while (fake.chatRequests().length < 2) await new Promise((r) => setTimeout(r, 10));
  slow.controller.abort();
  await t.rejects(second, { code: 'aborted' });
  await fake.chatRequests()[1]!.done;
  t.equal(fake.chatRequests()[1]!.clientAborted, true);
});

t.test('stopping the extension ends running calls with unavailable', async (t) => {
  const fake = await startFakeOpenAI(t, [reply.stall()]);
  const { runtime, stop } = makeRuntime(t);
  const client = createModelClient(makeTarget('openai-compatible', fake.baseUrl), runtime);
  const pending = client.complete(makeRequest());
  while (fake.chatRequests().length < 1) await new Promise((r) => setTimeout(r, 10));
  stop();
  await t.rejects(pending, { code: 'unavailable' });
  await fake.chatRequests()[0]!.done;
  t.equal(fake.chatRequests()[0]!.clientAborted, true);
});

t.test('requestDelayMs: calls to one provider pass through its gate, sequential and concurrent', async (t) => {
  // The spacing itself is asserted on a fake clock in providers-units; here the real calls go through.
  const fake = await startFakeOpenAI(t, () => reply.text('ok'));
  const { runtime } = makeRuntime(t);
  const client = createModelClient(makeTarget('openai-compatible', fake.baseUrl, { requestDelayMs: 50 }), runtime);
  await client.complete(makeRequest());
  await client.complete(makeRequest());
  await Promise.all([client.complete(makeRequest()), client.complete(makeRequest())]);
  t.equal(fake.chatRequests().length, 4);
  const other = createModelClient(
    makeTarget('openai-compatible', fake.baseUrl, { gateKey: 'app:other', requestDelayMs: 0 }),
    runtime,
  );
  await other.complete(makeRequest());
  t.equal(fake.chatRequests().length, 5);
});

t.test('an unreachable server: retried, then upstream_error with a null status', async (t) => {
  const port = await new Promise<number>((done) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
  const { runtime, logs } = makeRuntime(t);
  const client = createModelClient(
    makeTarget('openai-compatible', `http://127.0.0.1:${port}/v1`, { maxRetries: 1 }),
    runtime,
  );
  const error = (await client.complete(makeRequest()).catch((e) => e)) as AgtError;
  t.match(error, {
    code: 'upstream_error',
    details: { upstreamStatus: null },
    message: /cannot reach provider test-openai-compatible.*ECONNREFUSED/,
  });
  t.equal(logs.filter((l) => l.includes('retrying')).length, 1);
});

t.test('the key never appears in errors or logs, even when the vendor echoes it', async (t) => {
  const fake = await startFakeOpenAI(t, [], { expectKey: 'a-different-key' });
  const { runtime, logs } = makeRuntime(t);
  const client = createModelClient(makeTarget('openai', fake.baseUrl, { apiKey: KEY }), runtime);
  const error = (await client.complete(makeRequest()).catch((e) => e)) as AgtError;
  t.match(error, { code: 'upstream_error', details: { upstreamStatus: 401 } });
  t.match(error.message, /Incorrect API key provided: \[redacted\]/);
  t.equal(fake.chatRequests()[0]!.headers.authorization, `Bearer ${KEY}`, 'the key was sent');

  const echoing = await startFakeOpenAI(t, [
    reply.error(500, { message: `backend saw key ${KEY}` }),
    reply.error(502, { message: `Bearer ${KEY}` }),
  ]);
  const second = createModelClient(makeTarget('openai', echoing.baseUrl, { apiKey: KEY, maxRetries: 1 }), runtime);
  const echoed = (await second.complete(makeRequest()).catch((e) => e)) as AgtError;
  t.equal(echoed.code, 'upstream_error');
  for (const text of [
    error.message,
    JSON.stringify(error.toBody()),
    echoed.message,
    JSON.stringify(echoed.toBody()),
    ...logs,
  ]) {
    t.notOk(text.includes(KEY), `no key in: ${text.slice(0, 80)}`);
    t.notOk(text.includes(KEY.slice(3, 20)), 'not even a part of it');
  }
  t.ok(logs.length > 0, 'retries were logged');
});
