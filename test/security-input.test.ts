/**
 * Input the daemon must refuse or survive: proxy and client-address headers on loopback-only routes, case-insensitive
 * Sec-Fetch-Site and Origin, decimal-only integers in query strings, paths and headers, the one JSON
 * depth limit (HTTP 400, agent files 422 invalid_config, settings file at start), one rule for agent
 * names and meta keys, and `GET /events?agentId=` by id, handle or name. From the built daemon; the
 * agent's own tools are called by a fake model (test/helpers/tool-driver.ts).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'libsql';
import t from 'tap';
import { findConfigSecret } from '../kernel/agents/config-secrets.js';
import { findKeyMaterial, SettingsStore } from '../kernel/settings.js';
import { jsonDepthProblem, MAX_JSON_DEPTH } from '../contracts/validate.js';
import { CLIENT_ADDRESS_HEADERS, isClientAddressHeader } from '../kernel/http/guards.js';
import { createAgentFile } from './helpers/agent-file.js';
import type { AgentConfig } from '../contracts/agent-config.js';
import { runDaemon, tempDir, type SpawnedDaemon } from './helpers/daemon.js';
import { startToolDriver, type ToolDriver } from './helpers/tool-driver.js';
import { rawRequest } from './helpers/raw-http.js';
import { openSse } from './helpers/sse-client.js';

/** A printable form of a string for assertion messages (TAP output must not carry control or separator characters). */
const show = (text: string) =>
  JSON.stringify(text).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
const deepText = (levels: number, leaf = '1') => '{"a":'.repeat(levels) + leaf + '}'.repeat(levels);
const deepValue = (levels: number): unknown => JSON.parse(deepText(levels));
/**
 * Six client-address headers well-known proxies send, and fourteen more of the family seen at proxies, CDNs and
 * platforms.
 */
const PROXY_CLIENT_HEADERS = [
  'Fly-Client-IP',
  'X-Real-Client-IP',
  'Akamai-Client-IP',
  'CloudFront-Viewer-Address',
  'X-Vercel-Forwarded-For',
  'X-Original-Remote-Addr',
  'X-Vercel-Proxied-For',
  'X-AppEngine-Remote-Addr',
  'WL-Proxy-Client-IP',
  'Proxy-Client-IP',
  'HTTP-Client-IP',
  'X-Wap-Network-Client-IP',
  'Cdn-Src-Ip',
  'Ali-Cdn-Real-Ip',
  'X-Client-Address',
  'X-Source-IP',
  'X-Remote-Host',
  'X-BlueCoat-Via',
  'X-Edge-Client-IPv6',
  'Fly-Forwarded-Port',
];

/**
 * One daemon for the tests below: each makes its own agents. Started on first use; its provider `local`
 * (the agents' default) is the tool driver, a fake model that makes an agent call the tool a test names.
 * The first test runs before any identity exists (the agent-name test creates one later); the deep
 * settings file test starts one more.
 */
interface Harness {
  d: SpawnedDaemon;
  driver: ToolDriver;
  dir: string;
  /** Writes and loads an agent; its id. */
  agent(config?: Partial<AgentConfig>): Promise<string>;
}
let shared: Promise<Harness> | undefined;
const harness = () =>
  (shared ??= startToolDriver(t, undefined, 'local').then(async (driver) => {
    const d = await runDaemon(t, { settings: { providers: [driver.provider] } });
    const dir = tempDir(t, 'agt-security-');
    return {
      d,
      driver,
      dir,
      async agent(config = {}) {
        const res = await d.request('POST', '/agents/load', { filePath: await createAgentFile(dir, config) });
        if (res.status !== 200) throw new Error(`load failed: ${res.status} ${JSON.stringify(res.body)}`);
        return res.body.id as string;
      },
    };
  }));

