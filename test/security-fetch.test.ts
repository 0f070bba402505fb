/**
 * `sys_fetch` cannot reach the daemon's host or its private networks: loopback,
 * private, link-local addresses are refused after DNS resolution and on every redirect hop, unless the
 * owner lists the host in `security.fetch_allow_hosts` (owner-only: the agent cannot grant it). On the
 * built daemon; a name that resolves to loopback (a DNS answer only in-process can fake) is in
 * security-fetch-internals.test.ts.
 */
import t from 'tap';
import { fetchAll, hitServer } from './helpers/sys-fetch.js';
import { blockedAddressKind, hostAllowed } from '../kernel/agents/fetch-policy.js';
import { wireDaemon, type WireDaemon } from './helpers/wire-daemon.js';

/**
 * One daemon for the file. Its owner's ceiling (settings agentCeiling) lists one host, `outer`, a local
 * server that redirects to `inner` (never to be reached) and to itself.
 */
let h: WireDaemon;
let inner: { port: number; hits: string[] };
let outer: { port: number; hits: string[] };
t.before(async () => {
  inner = await hitServer(t, (_req, res) => res.end('inner secret'));
  outer = await hitServer(t, (req, res) => {
    if (req.url === '/to-inner') return res.writeHead(302, { location: `http://127.0.0.1:${inner.port}/` }).end();
    if (req.url === '/to-localhost') return res.writeHead(307, { location: `http://localhost:${inner.port}/` }).end();
    if (req.url === '/to-self') return res.writeHead(301, { location: '/hello' }).end();
    if (req.url === '/loop') return res.writeHead(302, { location: '/loop' }).end();
    res.setHeader('content-type', 'text/plain');
    res.end(`you asked for ${req.url}`);
  });
  h = await wireDaemon(t, { settings: { agentCeiling: { fetchAllowHosts: [`127.0.0.1:${outer.port}`] } } });
});

t.test(
  'address policy: loopback, private, link-local and embedded-IPv4 forms are refused; public ones pass',
  async (t) => {
    for (const address of [
      '127.0.0.1',
      '127.255.0.9',
      '10.0.0.1',
      '172.16.5.5',
      '192.168.1.1',
      '100.64.0.1',
      '169.254.169.254',
      '0.0.0.0',
      '224.0.0.251',
      '255.255.255.255',
      '::1',
      '::',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:10.0.0.1',
      'fe80::1',
      'fe80::1%lo',
      'fc00::1',
      'fd00::5',
      'ff02::1',
      '64:ff9b::7f00:1',
      '2002:c0a8:101::1',
    ]) {
      t.not(blockedAddressKind(address), null, `${address} refused`);
    }
    for (const address of [
      '1.1.1.1',
      '8.8.8.8',
      '100.128.0.1',
      '172.32.0.1',
      '2606:4700:4700::1111',
      '::ffff:8.8.8.8',
    ]) {
      t.equal(blockedAddressKind(address), null, `${address} allowed`);
    }
    const allow = ['127.0.0.1:8080', 'Intranet.Local', '[::1]:9000'];
    t.ok(hostAllowed(new URL('http://127.0.0.1:8080/x'), allow));
    t.notOk(hostAllowed(new URL('http://127.0.0.1:8081/x'), allow), 'another port');
    t.ok(hostAllowed(new URL('https://intranet.local/'), allow), 'names compare case-insensitively, any port');
    t.ok(hostAllowed(new URL('http://[::1]:9000/'), allow));
    t.notOk(hostAllowed(new URL('http://[::1]:80/'), allow));
  },
);

t.test('a redirect from an allowed host to a loopback one is refused; the allowed host itself works', async (t) => {
  const id = await h.agent({ security: { fetch_allow_hosts: [`127.0.0.1:${outer.port}`] } });
  const base = `http://127.0.0.1:${outer.port}`;
  const [toInner, toLocalhost, toSelf, loop, plain] = await fetchAll(h, id, [
    { url: `${base}/to-inner` },
    { url: `${base}/to-localhost` },
    { url: `${base}/to-self` },
    { url: `${base}/loop` },
    { url: `${base}/plain` },
  ]);
  t.match(toInner!.content, /refuses 127\.0\.0\.1: loopback/);
  t.equal(toInner!.isError, true);
  t.match(toLocalhost!.content, /refuses localhost \(resolves to 127\.0\.0\.1\): loopback/);
  t.same(inner.hits, [], 'the loopback target was never reached');
  t.equal(
    toSelf!.content,
    'status: 200\ncontent-type: text/plain\ncontent-length: 20\ntruncated: false\n\nyou asked for /hello',
    'a redirect within the allowed host is followed',
  );
  t.match(loop!.content, /more than 20 redirects/);
  t.equal(
    plain!.content,
    'status: 200\ncontent-type: text/plain\ncontent-length: 20\ntruncated: false\n\nyou asked for /plain',
  );
});

t.test('the allow list is owner-only: the agent cannot grant itself a host', async (t) => {
  const id = await h.agent({ tools: [{ name: 'sys_update_config', enabled: true }] });
  h.model.push(
    { toolCalls: [{ name: 'sys_update_config', args: { patch: { security: { fetch_allow_hosts: ['127.0.0.1'] } } } }] },
    { text: 'tried' },
  );
  await h.ended((await h.d.request('POST', `/agents/${id}/chat`, { text: 'grant yourself' })).body.turnId);
  const result = h.model.calls
    .at(-1)!
    .messages.filter((m) => m.role === 'tool')
    .at(-1) as { content: string; isError?: boolean };
  t.equal(result.isError, true);
  t.match(result.content, /security is locked by the owner/);
  t.same((await h.d.request('GET', `/agents/${id}/config`)).body.config.security, {});
  // The owner can, and a malformed list is refused.
  const config = (await h.d.request('GET', `/agents/${id}/config`)).body.config;
  t.equal(
    (
      await h.d.request('PUT', `/agents/${id}/config`, {
        ...config,
        security: { fetch_allow_hosts: ['127.0.0.1:8080'] },
      })
    ).status,
    200,
  );
  t.equal(
    (await h.d.request('PUT', `/agents/${id}/config`, { ...config, security: { fetch_allow_hosts: 'everything' } }))
      .status,
    400,
  );
});
