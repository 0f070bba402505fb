/**
 * An MCP server's sampling request runs on the calling agent's own provider and model (docs/mcp.md
 * "Sampling"), black box: the built daemon runs a real SDK stdio server (test/fixtures/mcp/sdk-server.mjs)
 * whose `summarize` tool asks the client's model. By the registration's `sampling` policy: `ask` (the
 * default) makes an approval task showing the server's prompt, approved or denied by the owner; `allow`
 * runs it at once; `deny` refuses it. The call goes through the agent's spend governor (its ledger). Tools in
 * sampling (test/fixtures/mcp/sampling-tools-server.mjs offers its own `get_weather`) run under `allow` only:
 * the model's call comes back to the server as `tool_use`, the server's result goes to the model in the
 * follow-up; under `ask` such a request is refused without asking.
 */
import { join } from 'node:path';
import t from 'tap';
import { ROOT, runDaemon, tempDir } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';
import { loadWithServers } from './helpers/mcp.js';
import { startToolDriver } from './helpers/tool-driver.js';
import { reply } from './fakes/openai.js';

/**
 * The agent's model: drives the tool calls, and answers a sampling request with a summary of its prompt; one
 * that offers tools gets a call of `get_weather` for the city named, then (given its result) a plan.
 */
const driver = await startToolDriver(t, (request) => {
  const messages = request.body.messages as Array<{ role: string; content: unknown }>;
  const tools = request.body.tools as Array<{ function: { name: string } }> | undefined;
  if (tools?.some((tool) => tool.function.name === 'get_weather')) {
    const final = messages.at(-1)!;
    if (final.role === 'tool') return reply.text(`Pack sunglasses: ${String(final.content)}`);
    const city = /Plan a trip to (\w+)/.exec(String(final.content))?.[1] ?? '?';
    return reply.toolCalls([{ id: 'weather-1', name: 'get_weather', args: { city } }]);
  }
  const last = String(messages.at(-1)?.content ?? '');
  const system = messages.find((m) => m.role === 'system')?.content;
  return reply.text(`summary of "${last}" under "${String(system)}"`);
});
const server = (name: string, sampling?: string) => ({
  name,
  type: 'command',
  command: process.execPath,
  args: [join(ROOT, 'test/fixtures/mcp/sdk-server.mjs')],
  ...(sampling ? { sampling } : {}),
});
const planner = (name: string, sampling?: string) => ({
  ...server(name, sampling),
  args: [join(ROOT, 'test/fixtures/mcp/sampling-tools-server.mjs')],
});
const d = await runDaemon(t, {
  settings: {
    providers: [driver.provider],
    mcpServers: [
      server('careful'),
      server('trusted', 'allow'),
      server('closed', 'deny'),
      planner('planner', 'allow'),
      planner('asking'),
    ],
  },
});
const log = await eventLog(t, d);
const agentId = await loadWithServers(d, tempDir(t, 'agt-mcp-sampling-'), driver.model, [
  'careful',
  'trusted',
  'closed',
  'planner',
  'asking',
]);

async function nextApproval(from: number) {
  const event = await log.waitFor(
    (e) => e.event_type === 'hil.requested' && (e.payload as { kind: string }).kind === 'approval',
    'an approval',
    { from },
  );
  return event.payload as { taskId: string; tool: string; args: Record<string, unknown> };
}

t.test('ask (the default): an approval task shows the prompt; approved, the agent’s model answers', async (t) => {
  const from = log.events.length;
  const result = driver.run(d, agentId, 'mcp_careful_summarize', { text: 'the quarterly report' });
  const approval = await nextApproval(from);
  t.equal(approval.tool, 'mcp_careful sampling');
  t.match(approval.args, {
    server: 'careful',
    duringTool: 'summarize',
    systemPrompt: 'You summarize.',
    messages: [{ role: 'user', content: 'Summarize: the quarterly report' }],
    maxTokens: 100,
  });
  const resolved = await d.request('POST', `/agents/${agentId}/tasks/${approval.taskId}/resolve`, {
    action: 'approve',
  });
  t.equal(resolved.status, 200);
  const answer = JSON.parse(await result);
  t.match(answer, {
    role: 'assistant',
    model: 'driver-1',
    content: { type: 'text', text: 'summary of "Summarize: the quarterly report" under "You summarize."' },
  });
  const task = (await d.request('GET', `/agents/${agentId}/tasks/${approval.taskId}`)).body;
  t.equal(task.task?.status ?? task.status, 'completed', 'the task records the call');
});

