/**
 * `@agt/contracts/testing`: startTestExtension with the shipped providers extension and with a small
 * extension that uses its whole context (test/fixtures/extensions/probe); the harness answers as the
 * real daemon does (same requests to both, same answers); startTestDaemon.
 */
import { offer, startTestDaemon, startTestExtension, type TestResponse } from '@agt/contracts/testing';
import t from 'tap';
import { join } from 'node:path';
import providers from '../extensions/providers/index.js';
import probe, { probeClock, probeGreeters } from './fixtures/extensions/probe/index.js';
import { builtTwin } from '../kernel/extensions/typescript.js';
import { ROOT } from './helpers/daemon.js';

// The fixture's module as the daemon would be given it: its TypeScript, or its built twin in the test build.
const PROBE_MODULE = builtTwin(join(ROOT, 'test/fixtures/extensions/probe/index.ts'));

t.test('providers: its routes under /providers and /agents/:id/providers, its model clients recorded', async (t) => {
  const ext = await startTestExtension(providers, {
    settings: { providers: [{ id: 'local', type: 'openai-compatible', name: 'Local', baseUrl: 'http://127.0.0.1:9' }] },
    agents: [{ id: 'a1', name: 'scout' }],
  });
  t.teardown(ext.stop);
  t.equal(ext.state, 'started');
  const list = await ext.request('GET', '/providers');
  t.equal(list.status, 200);
  t.match(list.body, { providers: [{ id: 'local', type: 'openai-compatible' }] });
  t.equal((await ext.request('GET', '/agents/a1/providers')).status, 200);
  t.equal(ext.contributions.modelClients.length, 1, 'offers model clients');
  const unknown = await ext.request('GET', '/providers/local/nothing/here');
  t.equal(unknown.status, 404);
  t.equal(unknown.body.code, 'not_found');

  ext.settings.set({ providers: [] });
  t.same((await ext.request('GET', '/providers')).body.providers, [], 'reads the settings the test changed');
});

t.test('probe: every member of the context, faked and recorded', async (t) => {
  const clock = { now: () => 42 };
  const ext = await startTestExtension(probe, {
    config: { useClock: true },
    agents: [{ id: 'a1', name: 'scout' }],
    env: { PROBE_HOME: '/home/probe', AGT_DAEMON_TOKEN: 'secret' },
    uses: [offer(probeClock, clock)],
  });
  t.teardown(ext.stop);

  ext.emit('agent.loaded', { agentId: 'a1', payload: { name: 'scout', filePath: null } });
  t.same(
    (await ext.request('POST', '/probe/emit')).body,
    { seq: 2, source: 'ext:probe' },
    'its events carry source ext:<name>',
  );
  ext.settings.set({ trackedFolders: ['/tmp'] });
  t.same(
    (await ext.request('GET', '/probe')).body,
    {
      word: 'hi',
      seen: ['agent.loaded:kernel', 'agent.said:ext:probe'],
      changes: 1,
      now: 42,
      home: '/home/probe',
      token: null,
    },
    'config defaults, bus, settings, ctx.use, env without AGT_*',
  );
  t.same(
    ext.events.map((e) => e.event_type),
    ['agent.loaded', 'agent.said'],
  );

  t.same((await ext.request('POST', '/probe/deliver/a1')).body, { messageId: 1 });
  t.same(ext.deliveries, [{ agentId: 'a1', message: { source: 'probe', text: 'knock knock' }, messageId: 1 }]);
  t.same(ext.agentLogs, [{ agentId: 'a1', level: 'info', message: 'probe delivers' }]);
  const nobody = await ext.request('POST', '/probe/deliver/nobody');
  t.equal(nobody.status, 404, 'the inbox refuses an agent that is not loaded');

  t.same((await ext.request('GET', '/agents/a1/probe')).body, { id: 'a1', name: 'scout' });
  t.same(
    (await ext.request('GET', '/agents/a1/probe/nested')).body,
    { nested: true },
    'a plugin registered on agentHttp',
  );
  t.equal(ext.offered(probeGreeters)[0]!.greet('you'), 'hi, you');
  t.equal(ext.contributions.tools.length, 1);
  t.equal(ext.contributions.lifecycle.length, 1);
  t.throws(
    () => ext.context.provide(probeGreeters, { greet: () => '' }),
    /after register/,
    'provide only during register',
  );

  await ext.stop();
  t.equal(ext.state, 'stopped');
  ext.emit('agent.unloaded', { agentId: 'a1', payload: { name: 'scout', reason: 'test' } });
  t.equal(ext.events.length, 3, 'subscriptions end at stop (nothing throws)');
});

