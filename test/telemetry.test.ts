/**
 * The telemetry extension, on the built daemon (the shipped extensions): one daemon exporting to a local OTLP/HTTP
 * receiver. A turn with a tool call gives the GenAI span tree and attributes (contents only with
 * captureContent); `http/protobuf` arrives too; `/metrics` is Prometheus text whose counters move with a
 * turn (and which `promtool check metrics` accepts), and its gauges (queued turns, SSE clients, extension states)
 * read the kernel at each scrape; a
 * collector that is down or stuck changes nothing for turns and the export queue stays bounded; a
 * mesh message (and an A2A call) from a second daemon joins the receiving agent's turn to the sender's trace.
 */
import t from 'tap';
import { endsTurn } from './fixtures/runtime/harness.js';
import { reply, startFakeOpenAI } from './fakes/openai.js';
import { shippedManifest } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';
import { bootMeshDaemon, createMeshAgent, eventually, postJson, signedEnvelope, testKey } from './helpers/mesh.js';
import { startOtlpReceiver } from './helpers/otlp-receiver.js';
import { findPromtool, lintMetrics } from './helpers/promtool.js';
import { openSse } from './helpers/sse-client.js';
import { startToolDriver } from './helpers/tool-driver.js';

const MAX_QUEUE = 16;
const MESH = { retryBaseMs: 100, retryMaxMs: 400, maxAttempts: 20, mdns: { enabled: false } };
/** The shipped extensions, telemetry named `serviceName` with a small export queue. */
const manifest = (serviceName: string) =>
  shippedManifest({
    providers: { maxRetries: 0 },
    mesh: MESH,
    telemetry: { serviceName, maxQueueSize: MAX_QUEUE, scheduledDelayMillis: 20 },
  });
// The senders' model: calls msg_send as a test asks.
const driver = await startToolDriver(t);

const receiver = await startOtlpReceiver(t);
// Every turn: one tool call (`say`), then the answer.
const fake = await startFakeOpenAI(t, (request) => {
  const messages = request.body.messages as Array<{ role: string }>;
  const usage = { input: 120, output: 30 };
  return messages[messages.length - 1]!.role === 'tool'
    ? reply.text('done', { usage })
    : reply.toolCalls([{ name: 'say', args: { text: 'secret words' } }], { usage });
});
const d = await bootMeshDaemon(t, {
  extensions: manifest('receiver'),
  settings: {
    providers: [{ id: 'fake', type: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, defaultModel: 'fake-1' }],
    pricing: { 'fake/fake-1': { input: 1, output: 2 } },
    telemetry: { otlpEndpoint: receiver.url, otlpProtocol: 'http/json' },
  },
});
const { events } = await eventLog(t, d);
const bob = await createMeshAgent(d, 'Bob', {
  handle: 'bob',
  model: { provider: 'fake', model_id: 'fake-1' },
  triggers: { on_inbox: { enabled: true, targets: [{ scope: 'agent' }] } },
});

async function turn(text = 'hi'): Promise<string> {
  const turnId = (await d.request('POST', `/agents/${bob.id}/chat`, { text })).body.turnId as string;
  const end = await eventually(async () => events.find((e) => endsTurn(e, turnId)), `turn ${turnId} ends`);
  t.equal(end.event_type, 'turn.completed', 'the turn completes');
  return turnId;
}
const spansOf = (turnId: string) => {
  const root = receiver.spans.find((s) => s.attributes['agt.turn.id'] === turnId);
  return root ? receiver.spans.filter((s) => s.traceId === root.traceId) : [];
};
const text = (value: unknown) => JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? String(v) : v));
const metric = (text: string, line: RegExp) =>
  Number(
    text
      .split('\n')
      .find((l) => line.test(l))
      ?.split(' ')
      .pop() ?? NaN,
  );

