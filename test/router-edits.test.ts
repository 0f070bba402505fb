/**
 * The routing of the built daemon, where the build edits fastify (scripts/fastify-404-edit.mjs:
 * not-found routes added to fastify's 404 router at its first use). What it re-implements is checked here on
 * dist/ with every shipped extension: every GET route of the OpenAPI document is routed (its handler
 * answers, not the router's 404), a path one character off each static segment is not, the first lookup
 * and the later ones agree, and the not-found answers keep their order: an extension's own scope first
 * (its 404 while it serves, its 503 while it is off or not listed), the daemon's 404 elsewhere, for every
 * HTTP method.
 */
import t, { type Test } from 'tap';
import { runDaemon, shippedManifest, type SpawnedDaemon } from './helpers/daemon.js';

const d = await runDaemon(t);
const openapi = (await d.request('GET', '/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
const fill = (path: string) => path.replace(/\{[^}]+\}/g, 'zz-no-such');
const routerMiss = (method: string, path: string, answer: { status: number; body: any }) =>
  answer.status === 404 && answer.body?.code === 'not_found' && answer.body?.error === `no route ${method} ${path}`;
/** `path` with the last character of static segment `index` changed. */
const nearMiss = (path: string, index: number) =>
  path
    .split('/')
    .map((segment, i) => (i === index ? `${segment.slice(0, -1)}${segment.endsWith('q') ? 'j' : 'q'}` : segment))
    .join('/');

const gets = Object.entries(openapi.paths)
  .filter(([, methods]) => 'get' in methods)
  .map(([path]) => fill(path))
  .filter((path) => path !== '/events' && !path.endsWith('/stream'));

t.test('every GET route of the OpenAPI document is routed, twice alike', async (t) => {
  t.ok(gets.length > 40, `the document lists the GET routes (${gets.length})`);
  for (const round of ['first lookups', 'later lookups']) {
    const missed: string[] = [];
    for (const path of gets) if (routerMiss('GET', path, await d.request('GET', path))) missed.push(path);
    t.same(missed, [], `${round}: no route answered by the router's 404`);
  }
});

t.test('a path one character off a static segment is not routed', async (t) => {
  let checked = 0;
  const routed: string[] = [];
  for (const path of gets) {
    const segments = path.split('/');
    for (let i = 1; i < segments.length; i++) {
      if (segments[i] === 'zz-no-such' || segments[i]!.length < 2) continue;
      const off = nearMiss(path, i);
      if (gets.includes(off)) continue;
      const answer = await d.request('GET', off);
      checked++;
      // Under an extension's prefix, its own scope answers; anywhere, never a handler of another route.
      if (!(routerMiss('GET', off, answer) || (answer.status === 404 && answer.body?.code === 'not_found')))
        routed.push(`${off} → ${answer.status}`);
    }
  }
  t.ok(checked > 50, `near misses tried (${checked})`);
  t.same(routed, [], 'none reached a handler');
});

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'PROPFIND', 'MKCOL', 'SEARCH', 'REPORT'];
/** The methods fastify routes (the others always get the daemon's 404, edited build or not). */
const ROUTED = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

async function notFoundOrder(t: Test, daemon: SpawnedDaemon, off: string) {
  for (const method of METHODS) {
    const root = await daemon.request(method, '/zz/unknown');
    t.ok(routerMiss(method, '/zz/unknown', root), `${method} /zz/unknown: the daemon's 404`);
    const served = await daemon.request(method, '/network/zz-unknown');
    t.ok(routerMiss(method, '/network/zz-unknown', served), `${method} /network/zz-unknown: the mesh scope's 404`);
    for (const path of [`/${off}`, `/${off}/`, `/${off}/zz/deeper`]) {
      const stub = await daemon.request(method, path);
      if (ROUTED.has(method))
        t.match(
          stub,
          { status: 503, body: { code: 'unavailable', error: new RegExp(off) } },
          `${method} ${path}: 503 naming the extension that is off`,
        );
      else t.ok(routerMiss(method, path, stub), `${method} ${path}: the daemon's 404`);
    }
  }
}

t.test('not-found answers in order, every method: shipped extensions on', async (t) => {
  const agentless = await d.request('GET', '/agents/zz-no-such/zz-unknown');
  t.match(agentless, { status: 404, body: { code: 'not_found' } }, 'an unknown agent segment');
  for (const method of METHODS) {
    t.ok(
      routerMiss(method, '/zz/unknown', await d.request(method, '/zz/unknown')),
      `${method} /zz/unknown: the daemon's 404`,
    );
    t.ok(
      routerMiss(method, '/network/zz-unknown', await d.request(method, '/network/zz-unknown')),
      `${method} /network/zz-unknown: the mesh scope's 404`,
    );
  }
});

t.test('not-found answers in order, every method: compute off, console not listed', async (t) => {
  const manifest = shippedManifest();
  const extensions = manifest.extensions as Array<{ name: string; enabled: boolean }>;
  extensions.find((entry) => entry.name === 'compute')!.enabled = false;
  const trimmed = { extensions: extensions.filter((entry) => entry.name !== 'console') };
  const other = await runDaemon(t, { extensions: trimmed });
  await notFoundOrder(t, other, 'compute');
  for (const method of ROUTED) {
    t.match(
      await other.request(method, '/console/zz'),
      { status: 503, body: { code: 'unavailable', error: /console/ } },
      `${method} /console/zz: 503, not listed`,
    );
  }
});
