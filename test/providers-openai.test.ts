/**
 * Chat Completions kinds (openai, openai-compatible, openrouter) against the fake OpenAI server:
 * JSON and streamed answers, tool calls both ways, usage with cache tokens, cost, parameter mapping,
 * and the Authorization header.
 */
import t from 'tap';
import { createModelClient } from '../extensions/providers/model-client.js';
import { reply, startFakeOpenAI } from './fakes/openai.js';
import { makeRequest, makeRuntime, makeTarget } from './fakes/providers-harness.js';

t.test('streamed text: deltas, usage with cached tokens, known cost (openai)', async (t) => {
  const fake = await startFakeOpenAI(t, [
    reply.text('Hello there, world', { usage: { input: 1000, output: 200, cacheRead: 400 } }),
  ]);
  const { runtime } = makeRuntime(t);
  const client = createModelClient(makeTarget('openai', fake.baseUrl, { apiKey: 'sk-test-key-123456' }), runtime);
  const request = makeRequest({ model: { model_id: 'gpt-4o-mini' } });
  const response = await client.complete(request);
  t.equal(response.text, 'Hello there, world');
  t.ok(request.deltas.length > 1, 'several deltas');
  t.equal(request.deltas.join(''), 'Hello there, world');
  t.same(response.usage, { input: 1000, output: 200, cacheRead: 400, cacheWrite: 0 });
  // gpt-4o-mini: 600 uncached * 0.15 + 400 cached * 0.075 + 200 out * 0.6, per million
  t.equal(response.cost, (600 * 0.15 + 400 * 0.075 + 200 * 0.6) / 1e6);
  t.equal(response.stopReason, 'end');
  t.equal(response.provider, 'test-openai');
  t.equal(response.model, 'gpt-4o-mini');
  const sent = fake.chatRequests()[0]!;
  t.equal(sent.headers.authorization, 'Bearer sk-test-key-123456');
  t.equal(sent.body.stream, true);
  t.same(sent.body.stream_options, { include_usage: true });
  t.same(sent.body.messages, [
    { role: 'system', content: 'You are a test.' },
    { role: 'user', content: 'hello' },
  ]);
});

t.test('JSON answer when no onDelta is given; unknown model costs null', async (t) => {
  const fake = await startFakeOpenAI(t, [reply.text('plain json', { usage: { input: 30, output: 4 } })]);
  const { runtime } = makeRuntime(t);
  const client = createModelClient(makeTarget('openai', fake.baseUrl, { apiKey: 'k-1234' }), runtime);
  const response = await client.complete(
    makeRequest({ onDelta: undefined, model: { model_id: 'some-unknown-model' } }),
  );
  t.equal(response.text, 'plain json');
  t.same(response.usage, { input: 30, output: 4, cacheRead: 0, cacheWrite: 0 });
  t.equal(response.cost, null);
  t.notOk(fake.chatRequests()[0]!.body.stream, 'not streamed');
});

