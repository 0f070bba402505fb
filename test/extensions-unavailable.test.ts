/**
 * Disabled extensions: every route of their groups answers 503 `unavailable` naming the
 * extension, for every method, on the prefix, below it and on the agent-scoped segment; the prefix of
 * a disabled extension comes from its definition, or, when its module cannot be imported, from the
 * manifest entry (the kernel names no extension); a dependent of a disabled extension fails; the token
 * is still checked first.
 */
import t from 'tap';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import type { ExtensionDefinition } from '../contracts/extension.js';
import { SHIPPED_EXTENSIONS } from '../kernel/extensions/shipped.js';
import { importFile, ROOT, runDaemon } from './helpers/daemon.js';
import { daemonStarted } from './helpers/daemon-started.js';

const hello = join(ROOT, 'test/fixtures/extensions/hello/index.ts');
const needsHello = join(ROOT, 'test/fixtures/extensions/needs-hello/index.ts');
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

t.test('disabled extensions answer 503 on all their routes', async (t) => {
  const d = await runDaemon(t, {
    extensions: {
      extensions: [
        { name: 'hello', module: hello, enabled: false },
        { name: 'needs-hello', module: needsHello },
        { name: 'mcp', module: './no/such/module.js', enabled: false, prefix: '/mcp', agentRoutes: 'mcp' },
        { name: 'mesh', module: 'no-such-package', enabled: false, prefix: '/network' },
        { name: 'unplaced', module: 'no-such-package-either', enabled: false },
      ],
    },
  });
  await daemonStarted(t, d);

  t.test('status rows', async (t) => {
    const rows = (await d.request('GET', '/runtime/extensions')).body.extensions;
    t.match(rows, [
      {
        name: 'hello',
        enabled: false,
        loaded: false,
        error: null,
        state: 'disabled',
        prefix: '/hello',
        version: '1.2.3',
        module: hello,
      },
      {
        name: 'needs-hello',
        enabled: true,
        loaded: false,
        state: 'failed',
        error: 'missing dependencies: hello (disabled)',
      },
      { name: 'mcp', enabled: false, loaded: false, error: null, prefix: '/mcp', agentRoutes: 'mcp', version: null },
      { name: 'mesh', enabled: false, loaded: false, error: null, prefix: '/network' },
      { name: 'unplaced', enabled: false, loaded: false, error: null, prefix: null, agentRoutes: null },
    ]);
    const one = await d.request('GET', '/runtime/extensions/mcp');
    t.equal(one.status, 200);
    t.equal(one.body.name, 'mcp');
    const none = await d.request('GET', '/runtime/extensions/nope');
    t.equal(none.status, 404);
    t.equal(none.body.code, 'not_found');
  });

  t.test('every method, nested paths and the agent segment', async (t) => {
    const paths = [
      '/hello',
      '/hello/',
      '/hello/greetings',
      '/hello/a/b/c?x=1',
      '/agents/a1/hello',
      '/agents/a1/hello/deep/er',
    ];
    for (const path of paths) {
      for (const method of METHODS) {
        const res = await d.request(
          method,
          path,
          method === 'POST' || method === 'PUT' || method === 'PATCH' ? { text: 'x' } : undefined,
        );
        t.equal(res.status, 503, `${method} ${path}`);
        t.same(res.body, {
          error: 'extension hello is disabled; its routes are unavailable',
          code: 'unavailable',
          extension: 'hello',
        });
      }
    }
    const head = await fetch(`${d.url}/hello/x`, { method: 'HEAD', headers: { authorization: `Bearer ${d.token}` } });
    t.equal(head.status, 503, 'HEAD too');
  });

  t.test('extensions without a module answer where their manifest entry says', async (t) => {
    for (const [path, name] of [
      ['/mcp', 'mcp'],
      ['/mcp/servers', 'mcp'],
      ['/agents/x/mcp/servers', 'mcp'],
      ['/network', 'mesh'],
    ]) {
      const res = await d.request('GET', path!);
      t.equal(res.status, 503, path);
      t.match(res.body, { code: 'unavailable', error: `extension ${name} is disabled; its routes are unavailable` });
    }
    // An extension that is not shipped and whose entry names no prefix has no place to answer.
    t.equal((await d.request('GET', '/unplaced')).status, 404);
  });

  t.test('shipped extensions the manifest does not list answer 503 naming them', async (t) => {
    const listed = new Set(['hello', 'needs-hello', 'mcp', 'mesh', 'unplaced']);
    const unlisted = SHIPPED_EXTENSIONS.filter((shipped) => !listed.has(shipped.name));
    t.same(unlisted.map((s) => s.name).sort(), [
      'channels',
      'compute',
      'console',
      'providers',
      'telemetry',
      'tracked-folders',
    ]);
    for (const shipped of unlisted) {
      const paths = [
        shipped.prefix,
        `${shipped.prefix}/x/y`,
        ...(shipped.agentRoutes ? [`/agents/a1/${shipped.agentRoutes}`, `/agents/a1/${shipped.agentRoutes}/x`] : []),
      ];
      for (const path of paths) {
        for (const method of ['GET', 'POST', 'DELETE']) {
          const res = await d.request(method, path, method === 'POST' ? {} : undefined);
          t.equal(res.status, 503, `${method} ${path}`);
          t.same(res.body, {
            error: `extension ${shipped.name} is not listed in the extension manifest; its routes are unavailable`,
            code: 'unavailable',
            extension: shipped.name,
          });
        }
      }
    }
    t.equal(
      (await d.request('GET', '/agents/a1/adapters')).body.extension,
      'channels',
      'the channels adapters segment',
    );
    t.equal(
      (await d.request('GET', '/runtime/extensions/channels')).status,
      404,
      'an unlisted extension has no status row',
    );
  });

  t.test('a dependent of a disabled extension answers 503 with its reason', async (t) => {
    const res = await d.request('GET', '/needs-hello');
    t.equal(res.status, 503);
    t.equal(
      res.body.error,
      'extension needs-hello is failed: missing dependencies: hello (disabled); its routes are unavailable',
    );
  });

  t.test('the token is checked before the 503', async (t) => {
    const res = await fetch(`${d.url}/hello`);
    t.equal(res.status, 401);
  });

  t.test('kernel routes around them are untouched', async (t) => {
    t.equal((await d.request('GET', '/nothing-here')).status, 404);
    t.equal((await d.request('GET', '/runtime/extensions')).status, 200);
  });
});

