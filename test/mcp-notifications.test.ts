/**
 * What MCP servers send on their own, black box (docs/mcp.md "Subscriptions, logging and roots"): the built
 * daemon runs a real stdio server on the SDK (test/fixtures/mcp/notify-server.mjs) for an agent that subscribes
 * to one of its resources. An update of that resource starts an `on_mcp_resource` turn naming it, an update of
 * another does not; a call's progress notifications stream as `tool.progress`; the server's log messages reach
 * the agent's log from the registration's `logLevel` up (sent to the server as `logging/setLevel`); the agent's
 * work folder is the one root of the server whose registration exposes it, and no other server gets roots.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { ROOT, runDaemon, tempDir } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';
import { startToolDriver } from './helpers/tool-driver.js';

const SERVER = join(ROOT, 'test/fixtures/mcp/notify-server.mjs');
const driver = await startToolDriver(t);
const d = await runDaemon(t, {
  settings: {
    providers: [driver.provider],
    mcpServers: [
      {
        name: 'watch',
        type: 'command',
        command: process.execPath,
        args: [SERVER],
        logLevel: 'info',
        exposeWorkFolder: true,
      },
      { name: 'plain', type: 'command', command: process.execPath, args: [SERVER] },
    ],
  },
});
const events = await eventLog(t, d);
const filePath = await createAgentFile(tempDir(t, 'agt-mcp-notify-'), {
  model: driver.model,
  mcp: {
    servers: [
      { name: 'watch', transport: 'stdio', subscribe: ['fixture://watched'] },
      { name: 'plain', transport: 'stdio' },
    ],
  },
  triggers: { on_mcp_resource: { enabled: true, targets: [{ scope: 'agent' }] } },
});
const loaded = await d.request('POST', '/agents/load', { filePath });
if (loaded.status !== 200) throw new Error(`the agent did not load: ${JSON.stringify(loaded.body)}`);
const agentId: string = loaded.body.id;

async function serverLogs(name: string): Promise<string[]> {
  const servers = (await d.request('GET', `/agents/${agentId}/mcp`)).body.servers as Array<{
    name: string;
    logs: string[];
  }>;
  return servers.find((s) => s.name === name)?.logs ?? [];
}

async function until<T>(what: string, probe: () => Promise<T | undefined | false>): Promise<T> {
  const end = Date.now() + 20_000;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`failsafe: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

await until('subscribed once connected', async () =>
  (await serverLogs('watch')).some((line) => line.includes('subscribed to fixture://watched')),
);

t.test('an update of a subscribed resource starts an on_mcp_resource turn naming it', async (t) => {
  const from = events.events.length;
  const touched = JSON.parse(await driver.run(d, agentId, 'mcp_watch_touch', { uri: 'fixture://other' }));
  t.same(touched.subscribed, ['fixture://watched'], 'only what the declaration lists is subscribed');
  await driver.run(d, agentId, 'mcp_watch_touch', { uri: 'fixture://watched' });
  const started = await events.waitFor(
    (e) => e.event_type === 'turn.started' && (e.payload as { trigger: string }).trigger === 'on_mcp_resource',
    'the on_mcp_resource turn',
    { from },
  );
  await events.waitFor((e) => e.event_type === 'turn.completed' && e.turn_id === started.turn_id, 'its end', { from });
  const triggered = events.events
    .slice(from)
    .filter((e) => e.event_type === 'turn.started' && (e.payload as { trigger: string }).trigger === 'on_mcp_resource');
  t.equal(triggered.length, 1, 'the unsubscribed URI started nothing');
  const inputs = driver.fake
    .chatRequests()
    .flatMap((r) => r.body.messages as Array<{ role: string; content: unknown }>)
    .map((m) => String(m.content))
    .filter((text) => text.startsWith('[trigger on_mcp_resource]'));
  t.equal(new Set(inputs).size, 1, 'one trigger input');
  const event = JSON.parse(inputs[0]!.replace('[trigger on_mcp_resource] ', ''));
  t.match(event, { type: 'mcp_resource', data: { server: 'watch', uri: 'fixture://watched' } });
});

t.test('subscriptions are made again after a restart of the server', async (t) => {
  const made = async () =>
    (await serverLogs('watch')).filter((line) => line.includes('subscribed to fixture://watched')).length;
  const before = await made();
  const restarted = await d.request('POST', `/agents/${agentId}/mcp/watch/restart`);
  t.equal(restarted.status, 200);
  await until('subscribed again', async () => (await made()) > before);
  const from = events.events.length;
  await driver.run(d, agentId, 'mcp_watch_touch', { uri: 'fixture://watched' });
  const started = await events.waitFor(
    (e) => e.event_type === 'turn.started' && (e.payload as { trigger: string }).trigger === 'on_mcp_resource',
    'an on_mcp_resource turn from the new session',
    { from },
  );
  await events.waitFor((e) => e.event_type === 'turn.completed' && e.turn_id === started.turn_id, 'its end', {
    from,
  });
});

t.test('list_changed of tools, resources and prompts: the agent sees the new ones', async (t) => {
  const toolNames = async () =>
    ((await d.request('GET', `/agents/${agentId}/tools`)).body.tools as Array<{ name: string }>).map((x) => x.name);
  t.notOk((await toolNames()).includes('mcp_watch_grown_a'));
  t.equal(await driver.run(d, agentId, 'mcp_watch_grow', { name: 'a' }), 'grown');
  await until('the new tool listed', async () => (await toolNames()).includes('mcp_watch_grown_a'));
  t.equal(await driver.run(d, agentId, 'mcp_watch_grown_a', {}), 'grown a', 'and callable');
  const resources = JSON.parse(await driver.run(d, agentId, 'mcp_watch_resources_list', {}));
  t.ok(
    resources.resources.some((r: { uri: string }) => r.uri === 'fixture://grown/a'),
    'the new resource',
  );
  const prompts = JSON.parse(await driver.run(d, agentId, 'mcp_watch_prompts_list', {}));
  t.ok(
    prompts.prompts.some((p: { name: string }) => p.name === 'grown_a'),
    'the new prompt',
  );
  const logs = await serverLogs('watch');
  for (const what of ['tool list changed', 'resource list changed', 'prompt list changed'])
    t.ok(
      logs.some((line) => line.includes(what)),
      what,
    );
});

t.test('progress notifications of a call stream as tool.progress', async (t) => {
  const from = events.events.length;
  t.equal(await driver.run(d, agentId, 'mcp_watch_steps', { count: 3, ms: 150 }), 'done after 3 steps');
  await events.waitFor((e) => e.event_type === 'tool.completed', 'the call ended', { from });
  const progress = events.events
    .slice(from)
    .filter((e) => e.event_type === 'tool.progress')
    .map((e) => e.payload as { call_id: string });
  t.same(progress, [
    { tool: 'mcp_watch_steps', call_id: progress[0]?.call_id, progress: 1, total: 3, message: 'step 1' },
    { tool: 'mcp_watch_steps', call_id: progress[0]?.call_id, progress: 2, total: 3, message: 'step 2' },
    { tool: 'mcp_watch_steps', call_id: progress[0]?.call_id, progress: 3, total: 3, message: 'step 3' },
  ]);
  const completed = events.events.slice(from).findIndex((e) => e.event_type === 'tool.completed');
  const last = events.events
    .slice(from)
    .map((e) => e.event_type)
    .lastIndexOf('tool.progress');
  t.ok(last < completed, 'before the call ends');
});

t.test("the server's log reaches the agent's log from the owner's level up", async (t) => {
  t.same(JSON.parse(await driver.run(d, agentId, 'mcp_watch_level', {})), { level: 'info' }, 'logging/setLevel sent');
  t.same(JSON.parse(await driver.run(d, agentId, 'mcp_plain_level', {})), { level: 'warning' }, 'the default level');
  for (const [level, text, raw] of [
    ['debug', 'below the level, sent anyway', true],
    ['warning', 'disk nearly full', false],
    ['info', 'indexing done', false],
  ] as const)
    await driver.run(d, agentId, 'mcp_watch_log', { level, text, raw });
  const rows = await until('the log rows', async () => {
    const logs = (await d.request('GET', `/agents/${agentId}/logs?limit=200`)).body.logs as Array<{
      level: string;
      message: string;
    }>;
    const mine = logs.filter((row) => row.message.startsWith('MCP server watch ['));
    return mine.length >= 2 && mine;
  });
  const byText = (text: string) => rows.find((row) => row.message.includes(text));
  t.match(byText('disk nearly full'), {
    level: 'warn',
    message: 'MCP server watch [warning] fixture: disk nearly full',
  });
  t.match(byText('indexing done'), { level: 'info' });
  t.notOk(byText('below the level'), 'a message below the level is dropped even when the server sends it');
});

t.test("roots: the agent's work folder, for the server whose registration exposes it only", async (t) => {
  const listed = JSON.parse(await driver.run(d, agentId, 'mcp_watch_roots', {}));
  t.equal(listed.declared, true);
  t.equal(listed.roots.length, 1);
  const folder = fileURLToPath(listed.roots[0].uri);
  t.equal(folder, join(d.dataDir, 'sandbox', 'work', `agent-${agentId}`));
  t.ok(existsSync(folder), 'made when missing');
  const plain = JSON.parse(await driver.run(d, agentId, 'mcp_plain_roots', {}));
  t.same(plain, { declared: false, error: 'MCP error -32601: Method not found' }, 'none for the other server');
});

t.test('a request carries no trace context when nothing traces the turn', async (t) => {
  const meta = JSON.parse(await driver.run(d, agentId, 'mcp_watch_meta', {}));
  t.notOk('traceparent' in meta);
  t.ok('progressToken' in meta, 'the SDK still adds its own');
});

t.test('exposeWorkFolder is refused for an http registration', async (t) => {
  const refused = await d.request('POST', '/mcp/servers', {
    name: 'remote',
    type: 'http',
    url: 'https://mcp.example.com/mcp',
    exposeWorkFolder: true,
  });
  t.equal(refused.status, 400);
  t.match(refused.body, { code: 'bad_request', error: /exposeWorkFolder/ });
});
