import t from 'tap';
import { runDaemon, type SpawnedDaemon } from './helpers/daemon.js';
import { hostAllowed, isLoopbackAddress, parseHostHeader } from '../kernel/http/host-check.js';
import { rawLine, rawRequest } from './helpers/raw-http.js';

t.test('host parsing is by address, not by prefix', async (t) => {
  t.equal(isLoopbackAddress('127.0.0.1'), true);
  t.equal(isLoopbackAddress('127.255.1.9'), true);
  t.equal(isLoopbackAddress('::1'), true);
  t.equal(isLoopbackAddress('::ffff:127.0.0.1'), true);
  t.equal(isLoopbackAddress('127.evil.example'), false);
  t.equal(isLoopbackAddress('128.0.0.1'), false);
  t.same(parseHostHeader('[::1]:80'), { host: '::1', port: 80 });
  t.equal(parseHostHeader('a:b:c'), null);
  t.equal(parseHostHeader('host:99999'), null);
  const policy = { boundPort: () => 4000, allowedHosts: ['agt.lan', 'box.lan:5000'] };
  t.equal(hostAllowed('127.evil.example:4000', policy), false);
  t.equal(hostAllowed('localhost:1234', policy), true, 'loopback names on any port');
  t.equal(hostAllowed('127.0.0.1:1', policy), false, 'a loopback IP literal only on the bound port');
  t.equal(hostAllowed('[::1]:1', policy), false);
  t.equal(hostAllowed('127.0.0.1:4000', policy), true);
  t.equal(hostAllowed('[::1]:4000', policy), true);
  t.equal(hostAllowed('127.0.0.1', policy), false, 'no port means 80');
  for (const unspecified of [
    '0.0.0.0:4000',
    '0.0.0.0',
    '0.1.2.3:4000',
    '[::]:4000',
    '[::ffff:0.0.0.0]:4000',
    '[0:0:0:0:0:0:0:0]:4000',
    // Other IPv6 spellings of the same addresses (IPv4-mapped in hex, IPv4-compatible, expanded).
    '[::ffff:0:0]:4000',
    '[::ffff:0:1]:4000',
    '[::0.0.0.0]:4000',
    '[0:0:0:0:0:ffff:0:0]:4000',
    '[::FFFF:0:0]:4000',
  ]) {
    t.equal(hostAllowed(unspecified, policy), false, `${unspecified} never names a server`);
  }
  t.equal(hostAllowed('0.0.0.0:4000', { ...policy, allowedHosts: ['0.0.0.0'] }), false, 'not even when listed');
  t.equal(
    hostAllowed('127.0.0.1:8000', { ...policy, allowedHosts: ['127.0.0.1:8000'] }),
    true,
    'an IP literal listed with a port (a port mapping)',
  );
  t.equal(hostAllowed('127.0.0.1:8001', { ...policy, allowedHosts: ['127.0.0.1:8000'] }), false);
  const bound = { ...policy, boundAddresses: () => ['127.0.0.1', '192.168.1.5'] };
  t.equal(hostAllowed('192.168.1.5:4000', bound), true, 'with boundAddresses, those addresses');
  t.equal(hostAllowed('10.1.2.3:4000', bound), false, 'and no other');
  t.equal(hostAllowed('127.0.0.1:4001', bound), false);
  t.equal(hostAllowed('10.1.2.3:4000', policy), true);
  t.equal(hostAllowed('10.1.2.3:4001', policy), false);
  t.equal(hostAllowed('agt.lan:9999', policy), true);
  t.equal(hostAllowed('box.lan:5000', policy), true);
  t.equal(hostAllowed('box.lan:5001', policy), false);
  t.equal(hostAllowed(undefined, policy), false);
});

/** One daemon for the tests below but the one behind a proxy (it shuts down); `agt.example` is an allowed host. */
let shared: Promise<SpawnedDaemon> | undefined;
const daemon = () => (shared ??= runDaemon(t, { env: { AGT_DAEMON_ALLOWED_HOSTS: 'agt.example' } }));
const portOf = (d: SpawnedDaemon) => Number(new URL(d.url).port);