const scrape = async () => (await d.request('GET', '/metrics')).body as string;
/** Points the exporter elsewhere and waits until the new one is in place (the switch is asynchronous). */
async function exportTo(
  otlpEndpoint: string,
  otlpProtocol: 'http/json' | 'http/protobuf',
  ready: (metrics: string) => boolean,
) {
  t.equal((await d.request('PATCH', '/settings', { telemetry: { otlpEndpoint, otlpProtocol } })).status, 200);
  await eventually(async () => ready(await scrape()), `exporting to ${otlpEndpoint} (${otlpProtocol})`);
}
const exporting = (protocol: string) => (text: string) =>
  metric(text, new RegExp(`^agt_telemetry_traces\\{protocol="${protocol.replace('/', '\\/')}"\\} `)) === 1;

t.test(
  'one turn with a tool call: invoke_agent > chat, execute_tool, chat; GenAI attributes; no contents',
  async (t) => {
    const turnId = await turn();
    const spans = await eventually(async () => spansOf(turnId).length >= 4 && spansOf(turnId), 'the turn exported');
    const root = spans.find((s) => s.name === 'invoke_agent Bob')!;
    t.ok(root, 'invoke_agent <agent name>');
    t.equal(root.parentSpanId, '', 'the turn is the root');
    t.match(root.attributes, {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'Bob',
      'gen_ai.agent.id': bob.id,
      'agt.turn.llm_calls': 2,
      'agt.turn.tool_calls': 1,
    });
    t.equal(root.service, 'receiver');
    const chats = spans.filter((s) => s.name === 'chat fake-1');
    t.equal(chats.length, 2, 'chat <model> per model call');
    for (const chat of chats) {
      t.equal(chat.parentSpanId, root.spanId);
      t.equal(chat.kind, 3, 'CLIENT');
      t.match(chat.attributes, {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'agt.provider.id': 'fake',
        'gen_ai.request.model': 'fake-1',
        'gen_ai.response.model': 'fake-1',
        'gen_ai.usage.input_tokens': 120,
        'gen_ai.usage.output_tokens': 30,
      });
      t.ok((chat.attributes['agt.usage.cost_usd'] as number) > 0, 'the cost the spend governor priced');
      t.ok(chat.start <= chat.end && chat.start >= root.start && chat.end <= root.end, 'inside the turn');
    }
    t.same(chats.map((c) => c.attributes['gen_ai.response.finish_reasons']).sort(), [['stop'], ['tool_calls']].sort());
    const tool = spans.find((s) => s.name === 'execute_tool say')!;
    t.match(tool, {
      parentSpanId: root.spanId,
      attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'say' },
    });
    t.ok(typeof tool.attributes['gen_ai.tool.call.id'] === 'string');
    t.notOk(text(spans).includes('secret words'), 'no tool arguments without captureContent');
    t.notOk(text(spans).includes('"done"'), 'no output without captureContent');

    t.equal(
      (
        await d.request('PATCH', '/settings', {
          telemetry: { otlpEndpoint: receiver.url, otlpProtocol: 'http/json', captureContent: true },
        })
      ).status,
      200,
    );
    const second = await turn();
    const captured = await eventually(
      async () => spansOf(second).length >= 4 && spansOf(second),
      'the second turn exported',
    );
    t.equal(
      JSON.parse(
        captured.find((s) => s.name === 'execute_tool say')!.attributes['gen_ai.tool.call.arguments'] as string,
      ).text,
      'secret words',
    );
    t.match(captured.find((s) => s.name === 'invoke_agent Bob')!.attributes['gen_ai.output.messages'], /done/);
  },
);

