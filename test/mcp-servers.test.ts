/**
 * The mcp extension against real MCP servers, all in one daemon: server-everything over stdio and over
 * Streamable HTTP, server-memory, and a dependency-free fixture server installed from a tarball through
 * POST /mcp/packages (its broken tools hang, exit mid-call, write garbage, flood stderr). The model is
 * the fake OpenAI-style server: a chat `call:[...]` makes it call those tools, anything else ends the
 * turn with "done".
 */
import { join } from 'node:path';
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { ROOT, runDaemon, tempDir } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';
import { turnEnd } from './helpers/turn-wait.js';
import { alive, EVERYTHING, FIXTURE_PACKAGE, gone, MEMORY, packFixture, startEverythingHttp } from './helpers/mcp.js';
import { reply, startFakeOpenAI, type FakeScript } from './fakes/openai.js';

const scratch = tempDir(t, 'agt-mcp-');
const tarball = packFixture(scratch);
const web = await startEverythingHttp(t);

const script: FakeScript = (request) => {
  const last = request.body.messages.at(-1);
  if (last?.role === 'user' && typeof last.content === 'string' && last.content.startsWith('call:'))
    return reply.toolCalls(JSON.parse(last.content.slice(5)));
  return reply.text('done');
};
const fake = await startFakeOpenAI(t, script);

const d = await runDaemon(t, {
  extensions: {
    extensions: [
      {
        name: 'providers',
        module: join(ROOT, 'extensions/providers/index.ts'),
        enabled: true,
        config: { maxRetries: 0 },
      },
      {
        name: 'mcp',
        module: join(ROOT, 'extensions/mcp/index.ts'),
        enabled: true,
        config: { reconnectBaseMs: 50, logLines: 40 },
      },
    ],
  },
  env: { NODE_OPTIONS: '--no-warnings', LD_PRELOAD: '', AGT_TEST_ONLY: 'daemon-secret' },
  settings: {
    providers: [{ id: 'fake', type: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, defaultModel: 'fake-1' }],
    mcpServers: [
      { name: 'everything', type: 'command', command: process.execPath, args: [EVERYTHING, 'stdio'] },
      {
        name: 'memory',
        type: 'command',
        command: process.execPath,
        args: [MEMORY],
        env: { MEMORY_FILE_PATH: join(scratch, 'memory.jsonl') },
      },
      { name: 'web', type: 'http', url: web.url },
    ],
  },
});
const log = await eventLog(t, d);
const events = log.events;

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value as T;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 30));
  }
}

const server = async (agentId: string, name: string) =>
  (await d.request('GET', `/agents/${agentId}/mcp`)).body.servers.find((s: any) => s.name === name);

/**
 * Starts a turn whose model calls `calls`; `finish` waits for its end and gives the tool messages the model got back.
 */
async function startTurn(agentId: string, calls: Array<{ name: string; args: Record<string, unknown> }>) {
  const turnId = (await d.request('POST', `/agents/${agentId}/chat`, { text: `call:${JSON.stringify(calls)}` })).body
    .turnId as string;
  return {
    turnId,
    async finish() {
      const end = await turnEnd(log, turnId, 60_000);
      const messages = fake.chatRequests().at(-1)!.body.messages as any[];
      let at = messages.length - 1;
      while (
        at >= 0 &&
        !(
          messages[at].role === 'user' &&
          typeof messages[at].content === 'string' &&
          messages[at].content.startsWith('call:')
        )
      )
        at--;
      const after = messages.slice(at + 1);
      return { end, after, results: after.filter((m) => m.role === 'tool').map((m) => String(m.content)) };
    },
  };
}
const turn = async (agentId: string, calls: Array<{ name: string; args: Record<string, unknown> }>) =>
  (await startTurn(agentId, calls)).finish();

let agentId = '';

