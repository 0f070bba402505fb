/**
 * The providers routes in a real daemon loading the extension from a manifest: listing with key
 * presence and status, read one, check (models list, 1-token completion fallback, failures), models,
 * the agent-scoped list, settings changes applied without restart, and keys absent from every
 * response and from the daemon's debug log. Built daemons: one serves the file, a second logs at debug.
 */
import t, { type Test } from 'tap';
import { join } from 'node:path';
import { createAgentFile } from './helpers/agent-file.js';
import { ROOT, runDaemon, tempDir } from './helpers/daemon.js';
import { startFakeAnthropic } from './fakes/anthropic.js';
import { reply, startFakeOpenAI } from './fakes/openai.js';

const KEY = 'sk-route-test-KEY-987654321';
const ENV = 'TEST_PROVIDER_KEY_AGT';
const MODULE = join(ROOT, 'extensions/providers/index.ts');
const CONFIG = { retryBaseMs: 10, retryMaxMs: 50, checkTimeoutMs: 2_000, timeoutMs: 5_000, idleTimeoutMs: 2_000 };
const manifest = { extensions: [{ name: 'providers', module: MODULE, enabled: true, config: CONFIG }] };

const noKeyIn = (t: Test, text: string, where: string) =>
  t.notOk(text.includes(KEY) || text.includes(KEY.slice(3, 18)), `no key in ${where}`);

// The upstreams of the shared daemon's providers.
const openai = await startFakeOpenAI(t, [], { expectKey: KEY, models: ['gpt-4o', 'gpt-4o-mini'] });
const anthropic = await startFakeAnthropic(t, [], { expectKey: KEY });
const bare = await startFakeOpenAI(t, [reply.text('p')], { models: null });
const broken = await startFakeOpenAI(t, [], { modelsStatus: 500 });
const { createServer } = await import('node:http');
const silent = createServer(() => {}); // accepts, never answers
await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
t.teardown(() => {
  silent.closeAllConnections();
  return new Promise<void>((resolve) => silent.close(() => resolve()));
});
const silentPort = (silent.address() as { port: number }).port;

const d = await runDaemon(t, {
  extensions: manifest,
  env: { [ENV]: KEY },
  settings: {
    providers: [
      { id: 'oa', type: 'openai', name: 'OpenAI', baseUrl: openai.baseUrl, defaultModel: 'gpt-4o', apiKeyEnv: ENV },
      {
        id: 'an',
        type: 'anthropic',
        name: 'Anthropic',
        baseUrl: anthropic.baseUrl,
        apiKeyEnv: ENV,
        requestDelayMs: 100,
      },
      { id: 'nokey', type: 'openrouter', name: 'OpenRouter', baseUrl: openai.baseUrl, apiKeyEnv: 'TEST_UNSET_VAR_AGT' },
      { id: 'local', type: 'openai-compatible', name: 'Local', baseUrl: openai.baseUrl },
      { id: 'bare', type: 'openai-compatible', name: 'Bare', baseUrl: bare.baseUrl, defaultModel: 'tiny' },
      { id: 'broken', type: 'openai-compatible', name: 'Broken', baseUrl: broken.baseUrl },
      { id: 'gone', type: 'openai-compatible', name: 'Gone', baseUrl: 'http://127.0.0.1:9/v1' },
      { id: 'slow', type: 'openai-compatible', name: 'Slow', baseUrl: `http://127.0.0.1:${silentPort}/v1` },
    ],
  },
});
const FIRST = ['oa', 'an', 'nokey', 'local'];
const first = (providers: any[]) => providers.filter((p) => FIRST.includes(p.id));

t.test('list, read, check and models of app providers', async (t) => {
  const list = await d.request('GET', '/providers');
  t.equal(list.status, 200);
  t.same(
    list.body.providers.map((p: any) => p.id),
    [...FIRST, 'bare', 'broken', 'gone', 'slow'],
    'in settings order',
  );
  t.same(
    first(list.body.providers).map((p: any) => [p.id, p.keyPresent, p.status]),
    [
      ['oa', true, 'unchecked'],
      ['an', true, 'unchecked'],
      ['nokey', false, 'missing_key'],
      ['local', false, 'unchecked'],
    ],
  );
  t.same(list.body.providers[1], {
    id: 'an',
    type: 'anthropic',
    name: 'Anthropic',
    baseUrl: anthropic.baseUrl,
    defaultModel: null,
    apiKeyEnv: ENV,
    keyPresent: true,
    requestDelayMs: 100,
    status: 'unchecked',
    lastCheck: null,
  });
  t.equal(openai.requests.length + anthropic.requests.length, 0, 'listing calls no provider');

  const one = await d.request('GET', '/providers/oa');
  t.match(one.body, { id: 'oa', type: 'openai', defaultModel: 'gpt-4o', keyPresent: true });
  t.match(await d.request('GET', '/providers/nope'), { status: 404, body: { code: 'not_found' } });

  const check = await d.request('POST', '/providers/oa/check');
  t.equal(check.status, 200);
  t.match(check.body, { ok: true, status: 200, method: 'models' });
  t.type(check.body.latencyMs, 'number');
  t.equal(openai.requests[0]!.headers.authorization, `Bearer ${KEY}`, 'the key from apiKeyEnv is sent');
  t.match((await d.request('GET', '/providers/oa')).body, { status: 'reachable', lastCheck: { ok: true } });

  const models = await d.request('GET', '/providers/oa/models');
  t.same(models.body, {
    provider: 'oa',
    models: [
      { id: 'gpt-4o', ownedBy: 'fake', created: 1_700_000_000_000 },
      { id: 'gpt-4o-mini', ownedBy: 'fake', created: 1_700_000_000_000 },
    ],
  });
  const claude = await d.request('GET', '/providers/an/models');
  t.same(
    claude.body.models.map((m: any) => [m.id, m.name]),
    [
      ['claude-fake-1', 'CLAUDE-FAKE-1'],
      ['claude-fake-2', 'CLAUDE-FAKE-2'],
    ],
  );
  t.equal(anthropic.requests[0]!.headers['x-api-key'], KEY);
  t.equal(anthropic.requests[0]!.path, '/v1/models');

  const failed = await d.request('POST', '/providers/local/check');
  t.match(failed.body, { ok: false, status: 401, method: 'models', error: /401/ });
  t.match(first((await d.request('GET', '/providers')).body.providers)[3], {
    status: 'unreachable',
    lastCheck: { ok: false, status: 401 },
  });
  for (const response of [list, one, check, models, claude, failed])
    noKeyIn(t, JSON.stringify(response.body), 'a response');
});