t.test('an approval: await_owner approval spans the wait inside the turn', async (t) => {
  t.equal(
    (
      await d.request('PATCH', `/agents/${bob.id}/config`, {
        tools: [{ name: 'say', enabled: true, restricted: true }],
      })
    ).status,
    200,
  );
  const before = events.length;
  const turnId = (await d.request('POST', `/agents/${bob.id}/chat`, { text: 'say it, if allowed' })).body
    .turnId as string;
  const requested = await eventually(
    async () => events.slice(before).find((e) => e.event_type === 'hil.requested'),
    'the approval task',
  );
  const taskId = (requested.payload as { taskId: string }).taskId;
  t.equal((await d.request('POST', `/agents/${bob.id}/tasks/${taskId}/resolve`, { action: 'approve' })).status, 200);
  await eventually(async () => events.find((e) => endsTurn(e, turnId)), 'the turn ends');
  t.equal(
    (
      await d.request('PATCH', `/agents/${bob.id}/config`, {
        tools: [{ name: 'say', enabled: true, restricted: false }],
      })
    ).status,
    200,
    'say runs without approval again',
  );
  const spans = await eventually(
    async () => spansOf(turnId).some((s) => s.name === 'invoke_agent Bob') && spansOf(turnId),
    'the turn exported',
  );
  const root = spans.find((s) => s.name === 'invoke_agent Bob')!;
  const wait = spans.find((s) => s.name === 'await_owner approval');
  t.match(wait, {
    attributes: {
      'agt.hil.kind': 'approval',
      'agt.hil.id': taskId,
      'gen_ai.tool.name': 'say',
      'agt.hil.resolution': 'approved',
    },
  });
  t.ok(
    wait && wait.start >= root.start && wait.end <= root.end && wait.end > wait.start,
    'inside the turn, for the time of the wait',
  );
});

t.test('http/protobuf: the same spans arrive in the protobuf encoding', async (t) => {
  await exportTo(receiver.url, 'http/protobuf', exporting('http/protobuf'));
  const before = receiver.spans.length;
  const turnId = await turn();
  const body = await eventually(
    async () =>
      Buffer.concat(receiver.protobufBodies).includes(Buffer.from(turnId)) && Buffer.concat(receiver.protobufBodies),
    'a protobuf export naming the turn',
  );
  for (const name of ['invoke_agent Bob', 'chat fake-1', 'execute_tool say'])
    t.ok(body.includes(Buffer.from(name)), `${name} in the protobuf body`);
  t.equal(receiver.spans.length, before, 'nothing in JSON any more');
  await exportTo(receiver.url, 'http/json', exporting('http/json'));
});