t.test('loopback-only routes refuse every proxy and client-address header', async (t) => {
  const { d } = await harness();
  const auth = { authorization: `Bearer ${d.token}` };
  const plain = await rawRequest(d.url, { method: 'POST', path: '/identity/confirm-backup', headers: auth });
  t.equal(plain.status, 409, 'a local caller passes the guard (no identity yet: 409)');
  const names = [
    ...CLIENT_ADDRESS_HEADERS,
    'X-Forwarded-For',
    'X-Forwarded-Host',
    'X-Forwarded-Proto',
    'X-Forwarded-Port',
    'X-Forwarded-Server',
    'X-Forwarded-Prefix',
    'X-Forwarded-Ssl',
    'X-Forwarded-Anything',
    'X-Forwarded',
    'X-Client-IP',
    'True-Client-IP',
    'CF-Connecting-IP',
    'Fastly-Client-IP',
    'X-Cluster-Client-IP',
    'X-Original-Forwarded-For',
    'X-Real-IP',
    'Forwarded',
    'Via',
    // Twenty more of the family, none of them listed anywhere (the rule catches them).
    ...PROXY_CLIENT_HEADERS,
  ];
  for (const name of names) {
    const res = await rawRequest(d.url, {
      method: 'POST',
      path: '/identity/confirm-backup',
      headers: { ...auth, [name]: '127.0.0.1' },
    });
    t.equal(res.status, 403, name);
    t.equal(res.body.code, 'loopback_only', name);
  }
  t.equal(
    (await rawRequest(d.url, { path: '/identity', headers: { ...auth, 'X-Forwarded-Port': '80' } })).status,
    200,
    'other routes do not care',
  );
  const ordinary = {
    ...auth,
    'user-agent': 'agt-cli',
    accept: 'application/json',
    'accept-language': 'en',
    'cache-control': 'no-cache',
    'x-request-id': '1',
    traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    'idempotency-key': 'k',
    'sec-fetch-mode': 'cors',
    'x-agt-client': 'cli',
  };
  t.equal(
    (await rawRequest(d.url, { method: 'POST', path: '/identity/confirm-backup', headers: ordinary })).status,
    409,
    'ordinary headers keep a request local',
  );
});

t.test('the client-address family is a rule on the name', async (t) => {
  for (const name of [
    ...PROXY_CLIENT_HEADERS,
    ...CLIENT_ADDRESS_HEADERS,
    'x_forwarded_for',
    'X-FORWARDED-FOR',
    'x-real-ip-chain',
  ]) {
    t.equal(isClientAddressHeader(name), true, name);
  }
  for (const name of [
    'host',
    'user-agent',
    'accept',
    'authorization',
    'content-type',
    'origin',
    'referer',
    'sec-fetch-site',
    'sec-ch-ua-platform',
    'x-agt-local-proof',
    'idempotency-key',
    'last-event-id',
    'cookie',
    'traceparent',
    'x-request-id',
    'if-none-match',
  ]) {
    t.equal(isClientAddressHeader(name), false, name);
  }
});

t.test('Sec-Fetch-Site and Origin are compared case-insensitively', async (t) => {
  const { d } = await harness();
  const port = new URL(d.url).port;
  const auth = { authorization: `Bearer ${d.token}` };
  for (const site of ['cross-site', 'Cross-Site', 'SAME-SITE', ' same-site ', 'none, cross-site']) {
    const res = await rawRequest(d.url, { path: '/agents', headers: { ...auth, 'Sec-Fetch-Site': site } });
    t.equal(res.status, 403, `Sec-Fetch-Site: ${site}`);
    t.equal(res.body.code, 'cross_origin');
  }
  for (const site of ['same-origin', 'Same-Origin', 'none', 'NONE']) {
    t.equal(
      (await rawRequest(d.url, { path: '/agents', headers: { ...auth, 'Sec-Fetch-Site': site } })).status,
      200,
      `Sec-Fetch-Site: ${site}`,
    );
  }
  const host = { host: `LocalHost:${port}` };
  t.equal(
    (await rawRequest(d.url, { path: '/agents', headers: { ...auth, ...host, origin: `HTTP://LOCALHOST:${port}` } }))
      .status,
    200,
    'same origin in other case',
  );
  t.equal(
    (await rawRequest(d.url, { path: '/agents', headers: { ...auth, origin: `http://evil.example:${port}` } })).body
      .code,
    'cross_origin',
  );
});