t.test('check falls back to a 1-token completion where there is no models route; upstream failures', async (t) => {
  const check = await d.request('POST', '/providers/bare/check');
  t.match(check.body, { ok: true, status: 200, method: 'completion' });
  t.match(bare.chatRequests()[0]!.body, { model: 'tiny', max_tokens: 1 });

  const models = await d.request('GET', '/providers/broken/models');
  t.equal(models.status, 502);
  t.match(models.body, { code: 'upstream_error', upstreamStatus: 500, provider: 'broken' });
  t.equal(broken.requests.length, 1, 'admin calls are not retried');

  const gone = await d.request('POST', '/providers/gone/check');
  t.match(gone.body, { ok: false, status: null, error: /cannot reach/ });
});

t.test('settings changes apply without a restart', async (t) => {
  const fake = await startFakeOpenAI(t);
  const before = (await d.request('GET', '/settings')).body.providers as unknown[];
  t.notOk(((await d.request('GET', '/providers')).body.providers as any[]).some((p) => p.id === 'late'));
  const patch = await d.request('PATCH', '/settings', {
    providers: [
      ...before,
      { id: 'late', type: 'openai-compatible', name: 'Late', baseUrl: fake.baseUrl, apiKeyEnv: ENV },
    ],
  });
  t.equal(patch.status, 200);
  t.match(((await d.request('GET', '/providers')).body.providers as any[]).at(-1), { id: 'late', keyPresent: true });
  t.equal((await d.request('POST', '/providers/late/check')).body.ok, true);
  t.equal(fake.requests[0]!.headers.authorization, `Bearer ${KEY}`);
});

t.test("agent routes list an agent's own providers; unknown agent 404", async (t) => {
  const path = await createAgentFile(tempDir(t), {
    name: 'prov-agent',
    providers: [
      {
        id: 'custom:mine',
        type: 'openai-compatible',
        name: 'Mine',
        baseUrl: 'http://127.0.0.1:9/v1',
        defaultModel: 'm',
        requestDelayMs: 50,
      },
      { id: 'anthropic', type: 'anthropic', name: 'Claude', baseUrl: 'https://api.anthropic.com' },
    ],
  });
  t.equal((await d.request('POST', '/agents/load', { filePath: path })).status, 200);
  const list = await d.request('GET', '/agents/prov-agent/providers');
  t.equal(list.status, 200);
  t.match(list.body.providers, [
    {
      id: 'custom:mine',
      type: 'openai-compatible',
      defaultModel: 'm',
      requestDelayMs: 50,
      preset: null,
      credential: 'provider:custom:mine',
      keyPresent: false,
    },
    { id: 'anthropic', credential: 'provider:anthropic', keyPresent: false },
  ]);
  t.match(await d.request('GET', '/agents/nobody/providers'), { status: 404, body: { code: 'not_found' } });
  t.match(await d.request('POST', '/agents/prov-agent/providers/nope/check'), { status: 404 });
  t.match((await d.request('POST', '/agents/prov-agent/providers/custom:mine/check')).body, {
    ok: false,
    status: null,
  });
});

t.test('the key never reaches the daemon log (spawned daemon, debug level)', async (t) => {
  const fake = await startFakeOpenAI(t, [], { expectKey: 'something-else' });
  const providers = [{ id: 'p', type: 'openai', name: 'P', baseUrl: fake.baseUrl, apiKeyEnv: ENV }];
  const child = await runDaemon(t, {
    extensions: manifest,
    settings: { providers },
    env: { [ENV]: KEY, AGT_LOG_LEVEL: 'debug' },
  });
  t.ok(child.url, 'daemon started');
  const call = (method: string, path: string) =>
    fetch(child.url + path, { method, headers: { authorization: `Bearer ${child.token}` } });
  const models = await call('GET', '/providers/p/models');
  t.equal(models.status, 502);
  noKeyIn(t, await models.text(), 'the 502 body');
  const check = await call('POST', '/providers/p/check');
  noKeyIn(t, await check.text(), 'the check body');
  t.equal(fake.requests[0]!.headers.authorization, `Bearer ${KEY}`, 'the key was used');
  t.equal(await child.stop(), 0);
  t.match(child.stderr(), /upstream_error|request failed/, 'the failure was logged');
  noKeyIn(t, child.stderr() + child.stdout(), 'the daemon log');
});

t.test('a models list that times out (checkTimeoutMs) is a 502 upstream_error, not a new status', async (t) => {
  const res = await d.request('GET', '/providers/slow/models');
  t.equal(res.status, 502);
  t.equal(res.body.code, 'upstream_error');
  t.equal(res.body.reason, 'timeout');
});