t.test('registrations and packages', async (t) => {
  const installed = await d.request('POST', '/mcp/packages', { package: tarball });
  t.equal(installed.status, 201, JSON.stringify(installed.body));
  t.match(installed.body.package, { name: FIXTURE_PACKAGE, version: '1.0.0', bin: 'server.mjs' });
  t.match((await d.request('GET', '/mcp/packages')).body.packages, [{ name: FIXTURE_PACKAGE }]);
  const broken = await d.request('POST', '/mcp/packages', { package: join(scratch, 'no-such-package.tgz') });
  t.equal(broken.status, 422);
  t.match(broken.body, { code: 'install_failed', error: /npm could not install/ });
  t.match((await d.request('GET', '/mcp/packages')).body.operations, [
    { action: 'install', status: 'failed' },
    { action: 'install', status: 'done', spec: tarball },
  ]);
  t.equal(
    (await d.request('POST', '/mcp/packages', { package: '--global' })).status,
    400,
    'an npm option is no package',
  );

  t.equal(
    (await d.request('POST', '/mcp/servers', { name: 'fixture', type: 'npm', npmPackage: FIXTURE_PACKAGE })).status,
    201,
  );
  t.equal(
    (await d.request('POST', '/mcp/servers', { name: 'fixture', type: 'npm', npmPackage: FIXTURE_PACKAGE })).status,
    409,
  );
  t.equal(
    (
      await d.request('POST', '/mcp/servers', {
        name: 'bad',
        type: 'command',
        command: 'node',
        env: { NODE_OPTIONS: '--require x' },
      })
    ).status,
    400,
  );
  t.equal(
    (
      await d.request('POST', '/mcp/servers', {
        name: 'bad',
        type: 'command',
        command: 'node',
        envFrom: { X: 'AGT_DAEMON_TOKEN' },
      })
    ).status,
    400,
  );
  t.equal((await d.request('POST', '/mcp/servers', { name: 'bad', type: 'http' })).status, 400, 'http needs a url');
  const overview = (await d.request('GET', '/mcp')).body;
  t.same(
    overview.registrations.map((r: any) => r.name),
    ['everything', 'memory', 'web', 'fixture'],
  );
});

t.test('declared servers connect; tools, context and status', async (t) => {
  const path = await createAgentFile(tempDir(t), {
    model: { provider: 'fake', model_id: 'fake-1' },
    tools: [{ name: 'mcp_fixture_echo', enabled: true, restricted: true }],
    mcp: {
      servers: [
        { name: 'everything', transport: 'stdio', tool_call_timeout_ms: 1500 },
        { name: 'memory', transport: 'stdio' },
        { name: 'web', transport: 'http' },
        { name: 'fixture', transport: 'stdio', tool_call_timeout_ms: 1500, new_tools_restricted: true },
        { name: 'ghost', transport: 'stdio', command: 'rm', args: ['-rf', '/'] },
      ],
    },
  } as never);
  const loaded = await d.request('POST', '/agents/load', { filePath: path });
  t.equal(loaded.status, 200, 'the agent loads although one server is skipped');
  agentId = loaded.body.id;
  const listed = await until('all servers connected', async () => {
    const servers = (await d.request('GET', `/agents/${agentId}/mcp`)).body.servers as any[];
    return servers.filter((s) => s.name !== 'ghost').every((s) => s.status === 'connected') ? servers : undefined;
  });
  const byName = Object.fromEntries(listed.map((s: any) => [s.name, s]));
  t.match(byName.everything, { transport: 'stdio', status: 'connected', restartCount: 0 });
  t.ok(byName.everything.toolCount > 5 && byName.everything.connectedAt > 0);
  t.match(byName.web, { transport: 'http', status: 'connected' });
  t.ok(byName.memory.toolCount >= 5);
  t.match(byName.ghost, { status: 'skipped', error: /no MCP server registration named ghost/ });
  const logs = (await d.request('GET', `/agents/${agentId}/logs?limit=100`)).body.logs as Array<{
    message: string;
    origin: string | null;
  }>;
  t.ok(
    logs.some((row) => /MCP server ghost skipped: no MCP server registration/.test(row.message)),
    "the skip is in the agent's log",
  );
  t.ok(Number.isInteger(byName.everything.pid) && alive(byName.everything.pid));

  const tools = (await d.request('GET', `/agents/${agentId}/tools`)).body.tools as any[];
  const tool = (name: string) => tools.find((x) => x.name === name);
  t.match(tool('mcp_everything_echo'), {
    source: 'mcp:everything',
    enabled: true,
    restricted: false,
    schema: { type: 'object' },
  });
  t.match(tool('mcp_web_echo'), { source: 'mcp:web' });
  t.match(tool('mcp_memory_create_entities'), { source: 'mcp:memory' });
  t.match(tool('mcp_fixture_echo'), { source: 'mcp:fixture', restricted: true });
  t.notOk(tools.some((x) => x.source === 'mcp:ghost'));

  const context = (await d.request('GET', `/agents/${agentId}/context`)).body;
  const category = context.categories.find((c: any) => c.id === 'mcp:everything');
  // The server's own tools, and the four for its resources and prompts (it has both).
  t.match(category, { key: 'mcp:everything', count: byName.everything.toolCount + 4 });
  t.ok(tool('mcp_everything_resources_read') && tool('mcp_everything_prompts_get'), 'resources and prompts as tools');
  t.ok(category.tokens > 0);
  t.ok(
    context.categories.some((c: any) => c.id === 'mcp:web') &&
      context.categories.some((c: any) => c.id === 'mcp:fixture'),
  );

  const overview = (await d.request('GET', '/mcp')).body;
  t.ok(overview.servers.some((s: any) => s.agentId === agentId && s.name === 'memory' && s.status === 'connected'));
});