t.test('request guard over real HTTP', async (t) => {
  const d = await daemon();
  const port = portOf(d);
  const auth = { authorization: `Bearer ${d.token}` };
  const cases: Array<[string, number, string | undefined]> = [
    [`127.evil.example:${port}`, 403, 'host_not_allowed'],
    [`evil.example:${port}`, 403, 'host_not_allowed'],
    [`localhost:${port}`, 200, undefined],
    ['localhost:1', 200, undefined],
    ['127.0.0.1:1', 403, 'host_not_allowed'],
    ['[::1]:1', 403, 'host_not_allowed'],
    [`0.0.0.0:${port}`, 403, 'host_not_allowed'],
    ['0.0.0.0', 403, 'host_not_allowed'],
    [`[::]:${port}`, 403, 'host_not_allowed'],
    [`[::ffff:0:0]:${port}`, 403, 'host_not_allowed'],
    [`[::0.0.0.0]:${port}`, 403, 'host_not_allowed'],
    [`127.0.0.1.evil.example:${port}`, 403, 'host_not_allowed'],
    [`127.0.0.1:${port}`, 200, undefined],
    [`[::1]:${port}`, 200, undefined],
    [`192.168.7.7:${port}`, 200, undefined],
    [`192.168.7.7:${port + 1}`, 403, 'host_not_allowed'],
    [`agt.example:${port}`, 200, undefined],
  ];
  for (const [host, status, code] of cases) {
    const res = await rawRequest(d.url, { path: '/health', headers: { host } });
    t.equal(res.status, status, `Host ${host}`);
    if (code) t.equal(res.body.code, code);
  }
  // The guard runs before auth: a bad Host with a good token is still refused.
  const withToken = await rawRequest(d.url, { path: '/openapi.json', headers: { host: 'evil.example', ...auth } });
  t.equal(withToken.status, 403);

  const origin = await rawRequest(d.url, {
    path: '/openapi.json',
    headers: { host: `127.0.0.1:${port}`, origin: 'http://evil.example', ...auth },
  });
  t.equal(origin.status, 403);
  t.equal(origin.body.code, 'cross_origin');
  const otherPort = await rawRequest(d.url, {
    path: '/health',
    headers: { host: `localhost:${port}`, origin: `http://localhost:${port + 1}` },
  });
  t.equal(otherPort.body.code, 'cross_origin', 'another local port is another origin');
  const same = await rawRequest(d.url, {
    path: '/health',
    headers: { host: `localhost:${port}`, origin: `http://localhost:${port}` },
  });
  t.equal(same.status, 200, 'same origin passes');
  for (const site of ['cross-site', 'same-site']) {
    const res = await rawRequest(d.url, { path: '/health', headers: { 'sec-fetch-site': site } });
    t.equal(res.body.code, 'cross_origin', `Sec-Fetch-Site ${site}`);
  }
  const sameOrigin = await rawRequest(d.url, { path: '/health', headers: { 'sec-fetch-site': 'same-origin' } });
  t.equal(sameOrigin.status, 200);

  const preflight = await rawRequest(d.url, {
    method: 'OPTIONS',
    path: '/agents',
    headers: { origin: 'http://evil.example', 'access-control-request-method': 'POST' },
  });
  t.equal(preflight.status, 403);
  const plain = await rawRequest(d.url, { method: 'OPTIONS', path: '/health', headers: auth });
  for (const res of [preflight, plain, same]) {
    t.notOk(
      Object.keys(res.headers).some((h) => h.startsWith('access-control-')),
      'no CORS header',
    );
  }
});

