/**
 * Secret values never appear in config: config PUT, the agent's own config tool
 * (`sys_update_config`, played by a fake model) and the load of a file refuse them, naming the path and pointing at
 * credentials; the names of environment variables are fine.
 */
import { join } from 'node:path';
import t from 'tap';
import type { AgentConfig } from '../contracts/agent-config.js';
import { findConfigSecret } from '../kernel/agents/config-secrets.js';
import { createAgentFile, agentConfig } from './helpers/agent-file.js';
import { ROOT, runDaemon, tempDir, type SpawnedDaemon } from './helpers/daemon.js';
import { startToolDriver, type ToolDriver } from './helpers/tool-driver.js';

const SECRET = 'sk-live-0123456789abcdef';
const mcp = (server: Record<string, unknown>) => ({
  servers: [{ name: 'gh', transport: 'http', url: 'https://mcp.example/', ...server }],
});

t.test('the rules, without a daemon', async (t) => {
  const at = (partial: Partial<AgentConfig> | Record<string, unknown>) =>
    findConfigSecret(agentConfig(partial as Partial<AgentConfig>))?.path ?? null;
  t.equal(at({ mcp: mcp({ headers: { Authorization: `Bearer ${SECRET}` } }) }), '/mcp/servers/0/headers/Authorization');
  t.equal(at({ mcp: mcp({ headers: { 'X-Api-Key': SECRET } }) }), '/mcp/servers/0/headers/X-Api-Key');
  t.equal(at({ mcp: mcp({ headers: { Cookie: 'session=abc' } }) }), '/mcp/servers/0/headers/Cookie');
  t.equal(at({ mcp: mcp({ headers: { 'X-Auth-Token': SECRET } }) }), '/mcp/servers/0/headers/X-Auth-Token');
  t.equal(
    at({ mcp: mcp({ transport: 'stdio', env: { GITHUB_PERSONAL_ACCESS_TOKEN: SECRET } }) }),
    '/mcp/servers/0/env/GITHUB_PERSONAL_ACCESS_TOKEN',
  );
  t.equal(at({ mcp: mcp({ env: { DB_PASSWORD: 'hunter2' } }) }), '/mcp/servers/0/env/DB_PASSWORD');
  t.equal(
    at({ adapters: { telegram: { enabled: true, config: { bot_token: SECRET } } } }),
    '/adapters/telegram/config/bot_token',
  );
  t.equal(
    at({ adapters: { slack: { enabled: true, config: { botToken: SECRET } } } }),
    '/adapters/slack/config/botToken',
  );
  t.equal(at({ security: { oauth: { client_secret: SECRET } } }), '/security/oauth/client_secret');
  t.equal(at({ serving: { apiKey: SECRET } }), '/serving/apiKey');
  t.equal(at({ ws_connections: [{ url: 'wss://x', access_token: SECRET }] }), '/ws_connections/0/access_token');
  t.equal(at({ metadata: { private_key: SECRET } }), '/metadata/private_key');
  t.equal(
    at({ model: { provider: 'local', model_id: 'm', params: [{ key: 'api_key', value: SECRET }] } }),
    '/model/params/0/value',
  );

  // Names of variables, flags, placeholders and schemas are not secrets.
  t.equal(
    at({
      mcp: mcp({
        headers: { Accept: 'application/json', 'X-Client': 'agt' },
        header_env: [{ name: 'Authorization', env: 'GH_TOKEN' }],
        bearer_token_env_var: 'GH_TOKEN',
        env: { LOG_LEVEL: 'debug', API_KEY: '' },
        env_keys: ['GITHUB_TOKEN', 'OPENAI_API_KEY'],
        env_schema: [{ name: 'GITHUB_TOKEN', secret: true, required: true }],
        available_tools: [
          {
            name: 'login',
            inputSchema: { type: 'object', properties: { password: { type: 'string' }, token: { type: 'string' } } },
          },
        ],
      }),
      adapters: {
        telegram: { enabled: true, config: { chat_id: '42', bot_token_env: 'TG_TOKEN', require_password: true } },
      },
      model: { provider: 'local', model_id: 'm', max_tokens: 100, params: [{ key: 'top_k', value: '5' }] },
      limits: { max_tokens_per_turn: 1000 },
      instructions: 'Never print your api_key or token.',
    }),
    null,
  );
});

/**
 * One daemon for the file; its provider `local` (the agents' default) is the tool driver, a fake model that
 * makes an agent call the tool a test names. Only the providers extension: the mcp one adds a rule of its
 * own (an agent names no variables for a server the owner did not register) that would hide the kernel's.
 */
