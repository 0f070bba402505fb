/**
 * An agent sets only the variables its MCP server's owner registration lists in
 * `allowAgentEnv`. One real daemon with the mcp extension; the owner registers the dependency-free
 * fixture MCP server (a real stdio child), and the test reads the child's environment from
 * `/proc/<pid>/environ`. 48 variable names that change what a child runs are refused at load (listed in
 * the answer and the review), at config time (PUT/PATCH config, the agent's `sys_update_config`), and
 * never reach the child; a name the owner allows does. The HTTP side likewise: a real Streamable HTTP MCP
 * server (the SDK's, stateless, in this process) records the headers of every request; the agent's
 * headers reach it only by the registration's `allowAgentHeaders`, and never replace the owner's
 * `Authorization` (`headerEnv`).
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { join } from 'node:path';
import t from 'tap';
import type { AgentConfig } from '../contracts/agent-config.js';
import { createAgentFile } from './helpers/agent-file.js';
import { ROOT, runDaemon, tempDir } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';
import { FIXTURE_DIR } from './helpers/mcp.js';
import { turnEnd } from './helpers/turn-wait.js';
import { reply, startFakeOpenAI, type FakeReply } from './fakes/openai.js';

/** 38 names known to change what a process runs or loads, and 10 more of the same families (48). */
export const INJECTED = [
  'GIT_CONFIG_PARAMETERS',
  'GIT_CONFIG_GLOBAL',
  'GIT_EXTERNAL_DIFF',
  'GIT_PAGER',
  'GIT_ASKPASS',
  'GIT_PROXY_COMMAND',
  'GIT_SSH',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'ALL_PROXY',
  'NO_PROXY',
  'http_proxy',
  'https_proxy',
  'all_proxy',
  'no_proxy',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'REQUESTS_CA_BUNDLE',
  'CURL_CA_BUNDLE',
  'NODE_TLS_REJECT_UNAUTHORIZED',
  'UV_INDEX_URL',
  'PIP_INDEX_URL',
  'COREPACK_NPM_REGISTRY',
  'YARN_REGISTRY',
  'BUN_CONFIG_REGISTRY',
  'GCONV_PATH',
  'LOCPATH',
  'GLIBC_TUNABLES',
  'NODE_V8_COVERAGE',
  'NODE_REDIRECT_WARNINGS',
  'NODE_ICU_DATA',
  'PYTHONWARNINGS',
  'PYTHONINSPECT',
  'PYTHONBREAKPOINT',
  'DOTNET_STARTUP_HOOKS',
  'SHELLOPTS',
  'BASHOPTS',
  'PAGER',
  'EDITOR',
  'BROWSER',
  'XDG_CONFIG_HOME',
  'TMPDIR',
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_TEMPLATE_DIR',
  'GIT_SSL_NO_VERIFY',
  'NODE_EXTRA_CA_CERTS',
  'npm_config_registry',
];
t.equal(new Set(INJECTED).size, 48);

const MARK = 'agent-injected';

/** Headers of every request the owner's HTTP MCP server received. */
const received: IncomingHttpHeaders[] = [];
const web = createServer((req, res) => {
  received.push(req.headers);
  const mcp = new McpServer({ name: 'recorder', version: '1.0.0' });
  mcp.registerTool('ping', { description: 'answers pong' }, async () => ({
    content: [{ type: 'text', text: 'pong' }],
  }));
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on('close', () => void transport.close().then(() => mcp.close()));
  void mcp.connect(transport).then(() => transport.handleRequest(req, res));
});
await new Promise<void>((done) => web.listen(0, '127.0.0.1', done));
t.teardown(() => new Promise((done) => web.close(done)));
const webUrl = `http://127.0.0.1:${(web.address() as { port: number }).port}/mcp`;

