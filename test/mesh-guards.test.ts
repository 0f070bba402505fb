/**
 * The mesh server carries the main API's guards, through `ctx.serverGuards`: Host
 * (foreign names, `127.0.0.1.evil.com`, IP literals on another port or not bound, `0.0.0.0`, the
 * authority of an absolute-form request line), Origin and Sec-Fetch-Site (a plain cross-site link to a
 * page still passes), slow headers and slow bodies cut with 408, oversized headers 431, cards and health
 * built from the server's own address whatever Host the caller sent; and a fuzz of its routes with
 * deep, huge and malformed envelopes that must answer 4xx `{error, code}`, never 5xx.
 */
import { connect } from 'node:net';
import t from 'tap';
import { mdnsHostName } from '../kernel/http/server-guards.js';
import { rawLine, rawRequest } from './helpers/raw-http.js';
import { bootMeshDaemon, createMeshAgent, signedEnvelope, testKey } from './helpers/mesh.js';
import { MeshServer } from '../extensions/mesh/mesh-server.js';

const PUBLIC_NAME = 'mesh.example:7777';
// Short header and request limits, set in the manifest (the shipped ones are 10 s and 60 s).
const d = await bootMeshDaemon(t, {
  meshConfig: {
    mdns: { enabled: false },
    publicNames: [PUBLIC_NAME],
    serverLimits: { headersTimeoutMs: 300, requestTimeoutMs: 800 },
    maxBodyBytes: 64 * 1024,
  },
});
const agent = await createMeshAgent(d, 'Guarded', { handle: 'guarded' });
const mesh = new URL(d.meshUrl);
const port = Number(mesh.port);

const codeOf = (body: unknown) => (body as { code?: string } | undefined)?.code;

t.test('Host must name the mesh server', async (t) => {
  const foreign = [
    'evil.com',
    `evil.com:${port}`,
    `127.0.0.1.evil.com:${port}`,
    `127.0.0.1.evil.com`,
    `localhost.evil.com:${port}`,
    `evil.localhost.com:${port}`,
    `0.0.0.0:${port}`,
    '0.0.0.0',
    `[::]:${port}`,
    '127.0.0.1:1',
    `127.0.0.1:${port + 1}`,
    '[::1]:1',
    `10.9.8.7:${port}`,
    `192.168.250.250:${port}`,
    `8.8.8.8:${port}`,
    'mesh.example:7778',
    'mesh.example',
    `mesh.example.evil.com:7777`,
    `${port}`,
    `user@127.0.0.1:${port}`,
    '',
    'a b',
  ];
  for (const host of foreign) {
    for (const path of ['/health', '/agents', '/agents/guarded/card', '/agents/guarded/']) {
      const res = await rawRequest(d.meshUrl, { path, headers: { host } });
      t.equal(res.status, 403, `Host ${JSON.stringify(host)} ${path}`);
      t.equal(codeOf(res.body), 'host_not_allowed');
    }
  }
  const inbox = await rawRequest(d.meshUrl, {
    method: 'POST',
    path: '/agents/guarded/inbox',
    headers: { host: 'evil.com', 'content-type': 'application/json' },
    body: '{}',
  });
  t.equal(codeOf(inbox.body), 'host_not_allowed', 'the inbox too, before the body is read');
  const mdns = mdnsHostName();
  const allowed = [
    `127.0.0.1:${port}`,
    `localhost:${port}`,
    'localhost:1',
    `LocalHost:${port}`,
    PUBLIC_NAME,
    ...(mdns ? [`${mdns}:${port}`] : []),
  ];
  for (const host of allowed) {
    const res = await rawRequest(d.meshUrl, { path: '/agents', headers: { host } });
    t.equal(res.status, 200, `Host ${host}`);
  }
});

t.test('the authority of an absolute-form request line is checked like Host', async (t) => {
  for (const target of [
    'http://evil.com/agents',
    `http://evil.com:${port}/agents`,
    `http://127.0.0.1.evil.com:${port}/agents`,
    `http://0.0.0.0:${port}/agents`,
    `https://127.0.0.1:${port}/agents`,
  ]) {
    const answer = await rawLine(
      d.meshUrl,
      `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`,
    );
    t.equal(answer.status, 403, target);
    t.equal(codeOf(answer.body), 'host_not_allowed', target);
  }
  const own = await rawLine(
    d.meshUrl,
    `GET http://127.0.0.1:${port}/health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`,
  );
  t.equal(own.status, 200, 'its own address in absolute form');
});