t.test('a turn calls tools on stdio, HTTP and npm-installed servers; images reach the model', async (t) => {
  const { end, after, results } = await turn(agentId, [
    { name: 'mcp_everything_echo', args: { message: 'hello stdio' } },
    { name: 'mcp_web_echo', args: { message: 'hello http' } },
    {
      name: 'mcp_memory_create_entities',
      args: { entities: [{ name: 'Ada', entityType: 'person', observations: ['wrote notes'] }] },
    },
    { name: 'mcp_fixture_image', args: {} },
    { name: 'mcp_fixture_env', args: {} },
  ]);
  t.match(end, { event_type: 'turn.completed', payload: { tool_calls: 5 } });
  t.match(results[0], /Echo: hello stdio/);
  t.match(results[1], /Echo: hello http/);
  t.match(results[2], /Ada/);
  t.match(results[3], /a tiny image/);
  const env = JSON.parse(results[4]!) as Record<string, string>;
  t.ok(env.PATH, 'the child gets PATH');
  t.notOk(
    Object.keys(env).some((n) => n === 'LD_PRELOAD' || n.startsWith('AGT_')),
    `no LD_PRELOAD or AGT_* in ${Object.keys(env).join(',')}`,
  );
  t.notOk('NODE_OPTIONS' in env, "the daemon's NODE_OPTIONS is not inherited");
  const images = after.find((m) => m.role === 'user' && Array.isArray(m.content));
  t.match(
    images?.content?.[1],
    { type: 'image_url', image_url: { url: /^data:image\/png;base64,iVBOR/ } },
    'the image follows the tool results as Chat Completions wants',
  );
});

t.test('a restricted MCP tool waits for the owner', async (t) => {
  const running = await startTurn(agentId, [{ name: 'mcp_fixture_echo', args: { text: 'needs approval' } }]);
  const requested = await until('the approval request', () =>
    events.find((e) => e.event_type === 'hil.requested' && (e.payload as any).tool === 'mcp_fixture_echo'),
  );
  const taskId = (requested.payload as any).taskId;
  t.equal((await d.request('GET', `/agents/${agentId}/status`)).body.runtimeState, 'awaiting_approval');
  t.equal((await d.request('POST', `/agents/${agentId}/tasks/${taskId}/resolve`, { action: 'approve' })).status, 200);
  const { results } = await running.finish();
  t.same(results, ['echo: needs approval']);
});

t.test('progress restarts the per-call limit', async (t) => {
  // 3 s of work against a 1.5 s limit: progress every 0.5 s keeps it alive.
  const { results } = await turn(agentId, [
    { name: 'mcp_everything_trigger-long-running-operation', args: { duration: 3, steps: 6 } },
  ]);
  t.match(results[0], /Long running operation completed/);
});

t.test('a broken server fails the call, not the turn, and is reconnected', async (t) => {
  const before = (await server(agentId, 'fixture')).restartCount;
  const reconnected = (count: number) =>
    until(`fixture reconnected (${count})`, async () => {
      const s = await server(agentId, 'fixture');
      return s.status === 'connected' && s.restartCount >= count ? s : undefined;
    });
  let outcome = await turn(agentId, [{ name: 'mcp_fixture_exit', args: {} }]);
  t.equal(outcome.end.event_type, 'turn.completed', 'the turn goes on');
  t.match(outcome.results[0], /failed: MCP server fixture could not run exit: .*(closed|exited)/);
  await reconnected(before + 1);

  outcome = await turn(agentId, [{ name: 'mcp_fixture_garbage', args: {} }]);
  t.match(outcome.results[0], /not JSON-RPC/);
  await reconnected(before + 2);

  outcome = await turn(agentId, [{ name: 'mcp_fixture_hang', args: {} }]);
  t.match(outcome.results[0], /exceeded its time limit of 1500 ms/);
  await reconnected(before + 3);

  outcome = await turn(agentId, [{ name: 'mcp_fixture_flood', args: {} }]);
  t.equal(outcome.results[0], 'flooded');
  const status = await server(agentId, 'fixture');
  t.ok(status.logs.length <= 40, `logs stay bounded (${status.logs.length})`);
  t.ok(status.logs.some((line: string) => line.startsWith('flood line')));
  t.equal((await d.request('GET', '/health')).status, 200);
});