/** The agents' model (provider `local`): replies queued by each test. */
const replies: FakeReply[] = [];
const model = await startFakeOpenAI(t, replies);
const dir = tempDir(t, 'agt-mcp-env-');
const d = await runDaemon(t, {
  extensions: {
    extensions: [
      {
        name: 'providers',
        module: join(ROOT, 'extensions/providers/index.ts'),
        enabled: true,
        config: { maxRetries: 0 },
      },
      { name: 'mcp', module: join(ROOT, 'extensions/mcp/index.ts'), enabled: true, config: { reconnectBaseMs: 50 } },
    ],
  },
  settings: {
    providers: [{ id: 'local', type: 'openai-compatible', name: 'Local', baseUrl: model.baseUrl }],
    mcpServers: [
      {
        name: 'ownertool',
        type: 'command',
        command: process.execPath,
        args: [join(FIXTURE_DIR, 'server.mjs')],
        env: { OWNER_SET: 'owner' },
        allowAgentEnv: ['ALLOWED_ONE', 'ALLOWED_TWO'],
      },
      { name: 'plain', type: 'command', command: process.execPath, args: [join(FIXTURE_DIR, 'server.mjs')] },
      {
        name: 'ownerweb',
        type: 'http',
        url: webUrl,
        headerEnv: { Authorization: 'OWNER_WEB_AUTH', 'X-Tenant': 'OWNER_WEB_TENANT' },
        allowAgentHeaders: ['X-Allowed', 'authorization', 'x-tenant'],
      },
    ],
  },
  env: { OWNER_WEB_AUTH: 'Bearer owner-token', OWNER_WEB_TENANT: 'owner-tenant' },
});
const log = await eventLog(t, d);

