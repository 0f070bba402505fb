/**
 * Request shapes both servers of the built daemon (the main API and the mesh server, which share
 * `ctx.serverGuards`) refuse, found by a red-team run: two `Host` lines (400, RFC 9112 section 3.2), an
 * `Origin` that is not exactly `http://host[:port]` (403 `cross_origin`, on `POST /agents/create` too),
 * and headers of the client-address family sent as chunked trailers to a loopback-only route (403
 * `loopback_only`, as when sent as headers).
 */
import { join } from 'node:path';
import t from 'tap';
import { ROOT, runDaemon } from './helpers/daemon.js';
import { meshUrlOf } from './helpers/mesh.js';
import { rawLine, rawRequest } from './helpers/raw-http.js';

const d = await runDaemon(t, {
  extensions: {
    extensions: [
      {
        name: 'mesh',
        module: join(ROOT, 'extensions/mesh/index.ts'),
        enabled: true,
        config: { mdns: { enabled: false } },
      },
    ],
  },
});
const meshUrl = await meshUrlOf(d);
const token = d.token;
const servers = [
  { name: 'main API', url: d.url, path: '/health' },
  { name: 'mesh server', url: meshUrl, path: '/health' },
];
const authorityOf = (url: string) => new URL(url).host;
const codeOf = (body: unknown) => (body as { code?: string } | undefined)?.code;

t.test('two Host lines are a 400, equal ones too; one is served', async (t) => {
  for (const server of servers) {
    const own = authorityOf(server.url);
    const send = (hosts: string[]) =>
      rawLine(
        server.url,
        `GET ${server.path} HTTP/1.1\r\n${hosts.map((host) => `Host: ${host}\r\n`).join('')}Connection: close\r\n\r\n`,
      );
    t.equal((await send([own])).status, 200, `${server.name}: one Host`);
    for (const hosts of [
      [own, own],
      [own, 'evil.example'],
      ['evil.example', own],
      [own, own.toUpperCase()],
    ]) {
      const answer = await send(hosts);
      t.equal(answer.status, 400, `${server.name}: Host ${hosts.join(' + ')}`);
      t.equal(codeOf(answer.body), 'bad_request');
    }
    const mixedCase = await rawLine(
      server.url,
      `GET ${server.path} HTTP/1.1\r\nHost: ${own}\r\nhOST: ${own}\r\nConnection: close\r\n\r\n`,
    );
    t.equal(mixedCase.status, 400, `${server.name}: the field name in any case`);
  }
});

/** Origins of every shape but `http://host[:port]`, all naming this server's own authority somewhere. */
function malformedOrigins(own: string): string[] {
  const [host, port] = own.split(':');
  return [
    `http://${own}/`,
    `http://${own}/path`,
    `http://${own}?q=1`,
    `http://${own}#f`,
    `http://evil@${own}`,
    `http://user:pw@${own}`,
    `http://${own}/@evil.example`,
    `http://${own}:`,
    `http://${host}:0${port}`,
    `http://${own}, http://${own}`,
    `http://${own}\\`,
    `http:/${own}`,
    `http:${own}`,
    `//${own}`,
    own,
    `http://${own}/..`,
    `http://${own}%2f`,
    `http://${own}.`,
    `http://${host}.:${port}`,
    'null',
    'file://',
  ];
}

t.test('an Origin that is not exactly http://host[:port] is 403 cross_origin', async (t) => {
  const mainOwn = authorityOf(d.url);
  const create = (origin: string) =>
    rawRequest(d.url, {
      method: 'POST',
      path: '/agents/create',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', origin },
      body: JSON.stringify({ name: 'Origin Probe' }),
    });
  for (const origin of malformedOrigins(mainOwn)) {
    const answer = await create(origin);
    t.equal(answer.status, 403, `main API POST /agents/create, Origin ${origin}`);
    t.equal(codeOf(answer.body), 'cross_origin');
  }
  const own = await create(`http://${mainOwn}`);
  t.not(own.status, 403, "the server's own origin reaches the route");
  t.not(codeOf(own.body), 'cross_origin');

  const meshOwn = authorityOf(meshUrl);
  for (const origin of malformedOrigins(meshOwn)) {
    const answer = await rawRequest(meshUrl, { path: '/agents', headers: { origin } });
    t.equal(answer.status, 403, `mesh GET /agents, Origin ${origin}`);
    t.equal(codeOf(answer.body), 'cross_origin');
  }
  t.equal(
    (await rawRequest(meshUrl, { path: '/agents', headers: { origin: `http://${meshOwn}` } })).status,
    200,
    "the mesh server's own origin",
  );
  t.equal(
    (await rawRequest(meshUrl, { path: '/agents', headers: { origin: `HTTP://${meshOwn.toUpperCase()}` } })).status,
    200,
    'compared case-insensitively',
  );
});

t.test('client-address headers sent as chunked trailers are refused on loopback-only routes', async (t) => {
  const own = authorityOf(d.url);
  const chunked = (trailers: string, contentType = 'application/json') =>
    rawLine(
      d.url,
      `POST /identity/confirm-backup HTTP/1.1\r\nHost: ${own}\r\nAuthorization: Bearer ${token}\r\n` +
        `${contentType ? `Content-Type: ${contentType}\r\n` : ''}Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n` +
        `2\r\n{}\r\n0\r\n${trailers}\r\n`,
    );
  const plain = await chunked('');
  t.equal(plain.status, 409, 'a chunked body without trailers passes (no identity yet: 409)');
  t.equal((await chunked('X-Trace-Note: fine\r\n')).status, 409, 'an ordinary trailer too');
  for (const trailer of [
    'X-Forwarded-For: 203.0.113.9',
    'Forwarded: for=203.0.113.9',
    'X-Real-IP: 203.0.113.9',
    'True-Client-IP: 203.0.113.9',
    'Via: 1.1 proxy',
    'Fly-Client-IP: 203.0.113.9',
  ]) {
    const answer = await chunked(`${trailer}\r\n`);
    t.equal(answer.status, 403, `trailer ${trailer}`);
    t.equal(codeOf(answer.body), 'loopback_only');
  }
  const noType = await chunked('X-Forwarded-For: 203.0.113.9\r\n', '');
  t.not(noType.status, 409, 'a chunked body no parser reads never reaches the route either');
  const other = await rawLine(
    d.url,
    `GET /identity HTTP/1.1\r\nHost: ${own}\r\nAuthorization: Bearer ${token}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\nX-Forwarded-For: 203.0.113.9\r\n\r\n`,
  );
  t.equal(other.status, 200, 'other routes do not look at trailers');
});