t.test('an interrupt cancels a long MCP call on the server', async (t) => {
  const running = await startTurn(agentId, [{ name: 'mcp_fixture_slow', args: { ms: 30_000 } }]);
  await until('the call started', () =>
    events.find((e) => e.event_type === 'tool.started' && e.turn_id === running.turnId),
  );
  await new Promise((r) => setTimeout(r, 300));
  const started = Date.now();
  t.match((await d.request('POST', `/agents/${agentId}/interrupt`)).body, { interrupted: true });
  const { end } = await running.finish();
  t.equal((end.payload as any).stop_reason, 'interrupted');
  t.ok(Date.now() - started < 10_000);
  await until('the cancellation logged by the server', async () =>
    (await server(agentId, 'fixture')).logs.some((l: string) => /cancelled request/.test(l)),
  );
});

t.test('a tool whose schema changed is disabled until re-enabled', async (t) => {
  t.equal((await d.request('DELETE', '/mcp/servers/fixture')).status, 200);
  t.equal((await d.request('DELETE', '/mcp/servers/fixture')).status, 404);
  t.equal(
    (
      await d.request('POST', '/mcp/servers', {
        name: 'fixture',
        type: 'npm',
        npmPackage: FIXTURE_PACKAGE,
        env: { FIXTURE_ECHO_V2: '1' },
        allowAgentEnv: ['FIXTURE_TOKEN'],
      })
    ).status,
    201,
  );
  const restarted = await d.request('POST', `/agents/${agentId}/mcp/fixture/restart`);
  t.match(restarted.body, { name: 'fixture', status: 'connected' });
  let echo = (await d.request('GET', `/agents/${agentId}/tools`)).body.tools.find(
    (x: any) => x.name === 'mcp_fixture_echo',
  );
  t.match(echo, { enabled: false, disabledReason: /input schema of echo changed/ });
  t.ok(echo.schema.required.includes('loud'));
  const listed = (await d.request('GET', `/agents/${agentId}/tools`)).body.tools as any[];
  t.match(
    listed.find((x) => x.name === 'mcp_fixture_extra'),
    { enabled: true, restricted: true },
    'a tool that arrived later needs approval (new_tools_restricted)',
  );
  t.match(
    listed.find((x) => x.name === 'mcp_fixture_image'),
    { enabled: true, restricted: false },
    'the first listing does not',
  );
  const { results } = await turn(agentId, [{ name: 'mcp_fixture_echo', args: { text: 'x', loud: true } }]);
  t.match(results[0], /Unknown or disabled tool/);
  t.equal((await d.request('POST', `/agents/${agentId}/mcp/fixture/tools/echo/enable`)).status, 200);
  t.equal(
    (await d.request('POST', `/agents/${agentId}/mcp/fixture/tools/echo/enable`)).status,
    404,
    'nothing waits any more',
  );
  echo = (await d.request('GET', `/agents/${agentId}/tools`)).body.tools.find(
    (x: any) => x.name === 'mcp_fixture_echo',
  );
  t.equal(echo.enabled, true);
  t.notOk('disabledReason' in echo);
  t.equal((await d.request('POST', `/agents/${agentId}/mcp/nope/restart`)).status, 404);
});

