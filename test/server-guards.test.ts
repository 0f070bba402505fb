/**
 * `ctx.serverGuards` as a third-party extension uses it (through `startTestExtension`, which hands out
 * the kernel's own implementation): a server bound to all interfaces accepts IP literals of this
 * machine on its port and nothing else, its public names and localhost; routes added after
 * `createServer` inherit the JSON depth limit; the limits are the main API's unless changed.
 */
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import t from 'tap';
import { defineExtension } from '../contracts/extension.js';
import type { ServerGuardPolicy } from '../contracts/server-guards.js';
import { startTestExtension } from '../contracts/testing/index.js';
import { REQUEST_LIMITS } from '../kernel/http/limits.js';
import { defaultConnectionCaps } from '../kernel/http/connection-caps.js';
import { mdnsHostName } from '../kernel/http/server-guards.js';
import { rawRequest } from './helpers/raw-http.js';

/** An extension that opens a server of its own on `host`, port 0, with `policy`. */
function listener(host: string, policy: ServerGuardPolicy) {
  let port = 0;
  const definition = defineExtension({
    name: 'listener',
    version: '1.0.0',
    contract: '1.0',
    register(ctx) {
      const app = ctx.serverGuards.createServer({ logger: false }, policy);
      app.get('/ping', async () => ({ pong: true }));
      app.post('/echo', async (request) => ({ got: typeof request.body }));
      return {
        async start() {
          await app.listen({ host, port: 0 });
          port = (app.server.address() as AddressInfo).port;
        },
        stop: () => app.close(),
      };
    },
  });
  return { definition, port: () => port };
}

t.test("a wildcard-bound server: this machine's addresses on its port, public names, localhost", async (t) => {
  const server = listener('0.0.0.0', { publicNames: ['pub.example', 'nat.example:8080'], mdnsName: false });
  const ext = await startTestExtension(server.definition);
  t.teardown(() => ext.stop());
  t.equal(ext.state, 'started', ext.error ?? '');
  const port = server.port();
  const url = `http://127.0.0.1:${port}`;
  const own = Object.values(networkInterfaces())
    .flatMap((list) => list ?? [])
    .filter((item) => item.family === 'IPv4')
    .map((item) => item.address);
  const allowed = [
    ...own.map((address) => `${address}:${port}`),
    `localhost:${port}`,
    'pub.example',
    'pub.example:1',
    'nat.example:8080',
  ];
  for (const host of allowed)
    t.equal((await rawRequest(url, { path: '/ping', headers: { host } })).status, 200, `Host ${host}`);
  const refused = [
    `203.0.113.9:${port}`,
    `127.0.0.1:${port + 1}`,
    `0.0.0.0:${port}`,
    'nat.example:8081',
    'evil.example',
    `127.0.0.1.evil.example:${port}`,
    `${mdnsHostName()}:${port}`,
  ];
  for (const host of refused) {
    const res = await rawRequest(url, { path: '/ping', headers: { host } });
    t.equal(res.status, 403, `Host ${host}`);
    t.same(res.body, { error: res.body.error, code: 'host_not_allowed' }, 'answered by the guard as {error, code}');
  }
  const deep = await rawRequest(url, {
    method: 'POST',
    path: '/echo',
    headers: { 'content-type': 'application/json' },
    body: `${'{"a":'.repeat(100)}1${'}'.repeat(100)}`,
  });
  t.equal(deep.status, 400, 'a route added after createServer has the JSON depth limit');
  t.equal(
    (
      await rawRequest(url, {
        method: 'POST',
        path: '/echo',
        headers: { 'content-type': 'application/json' },
        body: '{"a":1}',
      })
    ).body.got,
    'object',
  );
  const evilOrigin = await rawRequest(url, { path: '/ping', headers: { origin: 'http://evil.example' } });
  t.equal(evilOrigin.body.code, 'cross_origin');
  const notFound = await rawRequest(url, { path: '/nothing', headers: { host: 'evil.example' } });
  t.equal(notFound.status, 403, 'the 404 handler is behind the guard too');
});

t.test('a server bound to one address accepts that address only, and the mDNS name', async (t) => {
  const server = listener('127.0.0.1', {});
  const ext = await startTestExtension(server.definition);
  t.teardown(() => ext.stop());
  const port = server.port();
  const url = `http://127.0.0.1:${port}`;
  t.equal((await rawRequest(url, { path: '/ping', headers: { host: `127.0.0.1:${port}` } })).status, 200);
  const lan = Object.values(networkInterfaces())
    .flatMap((list) => list ?? [])
    .find((item) => item.family === 'IPv4' && !item.internal);
  if (lan)
    t.equal(
      (await rawRequest(url, { path: '/ping', headers: { host: `${lan.address}:${port}` } })).status,
      403,
      'an address it is not bound to',
    );
  if (mdnsHostName())
    t.equal(
      (await rawRequest(url, { path: '/ping', headers: { host: `${mdnsHostName()}:${port}` } })).status,
      200,
      'the mDNS name',
    );
});

t.test("limits: the main API's by default, policy overrides checked", async (t) => {
  const ext = await startTestExtension(
    defineExtension({ name: 'limits', version: '1.0.0', contract: '1.0', register() {} }),
  );
  t.teardown(() => ext.stop());
  const guards = ext.context.serverGuards;
  t.same(guards.defaultLimits, {
    maxHeaderBytes: REQUEST_LIMITS.maxHeaderBytes,
    headersTimeoutMs: REQUEST_LIMITS.headersTimeoutMs,
    requestTimeoutMs: REQUEST_LIMITS.requestTimeoutMs,
    keepAliveTimeoutMs: REQUEST_LIMITS.keepAliveTimeoutMs,
    idleSocketTimeoutMs: REQUEST_LIMITS.idleSocketTimeoutMs,
    ...defaultConnectionCaps(),
  });
  const plain = guards.createServer({ logger: false });
  t.equal(plain.server.headersTimeout, 10_000, 'slow headers: 408 at 10 s, as on the main API');
  t.equal(plain.server.requestTimeout, 60_000);
  t.equal((plain.server as unknown as { maxHeaderSize: number }).maxHeaderSize, 16 * 1024);
  t.equal(plain.server.maxConnections, defaultConnectionCaps().maxConnections, 'the default connection budget');
  await plain.close();
  const app = guards.createServer({ logger: false }, { limits: { headersTimeoutMs: 1_234 } });
  t.equal(app.server.headersTimeout, 1_234);
  t.equal(app.server.requestTimeout, REQUEST_LIMITS.requestTimeoutMs);
  t.equal((app.server as unknown as { maxHeaderSize: number }).maxHeaderSize, REQUEST_LIMITS.maxHeaderBytes);
  await app.close();
  t.throws(
    () => guards.createServer({}, { limits: { headersTimeoutMs: -1 } }),
    /headersTimeoutMs must be a positive integer/,
  );
  t.throws(
    () => guards.createServer({}, { limits: { maxConnections: 0 } }),
    /maxConnections must be a positive integer/,
  );
  const capped = guards.createServer({ logger: false }, { limits: { maxConnections: 12 } });
  t.equal(capped.server.maxConnections, 12, "a policy sets its server's connection budget");
  await capped.close();
});
