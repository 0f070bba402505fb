/**
 * The reference server from npm (`@modelcontextprotocol/server-everything`, stdio) against agt's handling of what
 * servers send on their own (docs/mcp.md "Subscriptions, progress, logging and roots"), black box: its subscribe
 * handler logs at `info` (the registration's `logLevel`), its simulated updates of a subscribed resource start an
 * `on_mcp_resource` turn, its long-running operation's progress streams as `tool.progress`, and it lists the
 * agent's work folder as the root agt offers. The same behaviours on an in-repo server: test/mcp-notifications.test.ts.
 */
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { runDaemon, tempDir } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';
import { EVERYTHING } from './helpers/mcp.js';
import { startToolDriver } from './helpers/tool-driver.js';

const DOC = 'demo://resource/static/document/features.md';
const driver = await startToolDriver(t);
const d = await runDaemon(t, {
  settings: {
    providers: [driver.provider],
    mcpServers: [
      {
        name: 'everything',
        type: 'command',
        command: process.execPath,
        args: [EVERYTHING, 'stdio'],
        logLevel: 'info',
        exposeWorkFolder: true,
      },
    ],
  },
});
const events = await eventLog(t, d);
const filePath = await createAgentFile(tempDir(t, 'agt-mcp-everything-'), {
  model: driver.model,
  mcp: { servers: [{ name: 'everything', transport: 'stdio', subscribe: [DOC] }] },
  triggers: { on_mcp_resource: { enabled: true, targets: [{ scope: 'agent' }] } },
});
const loaded = await d.request('POST', '/agents/load', { filePath });
if (loaded.status !== 200) throw new Error(`the agent did not load: ${JSON.stringify(loaded.body)}`);
const agentId: string = loaded.body.id;

async function until<T>(what: string, probe: () => Promise<T | undefined | false>): Promise<T> {
  const end = Date.now() + 20_000;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`failsafe: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
const logMessages = async () =>
  ((await d.request('GET', `/agents/${agentId}/logs?limit=200`)).body.logs as Array<{ message: string }>).map(
    (row) => row.message,
  );

t.test("the subscription is made; the server's info log reaches the agent's log", async (t) => {
  const line = await until('the log row', async () =>
    (await logMessages()).find((m) => m.includes('Received Subscribe Resource request')),
  );
  t.match(line, 'MCP server everything [info] ');
  t.match(line, DOC);
});

t.test('its simulated update of the subscribed resource starts an on_mcp_resource turn', async (t) => {
  const from = events.events.length;
  await driver.run(d, agentId, 'mcp_everything_toggle-subscriber-updates', {});
  const started = await events.waitFor(
    (e) => e.event_type === 'turn.started' && (e.payload as { trigger: string }).trigger === 'on_mcp_resource',
    'the on_mcp_resource turn',
    { from },
  );
  await events.waitFor((e) => e.event_type === 'turn.completed' && e.turn_id === started.turn_id, 'its end', {
    from,
  });
  const input = driver.fake
    .chatRequests()
    .flatMap((r) => r.body.messages as Array<{ content: unknown }>)
    .map((m) => String(m.content))
    .find((text) => text.startsWith('[trigger on_mcp_resource]'));
  t.match(input, `"uri":"${DOC}"`);
  // Stop the server's updates (every 5 s) before the next test.
  await driver.run(d, agentId, 'mcp_everything_toggle-subscriber-updates', {});
});

t.test('its long-running operation streams progress', async (t) => {
  const from = events.events.length;
  t.match(
    await driver.run(d, agentId, 'mcp_everything_trigger-long-running-operation', { duration: 0.6, steps: 3 }),
    /completed/,
  );
  await events.waitFor((e) => e.event_type === 'tool.completed', 'the call ended', { from });
  const progress = events.events
    .slice(from)
    .filter((e) => e.event_type === 'tool.progress')
    .map((e) => e.payload as { progress: number; total?: number });
  t.ok(progress.length >= 1, `${progress.length} progress events`);
  t.match(progress[0], { tool: 'mcp_everything_trigger-long-running-operation', progress: 1, total: 3 });
});

t.test("it lists the agent's work folder as its one root", async (t) => {
  const tools = async () =>
    ((await d.request('GET', `/agents/${agentId}/tools`)).body.tools as Array<{ name: string }>).map((x) => x.name);
  // The server adds this tool once it knows the client has roots (a tools/list_changed).
  await until('get-roots-list offered', async () => (await tools()).includes('mcp_everything_get-roots-list'));
  const listed = await driver.run(d, agentId, 'mcp_everything_get-roots-list', {});
  t.match(listed, `file://${d.dataDir}/sandbox/work/agent-${agentId}`);
});