t.test('integers in query strings, paths and headers are plain decimal and in range', async (t) => {
  const h = await harness();
  const d = h.d;
  const id = await h.agent({ umbilical: { log: { enabled: true } } });
  const bad = [
    'Infinity',
    '-Infinity',
    '1e400',
    '1e3',
    '0x10',
    '1.5',
    '%205',
    '',
    'NaN',
    '99999999999999999999',
    '9007199254740993',
    '+5',
    '05',
  ];
  const targets = [
    (v: string) => `/agents/${id}/umbilical/events?since_seq=${v}`,
    (v: string) => `/agents/${id}/umbilical/events?limit=${v}`,
    (v: string) => `/agents/${id}/loop?offset=${v}`,
    (v: string) => `/agents/${id}/loop?limit=${v}`,
    (v: string) => `/agents/${id}/tables/agt_audit?offset=${v}`,
    (v: string) => `/agents/${id}/tables/agt_audit?limit=${v}`,
    (v: string) => `/agents/${id}/logs?limit=${v}`,
    (v: string) => `/agents/${id}/logs/after?afterId=${v}`,
    (v: string) => `/agents/${id}/chat?limit=${v}`,
    (v: string) => `/agents/${id}/tasks?limit=${v}`,
    (v: string) => `/agents/${id}/context?items=${v}`,
    (v: string) => `/events?since=${v}`,
  ];
  for (const target of targets) {
    for (const value of bad) {
      const res = await d.request('GET', target(value));
      t.equal(res.status, 400, `${target(value)} -> ${res.status}`);
      t.equal(res.body?.code, 'bad_request');
    }
    // A valid /events request would stream: only the others are checked for a plain answer.
    if (!target('5').startsWith('/events'))
      t.equal((await d.request('GET', target('5'))).status, 200, `${target('5')} is fine`);
  }
  for (const value of ['Infinity', '1e400', '0x10', '-1', '1.5', '', '7a', '99999999999999999999']) {
    const res = await rawRequest(d.url, {
      path: '/events',
      headers: { authorization: `Bearer ${d.token}`, 'Last-Event-ID': value },
    });
    t.equal(res.status, 400, `Last-Event-ID ${show(value)}`);
    t.equal(res.body.code, 'bad_request');
  }
  for (const value of ['Infinity', '1e400', '0x10', '1.5', '1e3']) {
    const res = await d.request('DELETE', `/agents/${id}/timers/${value}`);
    t.equal(res.status, 400, `timerId ${value}`);
  }
  t.equal((await d.request('DELETE', `/agents/${id}/timers/12`)).status, 200, 'a decimal timer id passes validation');
});

t.test('one JSON depth limit: 400 over HTTP, before any walker runs', async (t) => {
  t.equal(MAX_JSON_DEPTH, 64);
  t.equal(jsonDepthProblem(deepValue(64)), null, '64 levels are fine');
  t.match(jsonDepthProblem(deepValue(65)), /^\/a\/a/);
  t.equal(
    jsonDepthProblem(JSON.parse('['.repeat(100_000) + ']'.repeat(100_000))) !== null,
    true,
    'measured without recursion',
  );
  // The walkers themselves no longer recurse.
  t.equal(findKeyMaterial(deepValue(100_000)), null);
  t.equal(findConfigSecret(deepValue(100_000)), null);
  t.match(findKeyMaterial(JSON.parse(deepText(50_000, '{"api_key":"x"}'))), /\/api_key$/);
  t.match(findConfigSecret(JSON.parse(deepText(50_000, '{"token":"x"}')))!.path, /\/token$/);

  const h = await harness();
  const d = h.d;
  const id = await h.agent();
  const config = (await d.request('GET', `/agents/${id}/config`)).body.config;
  const cases: Array<[string, string, string]> = [
    ['PATCH', '/settings', deepText(20_000)],
    ['PATCH', '/settings', `{"providers":${deepText(20_000)}}`],
    ['PUT', '/settings/agentsFolder', deepText(20_000)],
    ['PUT', `/agents/${id}/config`, JSON.stringify({ ...config, security: 'X' }).replace('"X"', deepText(20_000))],
    ['POST', `/agents/${id}/trigger`, `{"type":"on_inbox","data":${deepText(20_000)}}`],
    ['POST', `/agents/${id}/chat`, `{"text":"x","extra":${deepText(70)}}`],
  ];
  for (const [method, path, body] of cases) {
    const res = await d.request(method, path, body);
    t.equal(res.status, 400, `${method} ${path}`);
    t.equal(res.body.code, 'bad_request');
    t.match(res.body.error, /nests deeper than 64 levels/);
  }
  const ok = await d.request('PUT', `/agents/${id}/config`, { ...config, security: deepValue(40) });
  t.equal(ok.status, 200, 'a config within the limit is fine');
  t.equal((await d.request('GET', '/health')).status, 200);
});