const PROVIDERS = { name: 'providers', module: join(ROOT, 'extensions/providers/index.ts'), enabled: true, config: {} };
let shared: Promise<{ d: SpawnedDaemon; driver: ToolDriver }> | undefined;
const daemon = () =>
  (shared ??= startToolDriver(t, undefined, 'local').then(async (driver) => ({
    driver,
    d: await runDaemon(t, { extensions: { extensions: [PROVIDERS] }, settings: { providers: [driver.provider] } }),
  })));

t.test("config PUT and the agent's config tool refuse secrets, naming the path; env-var names pass", async (t) => {
  const h = await daemon();
  const d = h.d;
  const path = await createAgentFile(tempDir(t), {
    name: 'keyless',
    tools: [{ name: 'sys_update_config', enabled: true }],
  });
  const { body: ref } = await d.request('POST', '/agents/load', { filePath: path });
  const id = ref.id as string;
  const put = (patch: Record<string, unknown>) => d.request('PUT', `/agents/${id}/config`, { ...ref.config, ...patch });

  const header = await put({ mcp: mcp({ headers: { Authorization: `Bearer ${SECRET}` } }) });
  t.same(
    [header.status, header.body.code, header.body.path],
    [400, 'bad_request', '/mcp/servers/0/headers/Authorization'],
  );
  t.match(header.body.error, /\/mcp\/servers\/0\/headers\/Authorization.*header_env.*bearer_token_env_var/);
  t.notMatch(JSON.stringify(header.body), SECRET, 'the refusal does not echo the value');

  const env = await put({ mcp: mcp({ transport: 'stdio', command: 'srv', env: { API_KEY: SECRET } }) });
  t.same([env.status, env.body.path], [400, '/mcp/servers/0/env/API_KEY']);
  t.match(env.body.error, /env_keys/);

  const adapter = await put({ adapters: { telegram: { enabled: true, config: { bot_token: SECRET } } } });
  t.same([adapter.status, adapter.body.path], [400, '/adapters/telegram/config/bot_token']);
  t.match(adapter.body.error, /credential/);

  const allowed = {
    mcp: mcp({
      header_env: [{ name: 'Authorization', env: 'GH_TOKEN' }],
      bearer_token_env_var: 'GH_TOKEN',
      env_keys: ['GITHUB_TOKEN'],
      env: { LOG_LEVEL: 'debug' },
    }),
    adapters: { telegram: { enabled: true, config: { chat_id: '42', bot_token_env: 'TG_TOKEN' } } },
  };
  const allowedPut = await put(allowed);
  t.equal(allowedPut.status, 200, `names of variables are fine: ${JSON.stringify(allowedPut.body)}`);
  const stored = (await d.request('GET', `/agents/${id}/config`)).body.config;
  t.same(stored.mcp, allowed.mcp);
  t.notMatch(JSON.stringify(stored), SECRET, 'no refused value was persisted');

  // The agent's own config tool (adapters are owner-locked for it: a field it may change).
  const result = await h.driver.run(d, id, 'sys_update_config', { patch: { metadata: { private_key: SECRET } } });
  t.match(result, /^Error: /, 'the tool refuses');
  t.match(result, '/metadata/private_key');
  t.notMatch(result, SECRET, 'the refusal does not echo the value');
  const after = (await d.request('GET', `/agents/${id}/config`)).body.config;
  t.same(after, stored, 'the config is unchanged');
  t.notMatch(JSON.stringify(after), SECRET, 'nothing reached the file');
});

t.test('a file whose config holds a secret is refused at load with 422 secret_in_config', async (t) => {
  const { d } = await daemon();
  const path = await createAgentFile(tempDir(t), {
    name: 'leaky',
    mcp: mcp({ headers: { Authorization: `Bearer ${SECRET}` } }) as AgentConfig['mcp'],
  });
  const res = await d.request('POST', '/agents/load', { filePath: path });
  t.same(
    [res.status, res.body.code, res.body.reason, res.body.path],
    [422, 'load_failed', 'secret_in_config', '/mcp/servers/0/headers/Authorization'],
  );
  t.match(res.body.error, /header_env/);
  t.notMatch(JSON.stringify(res.body), SECRET);
  t.notOk(
    (await d.request('GET', '/agents')).body.some((agent: { name: string }) => agent.name === 'leaky'),
    'nothing loaded',
  );
});