t.test('Origin and Sec-Fetch-Site', async (t) => {
  for (const origin of [
    'https://evil.com',
    'http://evil.com',
    `http://localhost:${port + 1}`,
    'null',
    `https://127.0.0.1:${port}`,
  ]) {
    const res = await rawRequest(d.meshUrl, { path: '/agents', headers: { origin } });
    t.equal(res.status, 403, `Origin ${origin}`);
    t.equal(codeOf(res.body), 'cross_origin');
  }
  t.equal(
    (await rawRequest(d.meshUrl, { path: '/agents', headers: { origin: `http://127.0.0.1:${port}` } })).status,
    200,
    'same origin',
  );
  for (const site of ['cross-site', 'Same-Site']) {
    const fetchLike = await rawRequest(d.meshUrl, {
      path: '/agents',
      headers: { 'sec-fetch-site': site, 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty' },
    });
    t.equal(codeOf(fetchLike.body), 'cross_origin', `a script's fetch, Sec-Fetch-Site ${site}`);
    const post = await rawRequest(d.meshUrl, {
      method: 'POST',
      path: '/agents/guarded/inbox',
      headers: {
        'sec-fetch-site': site,
        'sec-fetch-mode': 'navigate',
        'sec-fetch-dest': 'document',
        'content-type': 'application/json',
      },
      body: '{}',
    });
    t.equal(codeOf(post.body), 'cross_origin', `a form post, Sec-Fetch-Site ${site}`);
  }
  // A link from another site to an agent's page is a plain navigation: it passes (agents' websites are for browsers).
  const link = await rawRequest(d.meshUrl, {
    path: '/health',
    headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' },
  });
  t.equal(link.status, 200, 'a cross-site top-level navigation');
  const framed = await rawRequest(d.meshUrl, {
    path: '/health',
    headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'iframe' },
  });
  t.equal(codeOf(framed.body), 'cross_origin', "but not into another site's frame");
  const res = await rawRequest(d.meshUrl, { path: '/agents' });
  t.notOk(
    Object.keys(res.headers).some((name) => name.startsWith('access-control-')),
    'no CORS header',
  );
});

t.test("cards and health name the server by its own address, never the caller's Host", async (t) => {
  const hosts = [`127.0.0.1:${port}`, `localhost:${port}`, 'localhost:1', PUBLIC_NAME];
  for (const host of hosts) {
    const card = await rawRequest(d.meshUrl, { path: '/agents/guarded/card', headers: { host } });
    t.equal(card.status, 200);
    t.equal(card.body.endpoints.inbox, `http://${PUBLIC_NAME}/agents/guarded/inbox`, `card for Host ${host}`);
    const list = await rawRequest(d.meshUrl, { path: '/agents', headers: { host } });
    t.same(
      list.body.agents.map((item: { endpoints: { card: string } }) => item.endpoints.card),
      [`http://${PUBLIC_NAME}/agents/guarded/card`],
    );
    const health = await rawRequest(d.meshUrl, { path: '/agents/guarded/health', headers: { host } });
    t.equal(health.body.endpoints.website, `http://${PUBLIC_NAME}/agents/guarded/`);
  }
  t.equal(agent.did.startsWith('did:key:'), true);
});

t.test("public names: the manifest's, then MESH_PUBLIC_NAMES; the first is the cards' base", async (t) => {
  const env: Record<string, string> = { MESH_PUBLIC_NAMES: ' agents.example.org , bad name, [2001:db8::1]:7295,' };
  const ctx = { env: { get: (name: string) => env[name] } } as unknown as ConstructorParameters<typeof MeshServer>[0];
  const server = new MeshServer(ctx, () => {
    throw new Error('not built');
  }, ['Mesh.Example:7777']);
  t.same(
    server.publicNames(),
    ['Mesh.Example:7777', 'agents.example.org', '[2001:db8::1]:7295'],
    'malformed entries dropped',
  );
  t.equal(server.baseUrl(), 'http://mesh.example:7777');
  const envOnly = new MeshServer(ctx, () => {
    throw new Error('not built');
  });
  t.equal(envOnly.baseUrl(), 'http://agents.example.org');
});

/** Opens a raw connection, writes `text`, and resolves with what came back once the server closed it. */
function halfSent(text: string): Promise<{ text: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(port, mesh.hostname, () => socket.write(text));
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => (received += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve({ text: received, ms: Date.now() - started }));
  });
}

t.test('slow headers and slow bodies get 408, oversized headers 431', async (t) => {
  const headers = await halfSent(`GET /agents HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Slow: `);
  t.match(headers.text, /^HTTP\/1\.1 408 /, 'half-sent headers');
  t.match(headers.text, /"code":"request_timeout"/);
  t.ok(headers.ms < 5_000, `cut after ${headers.ms} ms (limit 300 ms, checked every 30 ms)`);
  const body = await halfSent(
    `POST /agents/guarded/inbox HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"version":`,
  );
  t.match(body.text, /^HTTP\/1\.1 408 /, 'half-sent body');
  t.ok(body.ms < 5_000, `cut after ${body.ms} ms`);
  const big = await halfSent(
    `GET /agents HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`,
  );
  t.match(big.text, /^HTTP\/1\.1 431 /);
  t.match(big.text, /"code":"headers_too_large"/);
  t.equal((await rawRequest(d.meshUrl, { path: '/health' })).status, 200, 'the server is fine');
});