t.test(
  'a deeply nested config in a file is 422 load_failed invalid_config; a deep settings file stops the start',
  async (t) => {
    const dir = tempDir(t);
    const { d } = await harness();
    const path = await createAgentFile(dir, { name: 'deep' });
    const db = new Database(path);
    const row = db.prepare("SELECT value FROM agt_config WHERE key = 'config'").get() as { value: string };
    const config = JSON.parse(row.value);
    db.prepare("UPDATE agt_config SET value = ? WHERE key = 'config'").run(
      JSON.stringify({ ...config, security: 'X' }).replace('"X"', deepText(20_000)),
    );
    db.close();
    const load = await d.request('POST', '/agents/load', { filePath: path });
    t.equal(load.status, 422);
    t.match(load.body, { code: 'load_failed', reason: 'invalid_config', filePath: path });
    t.match(load.body.error, /nests deeper than 64 levels/);
    const review = await d.request('GET', `/agents/review?filePath=${encodeURIComponent(path)}`);
    t.equal(review.status, 422);
    t.equal(review.body.reason, 'invalid_config');

    const settingsDir = tempDir(t);
    const settingsPath = join(settingsDir, 'settings.json');
    writeFileSync(settingsPath, `{"providers":[${deepText(20_000)}]}`);
    const problem = /settings file .* is invalid at \/providers\/0\/a.*nests deeper than 64 levels/;
    t.throws(() => new SettingsStore(settingsPath), problem);
    const refused = await runDaemon(t, { dataDir: settingsDir });
    t.equal(refused.url, '', 'the daemon does not start');
    t.not(await refused.exited, 0, 'it exits with an error');
    t.match(refused.stderr(), problem, 'saying why');
  },
);

t.test('one rule for agent names: create, config PUT, the config tool and load', async (t) => {
  const h = await harness();
  const d = h.d;
  const id = await h.agent({ name: 'Plain', tools: [{ name: 'sys_update_config', enabled: true }] });
  const config = (await d.request('GET', `/agents/${id}/config`)).body.config;
  for (const name of [
    'a\u0007b',
    'a\u0000b',
    'line\nbreak',
    ' padded',
    'padded ',
    '',
    '!!!',
    'x'.repeat(65),
    'bidi\u202Eevil',
    'a\u0085b',
  ]) {
    const res = await d.request('PUT', `/agents/${id}/config`, { ...config, name });
    t.equal(res.status, 400, `config name ${show(name)}`);
    t.equal(res.body.code, 'bad_request');
  }
  t.equal((await d.request('PUT', `/agents/${id}/config`, { ...config, name: 'Ünïcode 日本 ok' })).status, 200);

  t.equal((await d.request('POST', '/identity/create', { passphrase: 'owner passphrase' })).status, 201);
  for (const name of ['a\u0007b', 'bidi\u202Eevil', 'a\u2028b']) {
    const res = await d.request('POST', '/agents/create', { name, directory: h.dir });
    t.equal(res.status, 400, `create name ${show(name)}`);
  }

  const result = await h.driver.run(d, id, 'sys_update_config', { patch: { name: 'evil\u0000name' } });
  t.match(result, /^Error: .*\/name/, 'the tool refuses, naming the field');
  t.equal((await d.request('GET', `/agents/${id}/config`)).body.config.name, 'Ünïcode 日本 ok');

  const path = await createAgentFile(h.dir, { name: 'ctrl\u0001name' }, { fileName: 'ctrl.agt' });
  const load = await d.request('POST', '/agents/load', { filePath: path });
  t.equal(load.status, 422);
  t.match(load.body, { code: 'load_failed', reason: 'invalid_config', path: '/name' });
});