t.test('the authority of an absolute-form request line must name the daemon too', async (t) => {
  const d = await daemon();
  const port = portOf(d);
  const cases: Array<[string, number]> = [
    [`http://evil.example/health`, 403],
    [`http://evil.example:${port}/health`, 403],
    [`http://127.0.0.1.evil.example:${port}/health`, 403],
    [`http://0.0.0.0:${port}/health`, 403],
    [`http://127.0.0.1:1/health`, 403],
    [`https://127.0.0.1:${port}/health`, 403],
    [`ftp://127.0.0.1:${port}/health`, 403],
    [`http://user@127.0.0.1:${port}/health`, 403],
    [`http://127.0.0.1:${port}/health`, 200],
    [`HTTP://LOCALHOST:${port}/health`, 200],
  ];
  for (const [target, status] of cases) {
    const answer = await rawLine(
      d.url,
      `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`,
    );
    t.equal(answer.status, status, target);
    if (status === 403) t.equal(answer.body.code, 'host_not_allowed', target);
  }
  const origin = await rawLine(
    d.url,
    `GET http://localhost:${port}/health HTTP/1.1\r\nHost: localhost:${port}\r\nOrigin: http://127.0.0.1:${port}\r\nConnection: close\r\n\r\n`,
  );
  t.equal(origin.body.code, 'cross_origin', 'Origin is compared with the authority the request named');
});

t.test('loopback-only routes refuse proxied requests', async (t) => {
  const d = await daemon();
  for (const header of ['forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-real-ip', 'via']) {
    const res = await rawRequest(d.url, {
      method: 'POST',
      path: '/daemon/shutdown',
      headers: { authorization: `Bearer ${d.token}`, [header]: '127.0.0.1' },
    });
    t.equal(res.status, 403, header);
    t.equal(res.body.code, 'loopback_only');
  }
});

t.test('behind a proxy, loopback-only routes need the local proof', async (t) => {
  const d = await runDaemon(t, { env: { AGT_DAEMON_BEHIND_PROXY: '1' } });
  const { readFileSync, statSync } = await import('node:fs');
  const proofPath = `${d.dataDir}/daemon-local-proof`;
  t.equal(statSync(proofPath).mode & 0o777, 0o600);
  const proof = readFileSync(proofPath, 'utf8').trim();
  const headers = { authorization: `Bearer ${d.token}` };
  const without = await rawRequest(d.url, { method: 'POST', path: '/daemon/shutdown', headers });
  t.equal(without.body.code, 'loopback_only');
  const wrong = await rawRequest(d.url, {
    method: 'POST',
    path: '/daemon/shutdown',
    headers: { ...headers, 'x-agt-local-proof': 'x' },
  });
  t.equal(wrong.body.code, 'loopback_only');
  const right = await rawRequest(d.url, {
    method: 'POST',
    path: '/daemon/shutdown',
    headers: { ...headers, 'x-agt-local-proof': proof },
  });
  t.equal(right.status, 202);
  t.equal(await d.exited, 0, 'the daemon shut down and exited cleanly');
});

t.test('router-level errors still pass the guard and answer {error, code}', async (t) => {
  const d = await daemon();
  const port = portOf(d);
  const badUrl = await rawRequest(d.url, { path: '/agents/%E0%A4%A', headers: { host: 'evil.example' } });
  t.equal(badUrl.status, 403, 'the Host check comes first');
  t.equal(badUrl.body.code, 'host_not_allowed');
  const anonymous = await rawRequest(d.url, { path: '/agents/%E0%A4%A', headers: { host: `localhost:${port}` } });
  t.equal(anonymous.status, 401);
  const authed = await rawRequest(d.url, { path: '/agents/%E0%A4%A', headers: { authorization: `Bearer ${d.token}` } });
  t.equal(authed.status, 400);
  t.same(Object.keys(authed.body).sort(), ['code', 'error']);
  t.equal(authed.body.code, 'bad_request');
  const longId = 'a'.repeat(300);
  const long = await d.request('GET', `/agents/${longId}/status`);
  t.equal(long.status, 404, 'a 300-character id is routed (and simply unknown)');
});