for (const stream of [true, false]) {
  t.test(`tool calls round trip (${stream ? 'stream' : 'JSON'})`, async (t) => {
    const fake = await startFakeOpenAI(t, [
      reply.toolCalls([
        { id: 'call_a', name: 'fs_read', args: { path: '/notes.md', lines: 20 } },
        { id: 'call_b', name: 'say', args: { text: 'hi "there"' } },
      ]),
      reply.text('done'),
    ]);
    const { runtime } = makeRuntime(t);
    const client = createModelClient(makeTarget('openai-compatible', fake.baseUrl), runtime);
    const tools = [
      {
        name: 'fs_read',
        description: 'Read a file',
        inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
      },
      { name: 'say', description: 'Say', inputSchema: { type: 'object' } },
    ];
    const first = await client.complete(makeRequest({ tools, ...(stream ? {} : { onDelta: undefined }) }));
    t.equal(first.stopReason, 'tool_use');
    t.same(first.toolCalls, [
      { id: 'call_a', name: 'fs_read', args: { path: '/notes.md', lines: 20 } },
      { id: 'call_b', name: 'say', args: { text: 'hi "there"' } },
    ]);
    t.same(fake.chatRequests()[0]!.body.tools[0], {
      type: 'function',
      function: {
        name: 'fs_read',
        description: 'Read a file',
        parameters: { type: 'object', properties: { path: { type: 'string' } } },
      },
    });
    const second = await client.complete(
      makeRequest({
        tools,
        messages: [
          { role: 'user', content: 'read it' },
          { role: 'assistant', content: '', toolCalls: first.toolCalls },
          { role: 'tool', toolCallId: 'call_a', name: 'fs_read', content: '# notes' },
          { role: 'tool', toolCallId: 'call_b', name: 'say', content: 'no such file', isError: true },
        ],
      }),
    );
    t.equal(second.text, 'done');
    t.same(fake.chatRequests()[1]!.body.messages.slice(1), [
      { role: 'user', content: 'read it' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_a',
            type: 'function',
            function: { name: 'fs_read', arguments: '{"path":"/notes.md","lines":20}' },
          },
          { id: 'call_b', type: 'function', function: { name: 'say', arguments: '{"text":"hi \\"there\\""}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: '# notes' },
      { role: 'tool', tool_call_id: 'call_b', content: 'Error: no such file' },
    ]);
  });
}

t.test('tool call arguments that are not JSON end in upstream_error', async (t) => {
  const fake = await startFakeOpenAI(t, [reply.toolCalls([{ name: 'say', args: '{"text": "unterminated' }])]);
  const { runtime } = makeRuntime(t);
  const client = createModelClient(makeTarget('openai-compatible', fake.baseUrl), runtime);
  await t.rejects(client.complete(makeRequest()), { code: 'upstream_error', details: { tool: 'say' } });
});

t.test('no key: no Authorization header (openai-compatible, e.g. Ollama)', async (t) => {
  const fake = await startFakeOpenAI(t, [
    reply.text('local'),
    reply.text('again', { usage: { input: 1_000_000, output: 0 } }),
  ]);
  const { runtime } = makeRuntime(t);
  const client = createModelClient(makeTarget('openai-compatible', fake.baseUrl), runtime);
  t.equal((await client.complete(makeRequest())).text, 'local');
  t.equal(fake.chatRequests()[0]!.headers.authorization, undefined);
  t.equal(
    (await client.complete(makeRequest({ model: { model_id: 'gpt-4o' } }))).cost,
    null,
    'a local model is never priced from the table',
  );
});

t.test('model settings map to the body: max tokens, sampling, reasoning, params, provider_params', async (t) => {
  const fake = await startFakeOpenAI(t, [reply.text('a'), reply.text('b'), reply.text('c')]);
  const { runtime } = makeRuntime(t);
  const model = {
    model_id: 'm1',
    temperature: 0.3,
    top_p: 0.9,
    max_tokens: 256,
    reasoning: { effort: 'high' },
    params: [
      { key: 'seed', value: '42' },
      { key: 'logprobs', value: 'true' },
      { key: 'stop', value: '["END"]' },
      { key: 'user', value: 'alice' },
      { key: 'messages', value: '[]' },
    ],
    provider_params: { response_format: { type: 'json_object' }, seed: 7 },
  };
  await createModelClient(makeTarget('openai', fake.baseUrl, { apiKey: 'k-1234' }), runtime).complete(
    makeRequest({ model }),
  );
  const openai = fake.chatRequests()[0]!.body;
  t.match(openai, {
    model: 'm1',
    temperature: 0.3,
    top_p: 0.9,
    max_completion_tokens: 256,
    reasoning_effort: 'high',
    logprobs: true,
    stop: ['END'],
    user: 'alice',
  });
  t.equal(openai.seed, 7, 'provider_params win over params');
  t.same(openai.response_format, { type: 'json_object' });
  t.equal(openai.messages.length, 2, 'params cannot replace the conversation');
  t.notOk('max_tokens' in openai);

  const target = makeTarget('openai-compatible', fake.baseUrl, {
    params: [
      { key: 'num_ctx', value: '8192' },
      { key: 'seed', value: '1' },
    ],
  });
  await createModelClient(target, runtime).complete(
    makeRequest({
      model: {
        model_id: 'llama',
        max_tokens: 64,
        reasoning: { budget_tokens: 1000 },
        params: [{ key: 'seed', value: '2' }],
      },
    }),
  );
  t.match(fake.chatRequests()[1]!.body, { max_tokens: 64, reasoning_effort: 'low', num_ctx: 8192, seed: 2 });

  await createModelClient(makeTarget('openrouter', fake.baseUrl, { apiKey: 'k-1234' }), runtime).complete(
    makeRequest({ model: { model_id: 'anthropic/claude-sonnet-4', reasoning: { budget_tokens: 3000 } } }),
  );
  t.match(fake.chatRequests()[2]!.body, { reasoning: { max_tokens: 3000 }, usage: { include: true } });
  t.notOk('reasoning_effort' in fake.chatRequests()[2]!.body);
});

t.test('openrouter: reported cost wins; cache write tokens; vendor-prefixed price fallback', async (t) => {
  const fake = await startFakeOpenAI(t, [
    reply.text('x', { usage: { input: 500, output: 50, cacheRead: 100, cacheWrite: 200, cost: 0.0123 } }),
    reply.text('y', { usage: { input: 1_000_000, output: 0 } }),
  ]);
  const { runtime } = makeRuntime(t);
  const client = createModelClient(makeTarget('openrouter', fake.baseUrl, { apiKey: 'or-key-1234' }), runtime);
  const first = await client.complete(makeRequest({ model: { model_id: 'anthropic/claude-sonnet-4' } }));
  t.same(first.usage, { input: 500, output: 50, cacheRead: 100, cacheWrite: 200 });
  t.equal(first.cost, 0.0123);
  const second = await client.complete(makeRequest({ model: { model_id: 'openai/gpt-4o' } }));
  t.equal(second.cost, 2.5, 'priced from the table by the id after the vendor prefix');
});

t.test('manifest prices price any kind', async (t) => {
  const fake = await startFakeOpenAI(t, [reply.text('x', { usage: { input: 2_000_000, output: 1_000_000 } })]);
  const { runtime } = makeRuntime(t, { prices: { 'my-llama': { input: 0.5, output: 1 } } });
  const response = await createModelClient(makeTarget('openai-compatible', fake.baseUrl), runtime).complete(
    makeRequest({ model: { model_id: 'my-llama:8b' } }),
  );
  t.equal(response.cost, 2);
});

t.test('finish reasons map to stop reasons', async (t) => {
  const fake = await startFakeOpenAI(t, [
    reply.text('cut short', { stopReason: 'length' }),
    reply.text('filtered', { stopReason: 'content_filter' }),
  ]);
  const { runtime } = makeRuntime(t);
  const client = createModelClient(makeTarget('openai-compatible', fake.baseUrl), runtime);
  t.equal((await client.complete(makeRequest())).stopReason, 'max_tokens');
  t.equal((await client.complete(makeRequest())).stopReason, 'other');
});

t.test('an error chunk mid-stream is an upstream_error', async (t) => {
  const fake = await startFakeOpenAI(t, [
    {
      type: 'custom',
      handle: (_request, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(
          'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}\n\n',
        );
        res.end('data: {"error":{"message":"backend exploded","type":"server_error"}}\n\n');
      },
    },
  ]);
  const { runtime } = makeRuntime(t);
  const client = createModelClient(makeTarget('openai-compatible', fake.baseUrl), runtime);
  await t.rejects(client.complete(makeRequest()), { code: 'upstream_error', message: /mid-stream: backend exploded/ });
  t.equal(fake.chatRequests().length, 1);
});