t.test('probe: what fails it, and its 503', async (t) => {
  const cases: Array<[string, Parameters<typeof startTestExtension>[1], RegExp]> = [
    ['register throws', { config: { failIn: 'register' } }, /^register failed: probe was told to fail in register/],
    ['start throws', { config: { failIn: 'start' } }, /^start failed: probe was told to fail in start/],
    ['invalid config', { config: { word: 3 } }, /^invalid config: \/word: /],
    [
      'a point no dependency offers',
      { config: { useClock: true } },
      /uses extension point probe\.clock, which no loaded extension provides/,
    ],
  ];
  for (const [what, options, reason] of cases) {
    const ext = await startTestExtension(probe, options);
    t.teardown(ext.stop);
    t.equal(ext.state, 'failed', what);
    t.match(ext.error, reason);
    for (const path of ['/probe', '/probe/anything', '/agents/a1/probe']) {
      const res = await ext.request('GET', path);
      t.equal(res.status, 503, `${what}: GET ${path}`);
      t.match(res.body, {
        code: 'unavailable',
        extension: 'probe',
        error: `extension probe is failed: ${ext.error}; its routes are unavailable`,
      });
    }
  }
  const newer = await startTestExtension({ ...probe, contract: '1.99' });
  t.teardown(newer.stop);
  t.match(newer.error, /needs kernel contract 1\.99/);

  const stopFails = await startTestExtension(probe, { config: { failIn: 'stop' } });
  await t.rejects(stopFails.stop(), /told to fail in stop/, 'stop() rejects with what the extension threw');
  t.equal(stopFails.state, 'stopped');
});

t.test('the harness answers as the daemon does', async (t) => {
  const requests: Array<[string, string, unknown?]> = [
    ['GET', '/probe/coded/not_found'],
    ['GET', '/probe/coded/conflict'],
    ['GET', '/probe/coded/teapot'],
    ['GET', '/probe/coded/plain'],
    ['POST', '/probe/echo', { count: 2 }],
    ['POST', '/probe/echo?times=3', { count: 1, label: 'x', extra: true }],
    ['POST', '/probe/echo', { count: '2' }],
    ['POST', '/probe/echo', { count: -1 }],
    ['POST', '/probe/echo?times=2', { count: 1 }],
    ['POST', '/probe/echo', '{"count": '],
    ['GET', '/probe/no/such/route'],
    ['DELETE', '/probe'],
    ['GET', '/agents/nobody/probe'],
  ];
  const daemon = await startTestDaemon({ extensions: [PROBE_MODULE] });
  t.teardown(daemon.stop);
  const ext = await startTestExtension(probe);
  t.teardown(ext.stop);
  const shape = (res: TestResponse) => ({ status: res.status, body: res.body });
  for (const [method, path, body] of requests) {
    t.same(
      shape(await ext.request(method, path, body)),
      shape(await daemon.request(method, path, body)),
      `${method} ${path} ${body === undefined ? '' : JSON.stringify(body)}`,
    );
  }

  const failedDaemon = await startTestDaemon({ extensions: [{ module: PROBE_MODULE, config: { failIn: 'start' } }] });
  t.teardown(failedDaemon.stop);
  const failedExt = await startTestExtension(probe, { config: { failIn: 'start' } });
  t.teardown(failedExt.stop);
  for (const path of ['/probe', '/probe/x', '/agents/a1/probe']) {
    t.same(
      shape(await failedExt.request('GET', path)),
      shape(await failedDaemon.request('GET', path)),
      `failed: GET ${path}`,
    );
  }
});

t.test('startTestDaemon: the real daemon with the given modules, its token, a clean stop', async (t) => {
  const daemon = await startTestDaemon({
    extensions: [
      { module: PROBE_MODULE, config: { word: 'yo' } },
      { module: PROBE_MODULE.replace('/probe/', '/hello/'), enabled: false },
    ],
  });
  t.match((await daemon.request('GET', '/runtime/extensions')).body.extensions, [
    { name: 'probe', state: 'started', error: null },
    { name: 'hello', state: 'disabled' },
  ]);
  t.equal((await daemon.request('GET', '/probe')).body.word, 'yo');
  t.equal((await daemon.request('GET', '/hello')).status, 503);
  t.equal((await fetch(`${daemon.url}/probe`)).status, 401, 'the token is needed');
  await daemon.stop();
  await t.rejects(fetch(`${daemon.url}/health`), 'closed');
});
