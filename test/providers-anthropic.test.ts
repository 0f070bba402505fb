/**
 * The anthropic kind against the fake Messages API: headers (x-api-key, anthropic-version 2023-06-01),
 * JSON and streamed answers, tool_use both ways, usage with cache read/write, cost, thinking.
 */
import t from 'tap';
import { createModelClient } from '../extensions/providers/model-client.js';
import { reply, startFakeAnthropic } from './fakes/anthropic.js';
import { makeRequest, makeRuntime, makeTarget } from './fakes/providers-harness.js';

const KEY = 'sk-ant-test-0123456789';

t.test('streamed text with cache usage and cost; the Messages API headers', async (t) => {
  const fake = await startFakeAnthropic(t, [
    reply.text('Bonjour tout le monde', { usage: { input: 10_000, cacheRead: 6_000, cacheWrite: 2_000, output: 500 } }),
  ]);
  const { runtime } = makeRuntime(t);
  const client = createModelClient(makeTarget('anthropic', fake.baseUrl, { apiKey: KEY }), runtime);
  const request = makeRequest({ model: { model_id: 'claude-sonnet-4-20250514' } });
  const response = await client.complete(request);
  t.equal(response.text, 'Bonjour tout le monde');
  t.ok(request.deltas.length > 1);
  t.equal(request.deltas.join(''), response.text);
  t.same(response.usage, { input: 10_000, output: 500, cacheRead: 6_000, cacheWrite: 2_000 });
  // sonnet 4: 2000 uncached * 3 + 6000 read * 0.3 + 2000 write * 3.75 + 500 out * 15, per million
  t.equal(response.cost, (2000 * 3 + 6000 * 0.3 + 2000 * 3.75 + 500 * 15) / 1e6);
  t.equal(response.stopReason, 'end');
  const sent = fake.messageRequests()[0]!;
  t.equal(sent.headers['x-api-key'], KEY);
  t.equal(sent.headers['anthropic-version'], '2023-06-01');
  t.equal(sent.headers.authorization, undefined, 'no bearer header');
  t.match(sent.body, { model: 'claude-sonnet-4-20250514', max_tokens: 4096, system: 'You are a test.', stream: true });
  t.same(sent.body.messages, [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }]);
});

t.test('JSON answer; unknown model costs null', async (t) => {
  const fake = await startFakeAnthropic(t, [
    reply.text('json reply', { usage: { input: 40, output: 3, cacheRead: 10 } }),
  ]);
  const { runtime } = makeRuntime(t);
  const client = createModelClient(makeTarget('anthropic', fake.baseUrl, { apiKey: KEY }), runtime);
  const response = await client.complete(
    makeRequest({ onDelta: undefined, model: { model_id: 'claude-fake-1', max_tokens: 100 } }),
  );
  t.equal(response.text, 'json reply');
  t.same(response.usage, { input: 40, output: 3, cacheRead: 10, cacheWrite: 0 });
  t.equal(response.cost, null);
  t.notOk(fake.messageRequests()[0]!.body.stream);
  t.equal(fake.messageRequests()[0]!.body.max_tokens, 100);
});