const injected = Object.fromEntries(INJECTED.map((name) => [name, `${MARK}-${name}`]));
const server = (env: Record<string, string>, extra: Record<string, unknown> = {}) => ({
  name: 'ownertool',
  transport: 'stdio' as const,
  env,
  ...extra,
});

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const end = Date.now() + 20_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`failsafe: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The environment of the agent's connected server `name`, read from the real child process. */
async function childEnv(agentId: string, name: string): Promise<Record<string, string>> {
  const view = await until(`${name} connected`, async () => {
    const s = (await d.request('GET', `/agents/${agentId}/mcp`)).body.servers.find(
      (x: { name: string }) => x.name === name,
    );
    return s?.status === 'connected' && s.pid ? s : undefined;
  });
  const raw = readFileSync(`/proc/${view.pid}/environ`, 'utf8');
  return Object.fromEntries(
    raw
      .split('\0')
      .filter(Boolean)
      .map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]),
  );
}

async function load(config: Partial<AgentConfig>) {
  const filePath = await createAgentFile(dir, config);
  const review = (await d.request('GET', `/agents/review?filePath=${encodeURIComponent(filePath)}`)).body;
  const res = await d.request('POST', '/agents/load', { filePath });
  return { filePath, review, res };
}

t.test(
  'the 48 names from an agent file: refused at load and in the review, absent from the child; allowed names pass',
  async (t) => {
    const { review, res } = await load({
      mcp: { servers: [server({ ...injected, ALLOWED_ONE: 'yes' }, { env_keys: ['GIT_SSH_COMMAND'] })] },
    });
    t.equal(res.status, 200, 'the agent loads, without what is refused');
    const fields = (res.body.refused as Array<{ field: string; reason: string }>).map((p) => p.field);
    t.same(
      fields.sort(),
      [
        ...INJECTED.map((n) => `mcp.servers.ownertool.env.${n}`),
        'mcp.servers.ownertool.env_keys.GIT_SSH_COMMAND',
      ].sort(),
      'every refused name, and only those, in the load answer',
    );
    t.match(res.body.refused[0].reason, /does not let agents set .*allowAgentEnv: ALLOWED_ONE, ALLOWED_TWO/);
    t.same(
      (review.summary.refused as Array<{ field: string }>).map((p) => p.field).sort(),
      fields,
      'the review lists the same',
    );
    const env = await childEnv(res.body.id, 'ownertool');
    t.equal(env.ALLOWED_ONE, 'yes', 'a name in allowAgentEnv reaches the child');
    t.equal(env.OWNER_SET, 'owner', "the registration's own variables are unchanged");
    const leaked = Object.entries(env).filter(([, value]) => value.includes(MARK));
    t.same(leaked, [], 'no value the agent set for a refused name is in the child');
    for (const name of INJECTED.filter((n) => n !== 'TMPDIR')) t.notOk(name in env, `${name} absent`);
    const logs = (await d.request('GET', `/agents/${res.body.id}/mcp`)).body.servers[0].logs.join('\n');
    t.match(
      logs,
      /not in the registration's allowAgentEnv\): GIT_CONFIG_PARAMETERS/,
      "the server's log says what was not passed",
    );
  },
);

t.test('a server the owner did not register (source npm:) takes no variables from the agent', async (t) => {
  const { res } = await load({
    mcp: {
      servers: [{ name: 'unregistered', transport: 'stdio', source: 'npm:some-package', env: { GIT_PAGER: MARK } }],
    },
  });
  t.equal(res.status, 200);
  t.match(res.body.refused, [{ field: 'mcp.servers.unregistered.env.GIT_PAGER', reason: /no owner registration/ }]);
});

t.test('config time: PUT and PATCH refuse a name the registration does not allow, with 400 naming it', async (t) => {
  const { res } = await load({ mcp: { servers: [server({ ALLOWED_ONE: '1' })] } });
  const id = res.body.id as string;
  t.same(res.body.refused, [], 'nothing refused');
  const config = (await d.request('GET', `/agents/${id}/config`)).body.config;
  const put = await d.request('PUT', `/agents/${id}/config`, {
    ...config,
    mcp: { servers: [server({ ALLOWED_ONE: '1', GIT_CONFIG_PARAMETERS: MARK })] },
  });
  t.equal(put.status, 400);
  t.match(put.body, {
    code: 'bad_request',
    error: /mcp\.servers\.ownertool\.env\.GIT_CONFIG_PARAMETERS: .*allowAgentEnv/,
  });
  const patch = await d.request('PATCH', `/agents/${id}/config`, {
    mcp: { servers: [server({}, { env_keys: ['HTTPS_PROXY'] })] },
  });
  t.equal(patch.status, 400);
  t.match(patch.body.error, /env_keys\.HTTPS_PROXY/);
  t.same((await d.request('GET', `/agents/${id}/config`)).body.config.mcp, config.mcp, 'nothing was written');
  const allowed = await d.request('PATCH', `/agents/${id}/config`, {
    mcp: { servers: [server({ ALLOWED_ONE: '1', ALLOWED_TWO: '2' })] },
  });
  t.equal(allowed.status, 200, 'allowed names are accepted');
});

/** The agent calls sys_update_config with `patch`: what the tool answered, and whether it failed (tool.completed). */
async function agentTries(id: string, patch: Record<string, unknown>): Promise<{ content: string; isError?: boolean }> {
  replies.push(reply.toolCalls([{ name: 'sys_update_config', args: { patch } }]), reply.text('tried'));
  const turnId = (await d.request('POST', `/agents/${id}/chat`, { text: 'change yourself' })).body.turnId as string;
  await turnEnd(log, turnId, 20_000);
  const completed = log.events.find((e) => e.event_type === 'tool.completed' && e.turn_id === turnId);
  const content = (model.chatRequests().at(-1)!.body.messages as Array<{ role: string; content: string }>)
    .filter((m) => m.role === 'tool')
    .at(-1)!.content;
  return { content, isError: !(completed!.payload as { ok: boolean }).ok };
}

t.test("the agent's own sys_update_config: mcp is owner-locked; once unlocked, still only allowed names", async (t) => {
  const { res } = await load({
    model: { provider: 'local', model_id: 'm' },
    tools: [{ name: 'sys_update_config', enabled: true }],
    mcp: { servers: [server({})] },
  });
  const id = res.body.id as string;
  const locked = await agentTries(id, { mcp: { servers: [server({ GIT_CONFIG_PARAMETERS: MARK })] } });
  t.equal(locked.isError, true);
  t.match(
    locked.content,
    /mcp is locked by the owner \(the owner can unlock it for this agent in settings agentConfigUnlocks\)/,
  );
  t.equal((await d.request('PATCH', '/settings', { agentConfigUnlocks: { [id]: ['mcp'] } })).status, 200);
  const refused = await agentTries(id, { mcp: { servers: [server({ GIT_CONFIG_PARAMETERS: MARK })] } });
  t.equal(refused.isError, true);
  t.match(refused.content, /mcp\.servers\.ownertool\.env\.GIT_CONFIG_PARAMETERS: .*does not let agents set/);
  const accepted = await agentTries(id, { mcp: { servers: [server({ ALLOWED_TWO: 'from-agent' })] } });
  t.notOk(accepted.isError, accepted.content);
  t.same((await d.request('GET', `/agents/${id}/config`)).body.config.mcp.servers[0].env, {
    ALLOWED_TWO: 'from-agent',
  });
  t.equal((await d.request('POST', `/agents/${id}/mcp/ownertool/restart`)).status, 200);
  t.equal((await childEnv(id, 'ownertool')).ALLOWED_TWO, 'from-agent', 'the allowed name reaches the restarted child');
  const other = await load({
    model: { provider: 'local', model_id: 'm' },
    tools: [{ name: 'sys_update_config', enabled: true }],
    mcp: { servers: [server({})] },
  });
  t.match(
    (await agentTries(other.res.body.id, { mcp: { servers: [] } })).content,
    /mcp is locked/,
    "one agent's unlock is not another's",
  );
});

t.test(
  'a registration without allowAgentEnv: nothing from the agent, and a refused name in allowAgentEnv is 400',
  async (t) => {
    const { res } = await load({
      mcp: { servers: [{ name: 'plain', transport: 'stdio', env: { EDITOR: MARK, PAGER: MARK } }] },
    });
    t.same(res.body.refused.map((p: { field: string }) => p.field).sort(), [
      'mcp.servers.plain.env.EDITOR',
      'mcp.servers.plain.env.PAGER',
    ]);
    const env = await childEnv(res.body.id, 'plain');
    t.same(
      Object.values(env).filter((v) => v.includes(MARK)),
      [],
    );
    const bad = await d.request('POST', '/mcp/servers', {
      name: 'bad',
      type: 'command',
      command: 'x',
      allowAgentEnv: ['LD_PRELOAD'],
    });
    t.equal(bad.status, 400);
  },
);

t.test(
  "HTTP: the agent's headers only by allowAgentHeaders, never the owner's Authorization; refused at load, at config time, never sent",
  async (t) => {
    const web = (extra: Record<string, unknown>) => ({ name: 'ownerweb', transport: 'http' as const, ...extra });
    const { review, res } = await load({
      mcp: {
        servers: [
          web({
            headers: {
              'x-tenant': MARK,
              'x-allowed': 'agent-ok',
              'X-Forwarded-For': MARK,
              'X-Original-URL': MARK,
              Host: MARK,
            },
            header_env: [{ header: 'X-Api-Key', env: 'KEY' }],
            bearer_token_env_var: 'TOKEN',
          }),
        ],
      },
    });
    t.equal(res.status, 200, 'the agent loads, without what is refused');
    const fields = (res.body.refused as Array<{ field: string }>).map((p) => p.field).sort();
    t.same(
      fields,
      [
        'mcp.servers.ownerweb.bearer_token_env_var',
        'mcp.servers.ownerweb.header_env.X-Api-Key',
        'mcp.servers.ownerweb.headers.Host',
        'mcp.servers.ownerweb.headers.X-Forwarded-For',
        'mcp.servers.ownerweb.headers.X-Original-URL',
        'mcp.servers.ownerweb.headers.x-tenant',
      ].sort(),
    );
    const reasons = Object.fromEntries(
      (res.body.refused as Array<{ field: string; reason: string }>).map((p) => [p.field, p.reason]),
    );
    t.match(
      reasons['mcp.servers.ownerweb.bearer_token_env_var'],
      /sets the header Authorization itself \(headerEnv\)/,
      "the owner's Authorization is named as the owner's",
    );
    t.match(
      reasons['mcp.servers.ownerweb.headers.x-tenant'],
      /sets the header x-tenant itself/,
      'so is any header the registration sets, though listed in allowAgentHeaders',
    );
    t.match(
      reasons['mcp.servers.ownerweb.headers.X-Forwarded-For'],
      /does not let agents send the header X-Forwarded-For \(its allowAgentHeaders: x-allowed\)/,
    );
    t.same(
      (review.summary.refused as Array<{ field: string }>).map((p) => p.field).sort(),
      fields,
      'the review lists the same',
    );
    const before = received.length;
    await until('ownerweb connected', async () => {
      const s = (await d.request('GET', `/agents/${res.body.id}/mcp`)).body.servers.find(
        (x: { name: string }) => x.name === 'ownerweb',
      );
      return s?.status === 'connected' ? s : undefined;
    });
    const mine = received.slice(before);
    t.ok(mine.length >= 2, 'the server saw the handshake');
    for (const headers of mine) {
      t.equal(headers.authorization, 'Bearer owner-token', "the owner's Authorization arrives unchanged");
      t.equal(headers['x-tenant'], 'owner-tenant', "the owner's other header too");
      t.equal(headers['x-allowed'], 'agent-ok', 'an allowed header arrives');
      t.notOk(
        'x-forwarded-for' in headers || 'x-original-url' in headers || 'x-api-key' in headers,
        'refused headers never arrive',
      );
      t.notOk(
        Object.values(headers).some((v) => String(v).includes(MARK)),
        'no value the agent wrote for a refused header arrives',
      );
    }
    const logs = (await d.request('GET', `/agents/${res.body.id}/mcp`)).body.servers[0].logs.join('\n');
    t.match(
      logs,
      /headers not sent to the server .*allowAgentHeaders.*X-Forwarded-For/,
      "the server's log says what was not sent",
    );

    const id = (
      await load({
        model: { provider: 'local', model_id: 'm' },
        tools: [{ name: 'sys_update_config', enabled: true }],
        mcp: { servers: [web({ headers: { 'X-Allowed': '1' } })] },
      })
    ).res.body.id as string;
    const patch = await d.request('PATCH', `/agents/${id}/config`, {
      mcp: { servers: [web({ headers: { 'X-Allowed': '1', 'X-Evil': MARK } })] },
    });
    t.equal(patch.status, 400);
    t.match(patch.body, {
      code: 'bad_request',
      error: /mcp\.servers\.ownerweb\.headers\.X-Evil: .*allowAgentHeaders: x-allowed/,
    });
    const config = (await d.request('GET', `/agents/${id}/config`)).body.config;
    const put = await d.request('PUT', `/agents/${id}/config`, {
      ...config,
      mcp: { servers: [web({ bearer_token_env_var: 'TOKEN' })] },
    });
    t.equal(put.status, 400);
    t.match(put.body.error, /bearer_token_env_var: .*sets the header Authorization itself/);
    t.equal((await d.request('PATCH', '/settings', { agentConfigUnlocks: { [id]: ['mcp'] } })).status, 200);
    const tool = await agentTries(id, {
      mcp: { servers: [web({ header_env: [{ header: 'Proxy-Authorization', env: 'K' }] })] },
    });
    t.equal(tool.isError, true);
    t.match(tool.content, /header_env\.Proxy-Authorization: .*does not let agents send the header/);
    t.same((await d.request('GET', `/agents/${id}/config`)).body.config.mcp, config.mcp, 'nothing was written');
    t.equal(
      (await d.request('PATCH', `/agents/${id}/config`, { mcp: { servers: [web({ headers: { 'X-ALLOWED': '2' } })] } }))
        .status,
      200,
      'an allowed name, any case, is accepted',
    );

    const unregistered = await load({
      mcp: {
        servers: [{ name: 'elsewhere', transport: 'http', source: 'npm:some-package', headers: { 'X-Allowed': MARK } }],
      },
    });
    t.match(unregistered.res.body.refused, [
      {
        field: 'mcp.servers.elsewhere.headers.X-Allowed',
        reason: /sends no headers to a server the owner did not register/,
      },
    ]);
  },
);
