/**
 * An MCP server's sampling request runs on the calling agent's own provider and model (docs/mcp.md
 * "Sampling"), black box: the built daemon runs a real SDK stdio server (test/fixtures/mcp/sdk-server.mjs)
 * whose `summarize` tool asks the client's model. By the registration's `sampling` policy: `ask` (the
 * default) makes an approval task showing the server's prompt, approved or denied by the owner; `allow`
 * runs it at once; `deny` refuses it. The call goes through the agent's spend governor (its ledger).
 */
import { join } from 'node:path';
import t from 'tap';
import { ROOT, runDaemon, tempDir } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';
import { loadWithServers } from './helpers/mcp.js';
import { startToolDriver } from './helpers/tool-driver.js';
import { reply } from './fakes/openai.js';

/** The agent's model: drives the tool calls, and answers a sampling request with a summary of its prompt. */
const driver = await startToolDriver(t, (request) => {
  const messages = request.body.messages as Array<{ role: string; content: unknown }>;
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
const d = await runDaemon(t, {
  settings: {
    providers: [driver.provider],
    mcpServers: [server('careful'), server('trusted', 'allow'), server('closed', 'deny')],
  },
});
const log = await eventLog(t, d);
const agentId = await loadWithServers(d, tempDir(t, 'agt-mcp-sampling-'), driver.model, [
  'careful',
  'trusted',
  'closed',
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
