/**
 * The extension loader against the fixture extensions: what loads, what fails and why
 * (`GET /runtime/extensions`), the 503 bodies of failed extensions, withdrawn contributions, and the
 * OpenAPI document including extension routes. One built daemon serves the whole file (two shared cores).
 */
import t, { type Test } from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAgentFile } from './helpers/agent-file.js';
import { ROOT, runDaemon, tempDir, type DaemonClient } from './helpers/daemon.js';
import { daemonStarted } from './helpers/daemon-started.js';

const FIXTURES = join(ROOT, 'test/fixtures/extensions');
const fixture = (name: string) => join(FIXTURES, name, 'index.ts');

t.test('fixture extensions', async (t) => {
  const recordFile = join(tempDir(t), 'calls.log');
  const d: DaemonClient = await runDaemon(t, {
    extensions: {
      extensions: [
        // needs-hello comes first on purpose: dependency order must still put hello before it.
        { name: 'needs-hello', module: fixture('needs-hello'), config: { recordFile } },
        { name: 'hello', module: fixture('hello'), config: { recordFile } },
        { name: 'contributes-only', module: fixture('contributes-only') },
        { name: 'throws-on-load', module: fixture('throws-on-load') },
        { name: 'throws-in-plugin', module: fixture('throws-in-plugin') },
        { name: 'throws-on-start', module: fixture('throws-on-start') },
        { name: 'missing-dep', module: fixture('missing-dep') },
        { name: 'cycle-a', module: fixture('cycle-a') },
        { name: 'cycle-b', module: fixture('cycle-b') },
        { name: 'bad-contract', module: fixture('bad-contract') },
        { name: 'not-importable', module: './does/not/exist.js', prefix: '/not-importable' },
        { name: 'throws-on-import', module: fixture('throws-on-import'), prefix: '/throws-on-import' },
        { name: 'misnamed', module: fixture('hello'), prefix: '/misnamed' },
      ],
    },
  });
  // Extensions start after the listening line: their states are final once the daemon says it started.
  await daemonStarted(t, d);
  const { body } = await d.request('GET', '/runtime/extensions');
  const rows = new Map<string, any>(body.extensions.map((row: any) => [row.name, row]));

  t.test('a working extension serves its prefix, a validated POST and its agent routes', async (t) => {
    t.match(rows.get('hello'), {
      name: 'hello',
      version: '1.2.3',
      enabled: true,
      loaded: true,
      error: null,
      prefix: '/hello',
      dependsOn: [],
      state: 'started',
      agentRoutes: 'hello',
    });
    t.match(rows.get('needs-hello'), { loaded: true, error: null, dependsOn: ['hello'] });
    const created = await d.request('POST', '/hello/greetings', { text: 'hey' });
    t.equal(created.status, 201);
    t.same(created.body, { id: 1, text: 'hey' });
    const listed = await d.request('GET', '/hello');
    t.same(listed.body, { greeting: 'hi', greetings: [{ id: 1, text: 'hey' }] }, 'config default applied');
    const invalid = await d.request('POST', '/hello/greetings', { text: '' });
    t.equal(invalid.status, 400);
    t.equal(invalid.body.code, 'bad_request');
    t.same((await d.request('GET', '/hello/agents/x')).status, 404, 'unknown path of a live extension is a 404');
    t.same((await d.request('GET', '/agents/a1/hello')).body, { agentId: 'a1', greeting: 'hi' });
    t.same(
      (await d.request('GET', '/agents/a1/hello/greetings')).body,
      { agentId: 'a1', count: 1 },
      'plugin registered on agentHttp',
    );
    t.match(rows.get('contributes-only'), { loaded: true, prefix: null, error: null }, 'an extension without a prefix');
  });

  t.test("contributions of a working extension are live; a failed one's are withdrawn", async (t) => {
    const path = await createAgentFile(tempDir(t), { name: 'toolbox' });
    const id = (await d.request('POST', '/agents/load', { filePath: path })).body.id as string;
    const tools = (await d.request('GET', `/agents/${id}/tools`)).body.tools as Array<{ name: string; source: string }>;
    t.same(
      tools
        .filter((tool) => tool.source.startsWith('ext:'))
        .map((tool) => tool.name)
        .sort(),
      ['hello_say', 'quiet_tool'],
      "throws-on-load's tool is gone",
    );
    t.notMatch(readFileSync(recordFile, 'utf8'), /^hello:agent-started$/m, 'loading is not starting');
    t.equal((await d.request('POST', `/agents/${id}/start`)).status, 200);
    t.match(readFileSync(recordFile, 'utf8'), /^hello:agent-started$/m, 'lifecycle hook contributed');
  });

  const expectUnavailable = async (t: Test, name: string, reason: RegExp, paths: string[]) => {
    for (const path of paths) {
      const res = await d.request('GET', path);
      t.equal(res.status, 503, `${path} answers 503`);
      t.equal(res.body.code, 'unavailable');
      t.match(res.body.error, new RegExp(`extension ${name} is ${reason.source}`));
    }
  };

  t.test('register throwing fails the extension, even after it declared routes', async (t) => {
    t.match(rows.get('throws-on-load'), {
      loaded: false,
      enabled: true,
      state: 'failed',
      error: /register failed: boom in register/,
    });
    await expectUnavailable(t, 'throws-on-load', /failed: register failed: boom in register/, [
      '/throws-on-load',
      '/throws-on-load/x/y',
    ]);
  });

  t.test('a nested plugin throwing fails only its extension', async (t) => {
    t.match(rows.get('throws-in-plugin'), { loaded: false, error: /boom in a nested plugin/ });
    await expectUnavailable(t, 'throws-in-plugin', /failed: /, ['/throws-in-plugin', '/throws-in-plugin/inner']);
  });

  t.test('start throwing fails the extension after it loaded', async (t) => {
    t.match(rows.get('throws-on-start'), { loaded: false, state: 'failed', error: 'start failed: boom in start' });
    await expectUnavailable(t, 'throws-on-start', /failed: start failed: boom in start/, ['/throws-on-start']);
  });

  t.test('missing dependencies are all named in one error', async (t) => {
    t.match(rows.get('missing-dep'), {
      loaded: false,
      dependsOn: ['nope', 'also-nope'],
      error: 'missing dependencies: nope (not in the manifest), also-nope (not in the manifest)',
    });
    await expectUnavailable(t, 'missing-dep', /failed: missing dependencies/, ['/missing-dep']);
  });

  t.test('every member of a cycle fails naming the cycle', async (t) => {
    t.match(rows.get('cycle-a'), { loaded: false, error: 'dependency cycle: cycle-a -> cycle-b -> cycle-a' });
    t.match(rows.get('cycle-b'), { loaded: false, error: 'dependency cycle: cycle-a -> cycle-b -> cycle-a' });
    await expectUnavailable(t, 'cycle-b', /failed: dependency cycle/, ['/cycle-b/anything']);
  });

  t.test('a newer contract major is refused', async (t) => {
    t.match(rows.get('bad-contract'), {
      loaded: false,
      version: null,
      errorCode: 'contract_incompatible',
      error: /needs kernel contract 2\.0, but this kernel implements 1\.0/,
    });
    await expectUnavailable(t, 'bad-contract', /failed: needs kernel contract 2\.0/, ['/bad-contract']);
  });

  t.test("a module that cannot be imported uses the manifest's fallback prefix", async (t) => {
    t.match(rows.get('not-importable'), {
      loaded: false,
      prefix: '/not-importable',
      error: /cannot resolve module "\.\/does\/not\/exist\.js": .*exist\.js does not exist/,
    });
    await expectUnavailable(t, 'not-importable', /failed: cannot resolve module/, ['/not-importable']);
    t.match(rows.get('throws-on-import'), {
      loaded: false,
      error: /cannot import module ".*throws-on-import\/index\.ts": boom at import/,
    });
    await expectUnavailable(t, 'throws-on-import', /failed: cannot import module/, ['/throws-on-import/x']);
  });

  t.test('definition name and manifest name must agree', async (t) => {
    t.match(rows.get('misnamed'), {
      loaded: false,
      error: /defines extension "hello", but the manifest entry is named "misnamed"/,
    });
    await expectUnavailable(t, 'misnamed', /failed: the module defines/, ['/misnamed']);
  });

  t.test('the OpenAPI document holds the extension routes, not the 503 stubs', async (t) => {
    const doc = (await d.request('GET', '/openapi.json')).body;
    t.ok(doc.paths['/hello/'] ?? doc.paths['/hello'], 'GET /hello');
    t.ok(doc.paths['/hello/greetings']?.post?.requestBody, 'POST /hello/greetings with its body schema');
    t.same(doc.paths['/hello/greetings'].post.tags, ['Hello']);
    t.ok(doc.paths['/agents/{id}/hello/'] ?? doc.paths['/agents/{id}/hello'], 'agent-scoped route');
    t.ok(doc.paths['/agents/{id}/hello/greetings']?.get, 'agent-scoped route from a plugin');
    t.notOk(
      Object.keys(doc.paths).some((path) => path.startsWith('/missing-dep')),
      'stubs are hidden',
    );
    t.ok(doc.paths['/runtime/extensions'], 'GET /runtime/extensions');
  });

  t.test('the daemon itself is healthy', async (t) => {
    t.equal((await fetch(`${d.url}/health`)).status, 200);
  });
});