t.test('ask: denied, the server gets a refusal', async (t) => {
  const from = log.events.length;
  const result = driver.run(d, agentId, 'mcp_careful_summarize', { text: 'secrets' });
  const approval = await nextApproval(from);
  await d.request('POST', `/agents/${agentId}/tasks/${approval.taskId}/resolve`, { action: 'deny', reason: 'no' });
  t.match(JSON.parse(await result), { error: /agt refused the sampling request: the owner denied it: no/ });
});

t.test('allow runs at once; deny refuses without asking', async (t) => {
  const from = log.events.length;
  t.match(JSON.parse(await driver.run(d, agentId, 'mcp_trusted_summarize', { text: 'notes' })), {
    content: { text: /summary of "Summarize: notes"/ },
  });
  t.match(JSON.parse(await driver.run(d, agentId, 'mcp_closed_summarize', { text: 'notes' })), {
    error: /the owner's registration denies sampling/,
  });
  t.notOk(
    log.events.slice(from).some((e) => e.event_type === 'hil.requested'),
    'no approval was asked for either',
  );
});

t.test('the sampling calls are in the agent’s ledger', async (t) => {
  const usage = (await d.request('GET', `/agents/${agentId}/usage`)).body;
  // Every model call of the turns wrote a loop row; the two sampling calls that ran did not, but the
  // spend governor counted them in the ledger like the turns' own.
  t.equal(usage.spend.calls - usage.usageRows, 2, 'the two sampling calls that ran');
});

t.test('allow with tools: the model’s tool call goes back to the server, its result to the model', async (t) => {
  const usage = async () => (await d.request('GET', `/agents/${agentId}/usage`)).body;
  const before = await usage();
  const from = driver.fake.chatRequests().length;
  const answer = JSON.parse(await driver.run(d, agentId, 'mcp_planner_plan_trip', { city: 'Lisbon' }));
  t.match(answer.rounds, [
    {
      role: 'assistant',
      model: 'driver-1',
      stopReason: 'toolUse',
      content: [{ type: 'tool_use', id: 'weather-1', name: 'get_weather', input: { city: 'Lisbon' } }],
    },
    {
      stopReason: 'endTurn',
      content: [{ type: 'text', text: 'Pack sunglasses: sunny, 21 degrees in Lisbon' }],
    },
  ]);
  t.equal(answer.rounds.length, 2, 'the server ran the call itself and asked once more');
  const sampled = driver.fake
    .chatRequests()
    .slice(from)
    .filter(
      (r) => (r.body.tools as Array<{ function: { name: string } }> | undefined)?.[0]?.function.name === 'get_weather',
    );
  t.equal(sampled.length, 2, 'both rounds reached the agent’s model');
  t.same(
    (sampled[0]!.body.tools as Array<{ function: unknown }>).map((tool) => tool.function),
    [
      {
        name: 'get_weather',
        description: 'The weather in a city',
        parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      },
    ],
    'only the server’s tool is offered, with its schema',
  );
  t.match(
    (sampled[1]!.body.messages as unknown[]).slice(-2),
    [
      { role: 'assistant', tool_calls: [{ id: 'weather-1', function: { name: 'get_weather' } }] },
      { role: 'tool', tool_call_id: 'weather-1', content: 'sunny, 21 degrees in Lisbon' },
    ],
    'the follow-up carries the call and the server’s result',
  );
  const after = await usage();
  t.equal(after.spend.calls - after.usageRows - (before.spend.calls - before.usageRows), 2, 'both in the ledger');
  const tools = (await d.request('GET', `/agents/${agentId}/tools`)).body.tools as Array<{ name: string }>;
  t.notOk(
    tools.some((tool) => tool.name.endsWith('get_weather')),
    'the server’s sampling tool is not one of the agent’s',
  );
});

t.test('toolChoice none: the model is offered no tools and answers in text', async (t) => {
  const answer = JSON.parse(await driver.run(d, agentId, 'mcp_planner_plan_trip', { city: 'Porto', choice: 'none' }));
  t.match(answer.rounds, [
    { stopReason: 'endTurn', content: [{ type: 'text', text: /summary of "Plan a trip to Porto"/ }] },
  ]);
});

t.test('ask with tools: refused without asking the owner', async (t) => {
  const from = log.events.length;
  t.match(JSON.parse(await driver.run(d, agentId, 'mcp_asking_plan_trip', { city: 'Faro' })), {
    error:
      /agt refused the sampling request: tools in sampling need the registration's sampling policy allow \(it is ask\)/,
  });
  t.notOk(
    log.events.slice(from).some((e) => e.event_type === 'hil.requested'),
    'no approval was asked',
  );
});