t.test('one rule for meta keys: routes and tools refuse NUL, traversal and slashes', async (t) => {
  const h = await harness();
  const d = h.d;
  const id = await h.agent();
  const auth = { authorization: `Bearer ${d.token}` };
  for (const key of [
    '%00',
    'a%00b',
    '..',
    '%2e%2e',
    'a%2Fb',
    '..%2F..%2Fx',
    'a%2F..%2Fb',
    '.hidden',
    'sp%20ace',
    'x'.repeat(129),
    '%0A',
  ]) {
    for (const [method, suffix, body] of [
      ['PUT', '', '{"value":"1"}'],
      ['DELETE', '', undefined],
      ['PATCH', '/protection', '{"protection":"readonly"}'],
    ] as const) {
      const headers = body === undefined ? auth : { ...auth, 'content-type': 'application/json' };
      const res = await rawRequest(d.url, { method, path: `/agents/${id}/meta/${key}${suffix}`, headers, body });
      t.equal(res.status, 400, `${method} meta key ${key.slice(0, 20)}`);
      t.equal(res.body.code, 'bad_request');
    }
  }
  t.equal((await d.request('PUT', `/agents/${id}/meta/user.mood:1`, { value: 'good' })).status, 200);
  const results = [
    await h.driver.run(d, id, 'sys_set_meta', { key: '../escape', value: 'x' }),
    await h.driver.run(d, id, 'sys_set_meta', { key: 'a\u0000b', value: 'x' }),
    await h.driver.run(d, id, 'sys_delete_meta', { key: 'a/b' }),
    await h.driver.run(d, id, 'sys_set_meta', { key: 'fine_key', value: 'x' }),
  ];
  t.same(
    results.map((r) => r.startsWith('Error: ')),
    [true, true, true, false],
  );
  t.same(
    (await d.request('GET', `/agents/${id}/meta`)).body.entries.map((e: { key: string }) => e.key),
    ['fine_key', 'user.mood:1'],
  );
});

t.test('GET /events?agentId= takes an id, handle or name; 404 for an unknown agent', async (t) => {
  const h = await harness();
  const d = h.d;
  const id = await h.agent({ name: 'Helper', handle: 'helper-handle' });
  const other = await h.agent({ name: 'Someone Else' });
  const auth = { authorization: `Bearer ${d.token}` };
  /** Changes an agent's description: an agent.config.changed event of that agent. */
  const touch = async (agentId: string, description: string) => {
    const { config } = (await d.request('GET', `/agents/${agentId}/config`)).body;
    t.equal((await d.request('PUT', `/agents/${agentId}/config`, { ...config, description })).status, 200);
  };
  for (const given of [id, 'helper-handle', 'Helper']) {
    const stream = await openSse(`${d.url}/events?agentId=${encodeURIComponent(given)}`, auth);
    t.equal(stream.status, 200, given);
    t.equal((await stream.nextEvent()).event, 'stream.hello');
    await touch(other, `not for ${given}`);
    await touch(id, `for ${given}`);
    const frame = await stream.nextEvent();
    t.equal(frame.data.event.agent_id, id, `frames of ${given} arrive, not another agent's`);
    stream.close();
  }
  const unknown = await openSse(`${d.url}/events?agentId=Nobody`, auth);
  t.equal(unknown.status, 404);
  t.equal(unknown.body.code, 'not_found');
  for (const fileName of ['twin-1.agt', 'twin-2.agt']) {
    const path = await createAgentFile(h.dir, { name: 'Twin' }, { fileName });
    t.equal((await d.request('POST', '/agents/load', { filePath: path })).status, 200);
  }
  const ambiguous = await openSse(`${d.url}/events?agentId=Twin`, auth);
  t.equal(ambiguous.status, 409);
  t.equal(ambiguous.body.code, 'ambiguous_agent');
});