t.test("the agent's sealed credentials reach the child, never a log", async (t) => {
  const secret = `tok-${Date.now().toString(36)}-sealed`;
  t.equal((await d.request('POST', '/identity/create', { passphrase: 'mcp test passphrase' })).status, 201);
  t.equal(
    (await d.request('PUT', `/agents/${agentId}/credentials/mcp:fixture:FIXTURE_TOKEN`, { value: secret })).status,
    200,
  );
  const servers = (await d.request('GET', `/agents/${agentId}`)).body.config.mcp.servers as any[];
  const patched = servers.map((s) => (s.name === 'fixture' ? { ...s, env_keys: ['FIXTURE_TOKEN'] } : s));
  t.equal((await d.request('PATCH', `/agents/${agentId}/config`, { mcp: { servers: patched } })).status, 200);
  t.match((await d.request('POST', `/agents/${agentId}/mcp/fixture/restart`)).body, { status: 'connected' });
  const { results } = await turn(agentId, [{ name: 'mcp_fixture_env', args: {} }]);
  t.equal(JSON.parse(results[0]!).FIXTURE_TOKEN, secret, 'the child got the credential as FIXTURE_TOKEN');
  const fixture = await until('the token line logged', async () => {
    const s = await server(agentId, 'fixture');
    return s.logs.some((l: string) => l.startsWith('using token')) ? s : undefined;
  });
  t.ok(fixture.logs.includes('using token [redacted]'), 'scrubbed from the kept lines');
  for (const route of [`/agents/${agentId}/mcp`, '/mcp', `/agents/${agentId}/logs?limit=500`]) {
    t.notOk(JSON.stringify((await d.request('GET', route)).body).includes(secret), `not in GET ${route}`);
  }
});

t.test('an HTTP server that goes away fails the call; the restart route reconnects it', async (t) => {
  web.child.kill('SIGKILL');
  await new Promise((done) =>
    web.child.exitCode !== null || web.child.signalCode !== null ? done(null) : web.child.once('exit', done),
  );
  const { end, results } = await turn(agentId, [{ name: 'mcp_web_echo', args: { message: 'anyone?' } }]);
  t.equal(end.event_type, 'turn.completed');
  t.match(results[0], /failed: MCP server web could not run echo/);
  const down = await until('web given up', async () => {
    const s = await server(agentId, 'web');
    return s.status === 'error' && s.logs.some((l: string) => /gave up/.test(l)) ? s : undefined;
  });
  t.ok(down.restartCount >= 1, 'reconnects were tried');
  await startEverythingHttp(t, 'streamableHttp', web.port);
  t.match((await d.request('POST', `/agents/${agentId}/mcp/web/restart`)).body, { status: 'connected' });
  t.match((await turn(agentId, [{ name: 'mcp_web_echo', args: { message: 'back' } }])).results[0], /Echo: back/);
});

t.test('an abort cancels a long MCP call on the server too', async (t) => {
  const cancellations = async () =>
    (await server(agentId, 'fixture')).logs.filter((l: string) => /cancelled request/.test(l)).length;
  const before = await cancellations();
  const running = await startTurn(agentId, [{ name: 'mcp_fixture_slow', args: { ms: 30_000 } }]);
  await until('the call started', () =>
    events.find((e) => e.event_type === 'tool.started' && e.turn_id === running.turnId),
  );
  await new Promise((r) => setTimeout(r, 300));
  t.equal((await d.request('POST', `/agents/${agentId}/abort`)).status, 200);
  t.match((await running.finish()).end, { event_type: 'agent.error' });
  await until('a second cancellation logged by the server', async () => (await cancellations()) > before);
});

t.test('unload and shutdown leave no child behind', async (t) => {
  const pids = (await d.request('GET', `/agents/${agentId}/mcp`)).body.servers.map((s: any) => s.pid).filter(Boolean);
  t.equal(pids.length, 3, 'everything, memory and fixture run as children');
  t.equal((await d.request('POST', `/agents/${agentId}/unload`)).status, 200);
  t.same(await gone(pids), [], 'every child of the unloaded agent is gone');

  const path = await createAgentFile(tempDir(t), {
    mcp: {
      servers: [
        { name: 'everything', transport: 'stdio' },
        { name: 'fixture', transport: 'stdio' },
      ],
    },
  } as never);
  const other = (await d.request('POST', '/agents/load', { filePath: path })).body.id;
  const running = await until('the second agent connected', async () => {
    const servers = (await d.request('GET', `/agents/${other}/mcp`)).body.servers as any[];
    return servers.every((s) => s.status === 'connected') ? servers.map((s) => s.pid as number) : undefined;
  });
  t.equal(await d.stop(), 0, 'the daemon stopped cleanly');
  t.same(await gone(running), [], 'shutdown killed every child');
});