t.test('the shipped table says what each shipped extension built so far declares', async (t) => {
  for (const shipped of SHIPPED_EXTENSIONS) {
    const path = join(ROOT, shipped.module);
    // Every row names a module that exists: a row left unchecked would pass whatever it says.
    if (!t.ok(existsSync(path), `${shipped.name}: ${shipped.module} exists`)) continue;
    const definition = (await importFile<{ default: ExtensionDefinition }>(path)).default;
    t.same(
      { name: definition.name, prefix: definition.prefix, agentRoutes: definition.agentRoutes },
      { name: shipped.name, prefix: shipped.prefix, agentRoutes: shipped.agentRoutes },
      shipped.name,
    );
  }
});

t.test('a listed shipped extension whose module cannot be imported answers at the shipped prefix', async (t) => {
  const d = await runDaemon(t, {
    extensions: { extensions: [{ name: 'channels', module: './no/such/channels.js', enabled: true }] },
  });
  for (const path of ['/channels', '/agents/a1/adapters/telegram']) {
    const res = await d.request('GET', path);
    t.equal(res.status, 503, path);
    t.match(res.body, {
      code: 'unavailable',
      extension: 'channels',
      error: /extension channels is failed: cannot resolve module/,
    });
  }
  t.match((await d.request('GET', '/runtime/extensions/channels')).body, {
    prefix: '/channels',
    agentRoutes: 'adapters',
    loaded: false,
  });
});
