/**
 * GenAI span attributes to the letter, on the built daemon exporting to a local OTLP/HTTP receiver: the provider
 * is the well-known system (`gen_ai.provider.name`), the owner's id is `agt.provider.id`; `invoke_agent` carries
 * provider and request model; `chat` carries the endpoint (`server.address`/`server.port`) and the vendor's
 * `gen_ai.response.id`; every span of a turn names its loop as `gen_ai.conversation.id`; a tool call says
 * `gen_ai.tool.type` and, failed, `error.type`. OTLP headers (a hosted collector's key) come from the daemon's
 * environment: they reach the collector and nothing else (settings, logs). An MCP client's `_meta.traceparent` on
 * `/mcp/server`'s chat makes the agent's turn part of the client's trace. `/metrics` keeps the naming rules
 * `promtool check metrics` checks: a `_total` name is a counter's, and only a counter's. Every attribute name outside
 * `agt.*` is one of the registry of `@opentelemetry/semantic-conventions`.
 */
import t from 'tap';
import { reply, startFakeOpenAI } from './fakes/openai.js';
import { runDaemon, shippedManifest, tempDir } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';
import { startOtlpReceiver } from './helpers/otlp-receiver.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as conventions from '@opentelemetry/semantic-conventions/incubating';
import { genAiProviderName } from '../extensions/telemetry/gen-ai-provider.js';

const HEADER_VALUE = 'hc-key-7f3a9e1c';
const receiver = await startOtlpReceiver(t);
// Each turn: two tool calls (one that exists, one that does not), then the answer.
const fake = await startFakeOpenAI(t, (request) => {
  const messages = request.body.messages as Array<{ role: string }>;
  return messages[messages.length - 1]!.role === 'tool'
    ? reply.text('done')
    : reply.toolCalls([
        { name: 'say', args: { text: 'hello' } },
        { name: 'no_such_tool', args: {} },
      ]);
});
const d = await runDaemon(t, {
  extensions: shippedManifest({ providers: { maxRetries: 0 }, telemetry: { scheduledDelayMillis: 20 } }),
  env: { OTLP_TEST_KEY: HEADER_VALUE, AGT_LOG_LEVEL: 'debug' },
  settings: {
    mcpServer: { agents: ['bob'] },
    providers: [{ id: 'fake', type: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, defaultModel: 'fake-1' }],
    telemetry: {
      otlpEndpoint: receiver.url,
      otlpProtocol: 'http/json',
      otlpHeaders: [
        { name: 'x-honeycomb-team', valueEnv: 'OTLP_TEST_KEY' },
        { name: 'x-unset', valueEnv: 'OTLP_TEST_UNSET' },
      ],
    },
  },
});
/** Setup requests that must succeed (thrown, not asserted: the root test asserts nothing before its subtests). */
async function must(method: string, path: string, body: unknown, status: number) {
  const answer = await d.request(method, path, body);
  if (answer.status !== status) throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
}
await must('POST', '/identity/create', { passphrase: 'genai test passphrase' }, 201);
const bob = (await must('POST', '/agents/create', { name: 'Bob', directory: tempDir(t, 'agt-genai-') }, 201))
  .agentId as string;
await must('PATCH', `/agents/${bob}/config`, { handle: 'bob', model: { provider: 'fake', model_id: 'fake-1' } }, 200);
const log = await eventLog(t, d);

async function turnSpans() {
  const turnId = (await d.request('POST', `/agents/${bob}/chat`, { text: 'hi' })).body.turnId as string;
  const end = await log.waitFor(
    (e) => e.turn_id === turnId && (e.event_type === 'turn.completed' || e.event_type === 'agent.error'),
    'the turn ends',
  );
  t.equal(end.event_type, 'turn.completed');
  const until = Date.now() + 15_000;
  for (;;) {
    const root = receiver.spans.find((s) => s.attributes['agt.turn.id'] === turnId);
    const spans = root ? receiver.spans.filter((s) => s.traceId === root.traceId) : [];
    // invoke_agent, two chats, two tools
    if (spans.length >= 5) return spans;
    if (Date.now() > until) throw new Error(`the turn's spans were not exported (${spans.length})`);
    await new Promise((done) => setTimeout(done, 20));
  }
}

t.test('GenAI attributes of a turn with a good and a failed tool call', async (t) => {
  const spans = await turnSpans();
  const root = spans.find((s) => s.name === 'invoke_agent Bob')!;
  const conversation = root.attributes['gen_ai.conversation.id'] as string;
  t.equal(conversation, `${bob}/main`, 'the conversation is the agent loop');
  t.match(root.attributes, {
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.provider.name': 'openai',
    'agt.provider.id': 'fake',
    'gen_ai.request.model': 'fake-1',
  });
  const port = Number(new URL(fake.baseUrl).port);
  const chats = spans.filter((s) => s.name === 'chat fake-1');
  t.equal(chats.length, 2);
  for (const chat of chats) {
    t.match(chat.attributes, {
      'gen_ai.provider.name': 'openai',
      'agt.provider.id': 'fake',
      'server.address': '127.0.0.1',
      'server.port': port,
      'gen_ai.conversation.id': conversation,
    });
    t.match(chat.attributes['gen_ai.response.id'], /^chatcmpl-fake-\d+$/, "the vendor's completion id");
  }
  const say = spans.find((s) => s.name === 'execute_tool say')!;
  t.match(say.attributes, { 'gen_ai.tool.type': 'function', 'gen_ai.conversation.id': conversation });
  t.notOk('error.type' in say.attributes, 'a good call has no error.type');
  t.equal(say.status, 0);
  const failed = spans.find((s) => s.name === 'execute_tool no_such_tool')!;
  t.match(failed.attributes, { 'gen_ai.tool.type': 'function', 'error.type': 'unknown_tool' });
  t.equal(failed.status, 2, 'status error');
});