/** Deterministic bad inputs for the mesh routes (a small PRNG: a failure reproduces). */
function badEnvelopes(to: string): Array<[string, string, Record<string, string>?]> {
  const key = testKey();
  const good = signedEnvelope(key, to, 'hello');
  const nest = (levels: number, open: string, close: string) => `${open.repeat(levels)}1${close.repeat(levels)}`;
  const cases: Array<[string, string, Record<string, string>?]> = [
    ['payload nested 3,000 deep', JSON.stringify({ ...good, payload: 'X' }).replace('"X"', nest(3_000, '{"a":', '}'))],
    [
      'attachments nested 10,000 deep',
      JSON.stringify({ ...good, payload: { ...good.payload, attachments: ['X'] } }).replace(
        '"X"',
        nest(10_000, '[', ']'),
      ),
    ],
    ['a body of 100,000 arrays', nest(100_000, '[', ']')],
    [
      'content over the body limit',
      JSON.stringify({ ...good, payload: { ...good.payload, content: 'x'.repeat(80 * 1024) } }),
    ],
    ['truncated JSON', JSON.stringify(good).slice(0, 40)],
    ['not JSON', 'hello'],
    ['empty body', ''],
    ['null', 'null'],
    ['an array', '[]'],
    ['a string', '"x"'],
    ['a duplicate member name', JSON.stringify(good).replace('{', '{"id":"dup",')],
    ['1e400 in the payload', JSON.stringify({ ...good, payload: { ...good.payload, n: 'X' } }).replace('"X"', '1e400')],
    ['a __proto__ member', JSON.stringify(good).replace('{', '{"__proto__":{"x":1},')],
    ['lone surrogate in content', JSON.stringify({ ...good, payload: { ...good.payload, content: '\ud800' } })],
    ['NUL in content', JSON.stringify({ ...good, payload: { ...good.payload, content: 'a\u0000b' } })],
    ['wrong version', JSON.stringify({ ...good, version: '2.0' })],
    ['number id', JSON.stringify({ ...good, id: 5 })],
    ['huge id', JSON.stringify({ ...good, id: 'i'.repeat(5_000) })],
    ['no payload', JSON.stringify({ ...good, payload: undefined })],
    ['payload an array', JSON.stringify({ ...good, payload: [] })],
    ['signature not base64', JSON.stringify({ ...good, signature: 'ed25519:!!!!' })],
    ['signature with a trailing space', JSON.stringify({ ...good, signature: `${good.signature} ` })],
    ['from not a DID', JSON.stringify({ ...good, from: 'mailto:x' })],
    ['timestamp garbage', JSON.stringify({ ...good, timestamp: 'yesterday' })],
    ['to another agent', JSON.stringify({ ...good, to: testKey().did })],
    ['text/plain envelope', JSON.stringify(good), { 'content-type': 'text/plain' }],
    ['deep JSON sent as text/plain', nest(3_000, '{"a":', '}'), { 'content-type': 'text/plain' }],
    ['content-type garbage', JSON.stringify(good), { 'content-type': '\u0001' }],
  ];
  return cases;
}

t.test('fuzz: deep, huge and malformed requests answer 4xx {error, code}, never 5xx', async (t) => {
  const failures: string[] = [];
  const check = (label: string, res: { status: number; body: unknown }) => {
    const body = res.body as { error?: unknown; code?: unknown } | undefined;
    if (res.status >= 500 || res.status < 400) failures.push(`${label}: ${res.status}`);
    else if (typeof body?.error !== 'string' || typeof body?.code !== 'string')
      failures.push(`${label}: ${res.status} not {error, code}: ${JSON.stringify(body)?.slice(0, 200)}`);
  };
  for (const [label, body, headers] of badEnvelopes(agent.did)) {
    let res: Awaited<ReturnType<typeof rawRequest>>;
    try {
      res = await rawRequest(d.meshUrl, {
        method: 'POST',
        path: '/agents/guarded/inbox',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
    } catch (error) {
      // A header value node itself refuses to send is not a case.
      if ((error as NodeJS.ErrnoException).code === 'ERR_INVALID_CHAR') continue;
      throw error;
    }
    check(`inbox ${label}`, res);
  }
  const paths = [
    '/agents/%E0%A4%A',
    '/agents/..%2F..%2Fetc%2Fpasswd/card',
    `/agents/${'x'.repeat(600)}/card`,
    '/agents/%00/health',
    '/agents/guarded/..%2f..%2fsecret',
    '/agents/nobody/inbox',
    '/%ZZ',
  ];
  for (const path of paths) check(`GET ${path.slice(0, 60)}`, await rawRequest(d.meshUrl, { path }));
  check('DELETE /agents', await rawRequest(d.meshUrl, { method: 'DELETE', path: '/agents' }));
  check(
    'POST /agents/guarded/card',
    await rawRequest(d.meshUrl, {
      method: 'POST',
      path: '/agents/guarded/card',
      headers: { 'content-type': 'application/json' },
      body: nestJson(5_000),
    }),
  );
  t.same(failures, [], 'every bad request answered 4xx {error, code}');
  t.equal((await rawRequest(d.meshUrl, { path: '/health' })).status, 200, 'and the server still answers');
});

const nestJson = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
