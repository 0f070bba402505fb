/**
 * How a model call finds its provider (the contributed ModelClientProvider) and the agent-scoped
 * routes with sealed keys, using the extension on a real server with fake kernel services: the
 * agent's own declarations first, then app providers; agent keys from `provider:<id>` credentials;
 * an app key never sent to an agent-declared endpoint; settings changes; stop ends running calls.
 */
import t from 'tap';
import type { ModelResolveContext } from '../contracts/model.js';
import { reply, startFakeOpenAI } from './fakes/openai.js';
import { bootProviders, makeRequest } from './fakes/providers-harness.js';

const APP_KEY = 'sk-app-key-111111111111';
const AGENT_KEY = 'sk-agent-key-22222222222';
process.env.TEST_APP_KEY_AGT = APP_KEY;
t.teardown(() => void delete process.env.TEST_APP_KEY_AGT);

const context = (
  providers: ModelResolveContext['agentProviders'],
  credentials: Record<string, string> = {},
): ModelResolveContext => ({
  agentId: 'a1',
  agentProviders: providers,
  readCredential: async (name) => credentials[name],
});

t.test('app providers resolve with their env key; unknown ids do not', async (t) => {
  const fake = await startFakeOpenAI(t, [reply.text('from app')]);
  const ext = await bootProviders(t, {
    settings: {
      providers: [{ id: 'app', type: 'openai', name: 'App', baseUrl: fake.baseUrl, apiKeyEnv: 'TEST_APP_KEY_AGT' }],
    },
  });
  t.equal(ext.clients.length, 1, 'one ModelClientProvider contributed');
  const client = await ext.clients[0]!.resolve('app', context([]));
  t.ok(client);
  t.equal((await client!.complete(makeRequest())).text, 'from app');
  t.equal(fake.chatRequests()[0]!.headers.authorization, `Bearer ${APP_KEY}`);
  t.equal(await ext.clients[0]!.resolve('nobody', context([])), undefined);
});

t.test("the agent's own declaration wins, with its sealed key; the app key never goes to it", async (t) => {
  const appServer = await startFakeOpenAI(t, () => reply.text('app'));
  const agentServer = await startFakeOpenAI(t, () => reply.text('agent'));
  const ext = await bootProviders(t, {
    settings: {
      providers: [
        { id: 'shared', type: 'openai', name: 'App', baseUrl: appServer.baseUrl, apiKeyEnv: 'TEST_APP_KEY_AGT' },
      ],
    },
  });
  const declared = [
    { id: 'shared', type: 'openai', name: 'Mine', baseUrl: agentServer.baseUrl, params: [{ key: 'seed', value: '9' }] },
  ];
  const withKey = await ext.clients[0]!.resolve('shared', context(declared, { 'provider:shared': AGENT_KEY }));
  t.equal((await withKey!.complete(makeRequest())).text, 'agent');
  t.equal(agentServer.chatRequests()[0]!.headers.authorization, `Bearer ${AGENT_KEY}`);
  t.equal(agentServer.chatRequests()[0]!.body.seed, 9, "the declaration's params apply");
  const withoutKey = await ext.clients[0]!.resolve('shared', context(declared));
  await withoutKey!.complete(makeRequest());
  t.equal(agentServer.chatRequests()[1]!.headers.authorization, undefined, 'no app key fallback');
  t.equal(appServer.requests.length, 0);
});

t.test('a settings change applies to the next resolve', async (t) => {
  const fake = await startFakeOpenAI(t, () => reply.text('ok'));
  const ext = await bootProviders(t, { settings: { providers: [] } });
  t.equal(await ext.clients[0]!.resolve('later', context([])), undefined);
  ext.setSettings({
    providers: [
      { id: 'later', type: 'openai-compatible', name: 'Later', baseUrl: fake.baseUrl, apiKeyEnv: 'TEST_APP_KEY_AGT' },
    ],
  });
  await (await ext.clients[0]!.resolve('later', context([])))!.complete(makeRequest());
  t.equal(fake.chatRequests()[0]!.headers.authorization, `Bearer ${APP_KEY}`);
});

t.test('agent routes: keyPresent from the sealed credential; check and models use it; no key in answers', async (t) => {
  const fake = await startFakeOpenAI(t, [], { expectKey: AGENT_KEY });
  const ext = await bootProviders(t, {
    agents: [
      {
        id: 'a1',
        name: 'alpha',
        providers: [{ id: 'custom:p', type: 'openai-compatible', name: 'P', baseUrl: fake.baseUrl }],
        credentials: { 'provider:custom:p': AGENT_KEY },
      },
      { id: 'a2', providers: [{ id: 'custom:p', type: 'openai-compatible', name: 'P', baseUrl: fake.baseUrl }] },
    ],
  });
  const list = await ext.request('GET', '/agents/alpha/providers');
  t.match(list.body, {
    agentId: 'a1',
    providers: [{ id: 'custom:p', keyPresent: true, credential: 'provider:custom:p' }],
  });
  t.match((await ext.request('GET', '/agents/a2/providers')).body.providers, [{ keyPresent: false }]);
  t.match((await ext.request('POST', '/agents/a1/providers/custom:p/check')).body, { ok: true, method: 'models' });
  t.match((await ext.request('POST', '/agents/a2/providers/custom:p/check')).body, { ok: false, status: 401 });
  const models = await ext.request('GET', '/agents/a1/providers/custom:p/models');
  t.match(models.body, { provider: 'custom:p', models: [{ id: 'fake-model' }, { id: 'fake-model-large' }] });
  t.equal((await ext.request('GET', '/agents/zzz/providers')).status, 404);
  for (const text of [list.text, models.text, ...ext.logs]) t.notOk(text.includes(AGENT_KEY), 'no key');
});

t.test('stopping the extension ends a running call and closes its request', async (t) => {
  const fake = await startFakeOpenAI(t, [reply.stall()]);
  const ext = await bootProviders(t, {
    settings: { providers: [{ id: 's', type: 'openai-compatible', name: 'S', baseUrl: fake.baseUrl }] },
  });
  const pending = (await ext.clients[0]!.resolve('s', context([])))!.complete(makeRequest());
  while (fake.chatRequests().length < 1) await new Promise((r) => setTimeout(r, 10));
  await ext.hooks?.stop?.();
  await t.rejects(pending, { code: 'unavailable' });
  await fake.chatRequests()[0]!.done;
  t.equal(fake.chatRequests()[0]!.clientAborted, true);
});