t.test('GET /metrics: Prometheus text behind the token; counters move with a turn', async (t) => {
  t.equal((await fetch(`${d.url}/metrics`)).status, 401, 'token-protected');
  const first = await d.request('GET', '/metrics');
  t.equal(first.status, 200);
  t.match(first.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
  // Prometheus text: every line a comment (# HELP / # TYPE) or `name{labels} value`.
  const sample =
    /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*",?)*\})? ([-+]?[0-9.]+(e[-+]?[0-9]+)?|[-+]?Inf|NaN)$/i;
  for (const line of (first.body as string).split('\n').filter(Boolean))
    if (!line.startsWith('#')) t.match(line, sample, 'a sample line');
  t.match(first.body, /# TYPE agt_turns_started_total counter/);
  t.match(first.body, /# TYPE nodejs_eventloop_lag_seconds gauge/);
  t.equal(metric(first.body, /^agt_agents_loaded /), 1);
  const started = (text: string) => metric(text, /^agt_turns_started_total\{agent="Bob"\}/) || 0;
  const ended = (text: string) => metric(text, /^agt_turns_ended_total\{agent="Bob",outcome="completed"\}/) || 0;
  const tokens = (text: string) =>
    metric(text, /^agt_model_tokens_total\{agent="Bob",model="fake-1",type="input"\}/) || 0;
  await turn();
  const after = (await d.request('GET', '/metrics')).body as string;
  t.equal(started(after), started(first.body) + 1, 'turns started +1');
  t.equal(ended(after), ended(first.body) + 1, 'turns ended (completed) +1');
  t.equal(tokens(after), tokens(first.body) + 240, 'input tokens of two model calls');
  t.ok(metric(after, /^agt_model_cost_usd_total\{agent="Bob",model="fake-1"\}/) > 0, 'cost');
  t.ok(
    metric(after, /^agt_turn_duration_seconds_count\{agent="Bob",outcome="completed"\}/) >= 1,
    'turn latency histogram',
  );
  t.ok(
    metric(after, /^agt_model_call_duration_seconds_count\{agent="Bob",provider="fake",model="fake-1"\}/) >= 2,
    'model call latency histogram',
  );
  t.equal(
    metric(after, /^agt_tool_calls_total\{agent="Bob",tool="say",ok="true"\}/) -
      (metric(first.body, /^agt_tool_calls_total\{agent="Bob",tool="say",ok="true"\}/) || 0),
    1,
    'one tool call',
  );
});

const noPromtool = findPromtool() ? false : 'promtool is not installed (Debian package prometheus)';
t.test(
  'GET /metrics passes `promtool check metrics` after a turn with a tool call',
  { skip: noPromtool },
  async (t) => {
    await turn();
    const text = await scrape();
    t.match(text, /^agt_tool_calls_total\{/m, 'the scrape has tool calls');
    const linted = await lintMetrics(text);
    t.equal(linted.code, 0, 'promtool accepts it');
    t.equal(linted.output.trim(), '', 'with nothing to say', { output: linted.output });
  },
);

t.test('GET /metrics: the kernel gauges (ctx.gauges): queued turns, SSE clients, every extension state', async (t) => {
  const before = await scrape();
  t.equal(metric(before, /^agt_turns_queued\{agent="Bob"\} /), 0, 'queued turns per agent, from the start');
  for (const name of ['providers', 'mesh', 'telemetry'])
    t.equal(
      metric(before, new RegExp(`^agt_extension_state\\{extension="${name}",state="started"\\} `)),
      1,
      `${name} started`,
    );
  const states = before.split('\n').filter((l) => l.startsWith('agt_extension_state{'));
  for (const entry of manifest('receiver').extensions as Array<{ name: string }>)
    t.equal(states.filter((l) => l.includes(`extension="${entry.name}"`)).length, 1, `one state for ${entry.name}`);
  t.equal(states.length, manifest('receiver').extensions.length, 'one state per extension of the manifest');
  const clients = metric(before, /^agt_sse_clients /);
  t.ok(clients >= 0, 'SSE clients, from the start');
  const stream = await openSse(`${d.url}/events`, { authorization: `Bearer ${d.token}` });
  t.teardown(() => stream.close());
  t.equal(stream.status, 200);
  t.equal(metric(await scrape(), /^agt_sse_clients /), clients + 1, 'a connected GET /events client counts');
  stream.close();
  await eventually(async () => metric(await scrape(), /^agt_sse_clients /) === clients, 'a closed one no longer does');

  // A turn held by an approval; an inbox message queues its turn behind it.
  t.equal(
    (
      await d.request('PATCH', `/agents/${bob.id}/config`, {
        tools: [{ name: 'say', enabled: true, restricted: true }],
      })
    ).status,
    200,
  );
  const mark = events.length;
  const held = (await d.request('POST', `/agents/${bob.id}/chat`, { text: 'say it, if allowed' })).body
    .turnId as string;
  const requested = await eventually(
    async () => events.slice(mark).find((e) => e.event_type === 'hil.requested'),
    'the approval task',
  );
  t.equal(
    (await postJson(`${d.meshUrl}/agents/bob/inbox`, signedEnvelope(testKey(), bob.did, 'wait your turn'))).status,
    202,
  );
  await eventually(
    async () => metric(await scrape(), /^agt_turns_queued\{agent="Bob"\} /) === 1,
    'the queued turn counts',
  );
  t.equal(
    (
      await d.request('PATCH', `/agents/${bob.id}/config`, {
        tools: [{ name: 'say', enabled: true, restricted: false }],
      })
    ).status,
    200,
    'the queued turn needs no approval',
  );
  t.equal(
    (
      await d.request('POST', `/agents/${bob.id}/tasks/${(requested.payload as { taskId: string }).taskId}/resolve`, {
        action: 'approve',
      })
    ).status,
    200,
  );
  await eventually(async () => events.find((e) => endsTurn(e, held)), 'the held turn ends');
  const queued = await eventually(
    async () => events.slice(mark).find((e) => e.event_type === 'turn.started' && e.turn_id !== held),
    'the queued turn starts',
  );
  await eventually(async () => events.find((e) => endsTurn(e, queued.turn_id!)), 'the queued turn ends');
  t.equal(metric(await scrape(), /^agt_turns_queued\{agent="Bob"\} /), 0, 'and no longer counts once it ran');
});

t.test('a mesh message from another daemon: the receiving turn joins the sender trace', async (t) => {
  const sender = await bootMeshDaemon(t, {
    extensions: manifest('sender'),
    settings: {
      providers: [driver.provider],
      telemetry: { otlpEndpoint: receiver.url, otlpProtocol: 'http/json' },
      meshPeers: [d.meshUrl],
    },
  });
  const alice = await createMeshAgent(sender, 'Alice', {
    handle: 'alice',
    model: driver.model,
    tools: [{ name: 'msg_send', enabled: true }],
  });
  const before = events.length;
  await driver.run(sender, alice.id, 'msg_send', { text: 'ping', channel: 'mesh', recipient: bob.did });
  const started = await eventually(
    async () => events.slice(before).find((e) => e.event_type === 'turn.started' && e.agent_id === bob.id),
    "Bob's on_inbox turn",
  );
  await eventually(async () => events.find((e) => endsTurn(e, started.turn_id!)), "Bob's turn ends");
  const sent = await eventually(
    async () => receiver.spans.find((s) => s.service === 'sender' && s.name === 'send_message mesh'),
    'the send span',
  );
  const received = await eventually(
    async () => receiver.spans.find((s) => s.service === 'receiver' && s.name === 'receive_message mesh'),
    'the receive span',
  );
  const bobTurn = await eventually(
    async () => receiver.spans.find((s) => s.attributes['agt.turn.id'] === started.turn_id),
    "Bob's turn span",
  );
  t.equal(received.traceId, sent.traceId, 'the receiver joins the trace');
  t.equal(received.parentSpanId, sent.spanId, 'under the send span');
  t.equal(bobTurn.traceId, sent.traceId, "Bob's turn is in the sender's trace");
  t.equal(bobTurn.parentSpanId, received.spanId);
  t.equal(sent.kind, 4, 'PRODUCER');
  t.equal(received.kind, 5, 'CONSUMER');
});

t.test('an A2A call from another daemon: the traceparent in the message metadata joins the sender trace', async (t) => {
  const sender = await bootMeshDaemon(t, {
    extensions: manifest('a2a-sender'),
    settings: {
      providers: [driver.provider],
      telemetry: { otlpEndpoint: receiver.url, otlpProtocol: 'http/json' },
      agentCeiling: { fetchAllowHosts: ['127.0.0.1'] },
    },
  });
  const carol = await createMeshAgent(sender, 'Carol', {
    handle: 'carol',
    model: driver.model,
    tools: [{ name: 'msg_send', enabled: true }],
    security: { fetch_allow_hosts: ['127.0.0.1'] },
  });
  const before = events.length;
  await driver.run(sender, carol.id, 'msg_send', {
    text: 'ping over A2A',
    channel: 'a2a',
    recipient: `${d.meshUrl}/agents/bob/.well-known/agent-card.json`,
  });
  const started = await eventually(
    async () => events.slice(before).find((e) => e.event_type === 'turn.started' && e.agent_id === bob.id),
    "Bob's A2A turn",
  );
  await eventually(async () => events.find((e) => endsTurn(e, started.turn_id!)), "Bob's A2A turn ends");
  const sent = await eventually(
    async () => receiver.spans.find((s) => s.service === 'a2a-sender' && s.name === 'send_message a2a'),
    'the send span',
  );
  const received = await eventually(
    async () => receiver.spans.find((s) => s.service === 'receiver' && s.name === 'receive_message a2a'),
    'the receive span',
  );
  const bobTurn = await eventually(
    async () => receiver.spans.find((s) => s.attributes['agt.turn.id'] === started.turn_id),
    "Bob's turn span",
  );
  t.equal(received.traceId, sent.traceId, 'the receiver joins the trace');
  t.equal(received.parentSpanId, sent.spanId, 'under the send span');
  t.equal(bobTurn.traceId, sent.traceId, "Bob's turn is in the sender's trace");
  t.equal(bobTurn.parentSpanId, received.spanId, 'exactly the turn the message was queued as');
});

t.test('the kernel hands on only a well-formed traceparent of an inbound message', async (t) => {
  const traceId = '0af7651916cd43dd8448eb211c80319c';
  const inboxUrl = `${d.meshUrl}/agents/bob/inbox`;
  const send = (text: string, traceparent: string) =>
    postJson(inboxUrl, signedEnvelope(testKey(), bob.did, text, undefined, undefined, undefined, { traceparent }));
  t.equal((await send('bad context', `00-${'0'.repeat(32)}-b7ad6b7169203331-01`)).status, 202);
  t.equal((await send('good context', `00-${traceId}-b7ad6b7169203331-01`)).status, 202);
  await eventually(
    async () => receiver.spans.some((s) => s.traceId === traceId && s.name === 'invoke_agent Bob'),
    "Bob's turn in the caller's trace",
  );
  const rows = (await d.request('GET', `/agents/${bob.id}/inbox`)).body.messages as Array<{ id: number; text: string }>;
  const good = rows.find((row) => row.text === 'good context')!;
  const bad = rows.find((row) => row.text === 'bad context')!;
  const received = receiver.spans.filter(
    (s) =>
      s.name === 'receive_message mesh' &&
      [String(good.id), String(bad.id)].includes(String(s.attributes['messaging.message.id'])),
  );
  t.same(
    received.filter((s) => s.traceId === traceId).map((s) => [s.parentSpanId, s.attributes['messaging.message.id']]),
    [['b7ad6b7169203331', String(good.id)]],
    "the well-formed one joins the caller's trace",
  );
  t.notOk(
    receiver.spans.some((s) => /^0+$/.test(s.traceId)),
    'an all-zero trace id is dropped',
  );
  t.notOk(
    received.some((s) => s.parentSpanId === 'b7ad6b7169203331' && s.traceId !== traceId),
    'and never used as a parent',
  );
});

t.test('a collector that is down or stuck: turns go on, the export queue stays bounded', async (t) => {
  const queue = async (state: string) =>
    metric((await d.request('GET', '/metrics')).body, new RegExp(`^agt_telemetry_spans\\{state="${state}"\\}`));
  // A closed port: exports fail at once.
  await exportTo(
    'http://127.0.0.1:1/v1/traces',
    'http/json',
    (m) => exporting('http/json')(m) && metric(m, /^agt_telemetry_spans\{state="exported"\}/) === 0,
  );
  await turn();
  // The exporter retries a failed export for several seconds before it counts it failed, and each scrape costs
  // the daemon several ms of CPU: polled every 250 ms, not every 25.
  await eventually(async () => (await queue('failed')) > 0, 'a failed export counted', 15_000, 250);
  // A collector that takes requests and never answers: the queue fills up to its bound, the rest is dropped.
  receiver.hang(true);
  await exportTo(
    `${receiver.url}?stuck`,
    'http/json',
    (m) => metric(m, /^agt_telemetry_spans\{state="failed"\}/) === 0,
  );
  for (let i = 0; i < 10; i++) await turn(`busy ${i}`);
  t.ok((await queue('queued')) <= MAX_QUEUE, 'queued spans never pass maxQueueSize');
  t.ok((await queue('dropped')) > 0, 'spans beyond it are dropped (and counted)');
  receiver.hang(false);
});