t.test('OTLP headers: the value from the environment reaches the collector, nothing else', async (t) => {
  t.ok(receiver.headers.length > 0);
  for (const headers of receiver.headers) {
    t.equal(headers['x-honeycomb-team'], HEADER_VALUE);
    t.notOk('x-unset' in headers, 'a header whose variable is unset is not sent');
  }
  const settings = await d.request('GET', '/settings');
  t.same(settings.body.telemetry.otlpHeaders[0], { name: 'x-honeycomb-team', valueEnv: 'OTLP_TEST_KEY' });
  t.notOk(JSON.stringify(settings.body).includes(HEADER_VALUE), 'not in the settings');
  t.match(d.stdout() + d.stderr(), /OTLP_TEST_UNSET/, 'the unset variable is named in the log');
  t.notOk((d.stdout() + d.stderr()).includes(HEADER_VALUE), 'the value is in no log line');
  const secretInSettings = await d.request('PATCH', '/settings', {
    telemetry: { otlpEndpoint: receiver.url, otlpHeaders: [{ name: 'Host', valueEnv: 'OTLP_TEST_KEY' }] },
  });
  t.equal(secretInSettings.status, 400, 'headers the exporter owns are refused');
  const daemonVariable = await d.request('PATCH', '/settings', {
    telemetry: { otlpEndpoint: receiver.url, otlpHeaders: [{ name: 'x-key', valueEnv: 'AGT_DAEMON_TOKEN' }] },
  });
  t.equal(daemonVariable.status, 400, "the daemon's own variables are refused");
});

t.test('gen_ai.provider.name by kind and endpoint', async (t) => {
  const cases: Array<[string, string, string]> = [
    ['anthropic', 'https://api.anthropic.com', 'anthropic'],
    ['openai', 'https://api.openai.com/v1', 'openai'],
    ['openai-compatible', 'https://api.groq.com/openai/v1', 'groq'],
    ['openai-compatible', 'https://api.deepseek.com/v1', 'deepseek'],
    ['openai-compatible', 'https://api.mistral.ai/v1', 'mistral_ai'],
    ['openai-compatible', 'https://api.x.ai/v1', 'x_ai'],
    ['openai', 'https://myres.openai.azure.com/openai', 'azure.ai.openai'],
    ['openai-compatible', 'https://generativelanguage.googleapis.com/v1beta/openai', 'gcp.gemini'],
    ['openai-compatible', 'http://127.0.0.1:11434/v1', 'ollama'],
    ['openai-compatible', 'http://127.0.0.1:1234/v1', 'openai'],
    ['openrouter', 'https://openrouter.ai/api/v1', 'openrouter'],
  ];
  for (const [type, baseUrl, name] of cases) t.equal(genAiProviderName(type, baseUrl), name, `${type} ${baseUrl}`);
});

t.test('/metrics: _total names are counters, and counters end in _total (promtool check metrics)', async (t) => {
  const text = (await d.request('GET', '/metrics')).body as string;
  const types = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map(([, name, type]) => ({ name: name!, type: type! }));
  t.ok(types.length > 20, 'the metrics are there');
  t.ok(
    types.some((m) => m.name === 'nodejs_active_handles'),
    "Node's active handles by type stay",
  );
  t.same(
    types.filter((m) => m.name.endsWith('_total') && m.type !== 'counter'),
    [],
    'no gauge named like a counter',
  );
  t.same(
    types.filter((m) => m.type === 'counter' && !m.name.endsWith('_total')),
    [],
    'every counter ends in _total',
  );
});

t.test("an MCP client's traceparent (_meta) continues into the agent's turn", async (t) => {
  const client = new Client({ name: 'trace-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${d.url}/mcp/server`), {
      requestInit: { headers: { authorization: `Bearer ${d.token}` } },
    }),
  );
  t.teardown(() => client.close());
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const callerSpan = '00f067aa0ba902b7';
  const result = (await client.callTool({
    name: 'chat',
    arguments: { agent: 'bob', text: 'traced hello' },
    _meta: { traceparent: `00-${traceId}-${callerSpan}-01` },
  })) as any;
  t.notOk(result.isError, 'the chat ran');
  const until = Date.now() + 15_000;
  let root: any;
  while (!(root = receiver.spans.find((s) => s.name === 'invoke_agent Bob' && s.traceId === traceId))) {
    if (Date.now() > until) throw new Error("the turn's span did not arrive in the caller's trace");
    await new Promise((done) => setTimeout(done, 20));
  }
  const received = receiver.spans.find((s) => s.spanId === root.parentSpanId)!;
  t.match(received, { name: 'receive_message mcp', parentSpanId: callerSpan, traceId }, "under the caller's span");
});

t.test("every span attribute outside agt's own namespace is a name of the conventions' registry", async (t) => {
  const registry = new Set(
    Object.entries(conventions)
      .filter(([name]) => name.startsWith('ATTR_'))
      .map(([, value]) => value as string),
  );
  const used = new Set(receiver.spans.flatMap((span) => Object.keys(span.attributes)));
  for (const name of ['gen_ai.provider.name', 'gen_ai.conversation.id', 'server.port', 'messaging.system'])
    t.ok(used.has(name), `the spans so far use ${name}`);
  t.same(
    [...used].filter((name) => !name.startsWith('agt.') && !registry.has(name)),
    [],
    'no name the semantic conventions do not define',
  );
  t.notOk(used.has('gen_ai.system'), 'nor the deprecated gen_ai.system');
});