for (const stream of [true, false]) {
  t.test(`tool_use round trip (${stream ? 'stream' : 'JSON'})`, async (t) => {
    const fake = await startFakeAnthropic(t, [
      reply.toolCalls(
        [
          { id: 'toolu_a', name: 'fs_read', args: { path: '/a.md' } },
          { id: 'toolu_b', name: 'say', args: { text: 'ok' } },
        ],
        { text: 'Let me look.' },
      ),
      reply.text('All done.'),
    ]);
    const { runtime } = makeRuntime(t);
    const client = createModelClient(makeTarget('anthropic', fake.baseUrl, { apiKey: KEY }), runtime);
    const tools = [{ name: 'fs_read', description: 'Read', inputSchema: { properties: { path: { type: 'string' } } } }];
    const first = await client.complete(makeRequest({ tools, ...(stream ? {} : { onDelta: undefined }) }));
    t.equal(first.text, 'Let me look.');
    t.equal(first.stopReason, 'tool_use');
    t.same(first.toolCalls, [
      { id: 'toolu_a', name: 'fs_read', args: { path: '/a.md' } },
      { id: 'toolu_b', name: 'say', args: { text: 'ok' } },
    ]);
    t.same(fake.messageRequests()[0]!.body.tools, [
      {
        name: 'fs_read',
        description: 'Read',
        input_schema: { type: 'object', properties: { path: { type: 'string' } } },
      },
    ]);
    await client.complete(
      makeRequest({
        tools,
        messages: [
          { role: 'user', content: 'read it' },
          { role: 'assistant', content: first.text, toolCalls: first.toolCalls },
          { role: 'tool', toolCallId: 'toolu_a', name: 'fs_read', content: '# A' },
          { role: 'tool', toolCallId: 'toolu_b', name: 'say', content: 'failed', isError: true },
          { role: 'user', content: 'and then?' },
        ],
      }),
    );
    t.same(fake.messageRequests()[1]!.body.messages, [
      { role: 'user', content: [{ type: 'text', text: 'read it' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me look.' },
          { type: 'tool_use', id: 'toolu_a', name: 'fs_read', input: { path: '/a.md' } },
          { type: 'tool_use', id: 'toolu_b', name: 'say', input: { text: 'ok' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_a', content: '# A' },
          { type: 'tool_result', tool_use_id: 'toolu_b', content: 'failed', is_error: true },
          { type: 'text', text: 'and then?' },
        ],
      },
    ]);
  });
}

t.test(
  'reasoning: thinking budget, max_tokens raised, temperature dropped, blocks returned and sent back',
  async (t) => {
    const fake = await startFakeAnthropic(t, [
      reply.toolCalls([{ id: 'toolu_1', name: 'say', args: {} }], { thinking: 'I should say something' }),
      reply.text('ok'),
    ]);
    const { runtime } = makeRuntime(t);
    const client = createModelClient(makeTarget('anthropic', fake.baseUrl, { apiKey: KEY }), runtime);
    const model = { model_id: 'claude-sonnet-4', max_tokens: 1000, temperature: 0.2, reasoning: { effort: 'low' } };
    const first = await client.complete(makeRequest({ model }));
    t.match(fake.messageRequests()[0]!.body, { thinking: { type: 'enabled', budget_tokens: 2048 }, max_tokens: 3048 });
    t.notOk('temperature' in fake.messageRequests()[0]!.body);
    t.same(first.reasoning, [{ type: 'thinking', thinking: 'I should say something', signature: 'fake-signature' }]);
    t.equal(first.text, '', 'thinking is not text');
    await client.complete(
      makeRequest({
        model,
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: '', toolCalls: first.toolCalls, reasoning: first.reasoning },
          { role: 'tool', toolCallId: 'toolu_1', name: 'say', content: 'said' },
        ],
      }),
    );
    t.same(fake.messageRequests()[1]!.body.messages[1].content, [
      { type: 'thinking', thinking: 'I should say something', signature: 'fake-signature' },
      { type: 'tool_use', id: 'toolu_1', name: 'say', input: {} },
    ]);
  },
);

t.test('stop reasons map; provider params merge into the body', async (t) => {
  const fake = await startFakeAnthropic(t, [
    reply.text('long', { stopReason: 'max_tokens' }),
    reply.text('seq', { stopReason: 'stop_sequence' }),
  ]);
  const { runtime } = makeRuntime(t);
  const client = createModelClient(makeTarget('anthropic', fake.baseUrl, { apiKey: KEY }), runtime);
  const first = await client.complete(
    makeRequest({
      model: { params: [{ key: 'top_k', value: '5' }], provider_params: { metadata: { user_id: 'u1' } } },
    }),
  );
  t.equal(first.stopReason, 'max_tokens');
  t.match(fake.messageRequests()[0]!.body, { top_k: 5, metadata: { user_id: 'u1' } });
  t.equal((await client.complete(makeRequest())).stopReason, 'end');
});

t.test('an error event mid-stream is an upstream_error naming it (not retried)', async (t) => {
  const fake = await startFakeAnthropic(t, [
    {
      type: 'custom',
      handle: (_request, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(
          'event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"c","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}\n\n',
        );
        res.end('event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n');
      },
    },
  ]);
  const { runtime } = makeRuntime(t);
  const client = createModelClient(makeTarget('anthropic', fake.baseUrl, { apiKey: KEY }), runtime);
  await t.rejects(client.complete(makeRequest()), {
    code: 'upstream_error',
    message: /mid-stream: overloaded_error: Overloaded/,
    details: { upstreamStatus: null },
  });
  t.equal(fake.messageRequests().length, 1);
});
