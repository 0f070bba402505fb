/**
 * Agent websites on the mesh server: stored files under `public/` with their content types and
 * validators, folders and their index, traversal attempts (raw HTTP: `..`, encoded and double-encoded
 * dots and slashes, backslashes, NUL, reserved names) that never reach another file, and API routes that
 * run the agent's lambda in the sandbox with a time limit.
 */
import t from 'tap';
import { rawRequest } from './helpers/raw-http.js';
import { runDaemon, shippedManifest } from './helpers/daemon.js';
import { bootMeshDaemon, createMeshAgent } from './helpers/mesh.js';

const d = await bootMeshDaemon(t, { meshConfig: { mdns: { enabled: false }, apiTimeoutMs: 2_000 } });
const site = await createMeshAgent(d, 'Site', {
  handle: 'site',
  serving: {
    public: { enabled: true, index: 'index.html' },
    api: [
      { method: 'GET', path: '/api/hello/:name', lambda: 'api.ts:hello', on_card: true },
      { method: 'POST', path: '/api/hello/:name', lambda: 'api.ts:hello' },
      { method: 'GET', path: '/api/spin', lambda: 'api.ts:spin' },
      { method: 'GET', path: '/api/boom', lambda: 'api.ts:boom' },
    ],
  },
  limits: { lambda_timeout_ms: 400 },
});
const SECRET = 'TOP-SECRET-NOT-PUBLIC';
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
const put = async (path: string, content: string, encoding?: 'base64') => {
  const answer = await d.request('PUT', `/agents/${site.id}/files/content?path=${encodeURIComponent(path)}`, {
    content,
    ...(encoding ? { encoding } : {}),
  });
  if (answer.status >= 300) throw new Error(`put ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
};
await put(
  'public/index.html',
  '<!doctype html><html><head><link rel="stylesheet" href="style.css"></head><body><h1 id="t">Hello from Site</h1></body></html>',
);
await put('public/style.css', 'h1 { color: rgb(0, 128, 0); }');
await put('public/docs/index.html', '<p>docs</p>');
await put('public/logo.png', PNG.toString('base64'), 'base64');
await put('public/%2e%2e/x.txt', 'literal name');
await put('public/notes/todo', 'buy milk\n');
await put('public/notes/todo.txt', 'buy bread\n');
await put('public/notes/blob', Buffer.from([0x61, 0x00, 0x62]).toString('base64'), 'base64');
await put('secret.txt', SECRET);
await put('public-not/secret.txt', SECRET);
await put(
  'api.ts',
  `export function hello(req: any) {
     return { status: 201, headers: { 'x-agent': 'yes', 'set-cookie': 'a=b', 'content-length': '1' }, body: { hi: req.params.name, q: req.query.q, m: req.method, b: req.body, auth: req.headers.authorization ?? null } };
   }
   export function spin() { for (;;) {} }
   export function boom() { throw new Error('nope'); }`,
);
const base = `${d.meshUrl}/agents/site`;

t.test('files with their content types and validators', async (t) => {
  const index = await fetch(`${base}/`);
  t.equal(index.status, 200);
  t.equal(index.headers.get('content-type'), 'text/html; charset=utf-8');
  t.match(await index.text(), /Hello from Site/);
  t.equal(index.headers.get('cache-control'), 'no-cache');
  t.equal(index.headers.get('x-content-type-options'), 'nosniff');
  const etag = index.headers.get('etag')!;
  t.ok(etag && index.headers.get('last-modified'));
  t.equal((await fetch(`${base}/`, { headers: { 'if-none-match': etag } })).status, 304, 'unchanged: 304');
  t.equal((await fetch(`${base}/index.html`)).status, 200);
  const css = await fetch(`${base}/style.css`);
  t.equal(css.headers.get('content-type'), 'text/css; charset=utf-8');
  const png = await fetch(`${base}/logo.png`);
  t.equal(png.headers.get('content-type'), 'image/png');
  t.same(Buffer.from(await png.arrayBuffer()), PNG, 'bytes as stored');
  const head = await fetch(`${base}/style.css`, { method: 'HEAD' });
  t.equal(head.status, 200);
  t.equal(head.headers.get('content-type'), 'text/css; charset=utf-8');
  const bare = await fetch(base, { redirect: 'manual' });
  t.equal(bare.status, 308);
  t.equal(bare.headers.get('location'), '/agents/site/');
  const folder = await fetch(`${base}/docs`, { redirect: 'manual' });
  t.equal(folder.status, 301, 'a folder without its slash redirects');
  t.equal(folder.headers.get('location'), '/agents/site/docs/');
  t.match(await (await fetch(`${base}/docs/`)).text(), '<p>docs</p>');
  t.equal((await fetch(`${base}/missing.html`)).status, 404);
});

t.test('a file without a known extension or stored type: plain text when its bytes are text', async (t) => {
  for (const path of ['notes/todo', 'notes/todo.txt']) {
    const text = await fetch(`${base}/${path}`);
    t.equal(text.headers.get('content-type'), 'text/plain; charset=utf-8', path);
    t.equal(text.headers.get('x-content-type-options'), 'nosniff');
  }
  const blob = await fetch(`${base}/notes/blob`);
  t.equal(blob.headers.get('content-type'), 'application/octet-stream', 'a NUL makes it binary');
});

t.test('traversal never reaches a file outside public/', async (t) => {
  const attempts = [
    '/agents/site/../secret.txt',
    '/agents/site/../../secret.txt',
    '/agents/site/docs/../../secret.txt',
    '/agents/site/%2e%2e/secret.txt',
    '/agents/site/%2E%2E/secret.txt',
    '/agents/site/..%2fsecret.txt',
    '/agents/site/%2e%2e%2fsecret.txt',
    '/agents/site/..%5csecret.txt',
    '/agents/site/..\\secret.txt',
    '/agents/site/%252e%252e/secret.txt',
    '/agents/site/.%2e/secret.txt',
    '/agents/site/./secret.txt',
    '/agents/site//secret.txt',
    '/agents/site/%00/secret.txt',
    '/agents/site/secret.txt%00.html',
    '/agents/site/%c0%ae%c0%ae/secret.txt',
    '/agents/site/..%2f..%2fpublic-not%2fsecret.txt',
    '/agents/site/inbox',
    '/agents/site/%69nbox',
    '/agents/site/card/../../secret.txt',
  ];
  for (const path of attempts) {
    const answer = await rawRequest(d.meshUrl, { path });
    t.ok(answer.status === 404 || answer.status === 400, `${path}: ${answer.status}`);
    t.notMatch(JSON.stringify(answer.body), SECRET, `${path} does not leak`);
  }
  const literal = await rawRequest(d.meshUrl, { path: '/agents/site/%252e%252e/x.txt' });
  t.equal(literal.status, 200, 'a file literally named %2e%2e under public/ is served (decoded once)');
  t.equal(literal.body, 'literal name');
  t.equal(
    (await rawRequest(d.meshUrl, { path: '/agents/site/card' })).status,
    200,
    'reserved names are their own routes',
  );
});

t.test('API routes run the agent lambda with a time limit', async (t) => {
  const hello = await fetch(`${base}/api/hello/world?q=1`, { headers: { authorization: 'Bearer not-for-agents' } });
  t.equal(hello.status, 201);
  t.equal(hello.headers.get('x-agent'), 'yes');
  t.equal(hello.headers.get('set-cookie'), null, 'cookies are refused (all agents share the origin)');
  t.match(hello.headers.get('content-type'), /^application\/json/);
  t.same(await hello.json(), { hi: 'world', q: '1', m: 'GET', b: null, auth: null });
  const posted = await fetch(`${base}/api/hello/you`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ n: 2 }),
  });
  t.same(await posted.json(), { hi: 'you', m: 'POST', b: { n: 2 }, auth: null });
  const started = Date.now();
  const spin = await fetch(`${base}/api/spin`);
  t.equal(spin.status, 504);
  t.match(await spin.json(), { code: 'timeout' });
  t.ok(Date.now() - started < 10_000, 'the time limit stops it');
  t.match(await (await fetch(`${d.meshUrl}/health`)).json(), { status: 'ok' }, 'the server kept answering');
  const boom = await fetch(`${base}/api/boom`);
  t.equal(boom.status, 500);
  t.match(await boom.json(), { error: /nope/ });
  t.equal((await fetch(`${base}/api/hello/world`, { method: 'DELETE' })).status, 404, 'no route for that method');
  const card = await (await fetch(`${base}/card`)).json();
  t.same(card.api, [{ method: 'GET', path: '/api/hello/:name' }], 'on_card routes are on the card');
});

t.test('a site that is not enabled serves nothing', async (t) => {
  await d.request('PATCH', `/agents/${site.id}/config`, { serving: { public: { enabled: false } } });
  t.equal((await fetch(`${base}/`)).status, 404);
  t.equal((await fetch(`${base}/api/hello/x`)).status, 201, 'API routes still answer');
});

t.test('the extension off: 503 on /network, no mesh server', async (t) => {
  const manifest = shippedManifest();
  (manifest.extensions.find((entry: any) => entry.name === 'mesh') as { enabled: boolean }).enabled = false;
  const off = await runDaemon(t, { extensions: manifest });
  const answer = await off.request('GET', '/network');
  t.equal(answer.status, 503);
  t.match(answer.body, { code: 'unavailable', error: /mesh/ });
  t.equal((await off.request('GET', '/network/peers')).status, 503);
  t.match(off.stdout(), /^agt daemon listening on http:\/\/127\.0\.0\.1:\d+\n/, 'the daemon listens');
  t.notMatch(off.stdout(), /mesh/, 'no mesh line');
  t.match(d.stdout(), /^agt mesh listening on http:\/\/127\.0\.0\.1:\d+$/m, 'the mesh line when it is on');
  t.notMatch(d.stdout(), /mesh listening on \S+:0$/m, 'with the real port');
});
