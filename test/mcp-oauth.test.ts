/**
 * OAuth 2.1 sign-in to an HTTP MCP server (docs/mcp.md "OAuth sign-in"), black box: the built daemon,
 * and a real OAuth-protected MCP server with its authorization server on loopback (the SDK's server half,
 * test/fixtures/mcp/oauth-server.mjs, a child process). The owner signs in through the daemon's routes,
 * the "browser" follows the authorization server's redirect back to the daemon's loopback listener, an
 * agent then uses the server's tool; an expired token is refreshed; a restart keeps the sign-in; logout
 * ends it; `agt mcp login` prints the URL and waits for the browser (`--open` runs a fake `xdg-open` put first on
 * PATH, which plays the browser), `agt mcp logout` signs out; an answer
 * naming another issuer is refused. A call the server answers 403 `insufficient_scope` fails with
 * `mcp_signin_required` and the next sign-in asks for the union of scopes (step-up). A per-agent
 * registration signs each agent in with its own account, and an agent without one never uses another's.
 * No token ever shows in the daemon's output, its events, its answers, the agent's log or any file of the
 * data directory.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { join } from 'node:path';
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { agtInProcess } from './helpers/cli-in-process.js';
import { ROOT, runDaemon, tempDir } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';
import { startOAuthFixture } from './helpers/oauth-fixture.js';
import { rawRequest } from './helpers/raw-http.js';
import { startToolDriver } from './helpers/tool-driver.js';

const urls = await startOAuthFixture(t);
const fixtureState = async () =>
  (await (await fetch(new URL('/test/state', urls.issuer))).json()) as {
    issued: string[];
    refreshes: number;
    unauthorized: number;
    registrations: number;
  };

const driver = await startToolDriver(t);
const dir = tempDir(t, 'agt-mcp-oauth-');
let d = await runDaemon(t, {
  settings: {
    providers: [driver.provider],
    mcpServers: [
      { name: 'remote', type: 'http', url: urls.mcp, oauth: {} },
      { name: 'own', type: 'http', url: urls.mcp, oauth: { signIn: 'per-agent' } },
    ],
  },
});
const filePath = await createAgentFile(dir, {
  model: driver.model,
  mcp: { servers: [{ name: 'remote', transport: 'http' }] },
});
const loaded = await d.request('POST', '/agents/load', { filePath });
if (loaded.status !== 200) throw new Error(`the agent did not load: ${JSON.stringify(loaded.body)}`);
const agentId: string = loaded.body.id;
const logs = [await eventLog(t, d)];

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const end = Date.now() + 20_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`failsafe: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
const serverView = async (agent = agentId, server = 'remote') =>
  (await d.request('GET', `/agents/${agent}/mcp`)).body.servers.find((s: { name: string }) => s.name === server);
const connected = (agent = agentId, server = 'remote') =>
  until(`${server} connected`, async () =>
    (await serverView(agent, server))?.status === 'connected' ? true : undefined,
  );

/**
 * Signs in as the owner would: start, "open" the URL (the authorization server approves), come back.
 * `login` is the sign-in route (another server's, or with `?agent=`); `scope` the scopes it must ask for.
 */
async function signIn(
  login = '/mcp/servers/remote/login',
  scope = 'mcp:tools',
): Promise<{ status: number; page: string }> {
  const started = await d.request('POST', login);
  t.equal(started.status, 200, 'the sign-in starts');
  const authorizationUrl = new URL(started.body.authorizationUrl);
  t.equal(authorizationUrl.origin, new URL(urls.issuer).origin, 'the URL is the authorization server’s');
  t.equal(authorizationUrl.searchParams.get('code_challenge_method'), 'S256', 'PKCE with S256');
  t.ok(authorizationUrl.searchParams.get('state'), 'a state');
  t.equal(authorizationUrl.searchParams.get('resource'), urls.mcp, 'the resource indicator names the MCP server');
  t.equal(authorizationUrl.searchParams.get('scope'), scope, 'the scopes');
  const approved = await fetch(authorizationUrl, { redirect: 'manual' });
  t.equal(approved.status, 302, 'the authorization server sends the browser back');
  const back = new URL(approved.headers.get('location')!);
  t.equal(back.hostname, '127.0.0.1', 'to the daemon on loopback');
  t.not(back.port, new URL(d.url).port, 'on a listener of its own, not the main API');
  return browserGet(back);
}

/** A browser's top-level navigation from another site (fetch would send its own Sec-Fetch-Mode). */
function browserGet(url: URL): Promise<{ status: number; page: string }> {
  return new Promise((done, fail) => {
    const headers = { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' };
    get(url, { headers }, (res) => {
      let page = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (page += chunk));
      res.on('end', () => done({ status: res.statusCode ?? 0, page }));
    }).on('error', fail);
  });
}

t.test('before sign-in the server is skipped with the reason', async (t) => {
  const view = await until('remote skipped', async () => {
    const v = await serverView();
    return v?.status === 'skipped' ? v : undefined;
  });
  t.match(view.error, /^mcp_signin_required: not signed in: the owner signs in with agt mcp login remote/);
  const state = await d.request('GET', '/mcp/servers/remote/login');
  t.same(state.body, { server: 'remote', signedIn: false, pending: false });
});

t.test('sign in, then the agent uses the tool', async (t) => {
  const { status, page } = await signIn();
  t.equal(status, 200, 'the callback page says signed in');
  t.match(page, /signed in to remote/);
  const state = await d.request('GET', '/mcp/servers/remote/login');
  t.equal(state.body.signedIn, true);
  t.equal(state.body.scope, 'mcp:tools', 'the scope the challenge named');
  t.ok(state.body.expiresAt > Date.now());
  await connected();
  const result = await driver.run(d, agentId, 'mcp_remote_whoami', {});
  t.match(result, /signed in as client .+ with mcp:tools/, 'the tool ran with the owner’s token');
  t.equal((await fixtureState()).registrations, 1, 'the client registered itself once (dynamic registration)');
});

t.test('an expired token is refreshed on the 401', async (t) => {
  await fetch(new URL('/test/expire', urls.issuer), { method: 'POST' });
  const result = await driver.run(d, agentId, 'mcp_remote_whoami', {});
  t.match(result, /signed in as client/, 'the call still succeeds');
  t.ok((await fixtureState()).refreshes >= 1, 'through the refresh token');
});

t.test('a token about to expire is refreshed before the call, without a 401', async (t) => {
  await fetch(new URL('/test/short-lived', urls.issuer), { method: 'POST' });
  await fetch(new URL('/test/expire', urls.issuer), { method: 'POST' });
  // The 401 refresh brings a token that lives 30 s: within the minute before expiry.
  t.match(await driver.run(d, agentId, 'mcp_remote_whoami', {}), /signed in as client/);
  const before = await fixtureState();
  t.match(await driver.run(d, agentId, 'mcp_remote_whoami', {}), /signed in as client/);
  const after = await fixtureState();
  t.equal(after.refreshes, before.refreshes + 1, 'refreshed once more');
  t.equal(after.unauthorized, before.unauthorized, 'before the server refused anything');
});

t.test('step-up: a call the server answers insufficient_scope needs a sign-in with more scopes', async (t) => {
  const failed = await driver.run(d, agentId, 'mcp_remote_admin', {});
  t.match(failed, /mcp_signin_required: MCP server remote needs a sign-in with more scopes \(mcp:tools mcp:admin\)/);
  t.match(failed, /agt mcp login remote/, 'the error says what the owner does');
  const state = (await d.request('GET', '/mcp/servers/remote/login')).body;
  t.equal(state.signedIn, true, 'still signed in: the calls the sign-in allows go on');
  t.equal(state.scopeNeeded, 'mcp:tools mcp:admin', 'sign-in needed (more scopes): the union');
  t.match(await driver.run(d, agentId, 'mcp_remote_whoami', {}), /with mcp:tools \(/, 'other tools still run');
  // The owner signs in again: the browser is asked for the union (a refresh would not grant more).
  const { status } = await signIn('/mcp/servers/remote/login', 'mcp:tools mcp:admin');
  t.equal(status, 200);
  const after = (await d.request('GET', '/mcp/servers/remote/login')).body;
  t.equal(after.scope, 'mcp:tools mcp:admin', 'granted');
  t.notOk('scopeNeeded' in after, 'nothing more needed');
  await connected();
  t.match(
    await driver.run(d, agentId, 'mcp_remote_admin', {}),
    /admin done with mcp:tools mcp:admin/,
    'the call works',
  );
});

t.test('a restart keeps the sign-in', async (t) => {
  d = await d.restart();
  logs.push(await eventLog(t, d));
  t.equal((await d.request('POST', '/agents/load', { filePath })).status, 200);
  await connected();
  t.match(await driver.run(d, agentId, 'mcp_remote_whoami', {}), /signed in as client/);
});

t.test('an agent cannot send its own Authorization to an OAuth server', async (t) => {
  const config = (await d.request('GET', `/agents/${agentId}/config`)).body.config;
  const put = await d.request('PUT', `/agents/${agentId}/config`, {
    ...config,
    mcp: { servers: [{ name: 'remote', transport: 'http', bearer_token_env_var: 'X' }] },
  });
  t.equal(put.status, 400, 'refused at config time');
  t.match(JSON.stringify(put.body), /bearer_token_env_var/);
});

t.test('per-agent sign-in: each agent its own account, never another agent’s', async (t) => {
  const load = async (name: string) => {
    const path = await createAgentFile(dir, {
      name,
      model: driver.model,
      mcp: { servers: [{ name: 'own', transport: 'http' }] },
    });
    const answer = await d.request('POST', '/agents/load', { filePath: path });
    t.equal(answer.status, 200);
    return answer.body.id as string;
  };
  const a = await load('alice');
  const b = await load('bob');
  const skipped = (agent: string) =>
    until('own skipped', async () => {
      const view = await serverView(agent, 'own');
      return view?.status === 'skipped' ? view : undefined;
    });
  t.match((await skipped(a)).error, /^mcp_signin_required: not signed in for this agent/);
  t.match((await skipped(b)).error, `agt mcp login own --agent ${b}`);
  t.equal((await d.request('POST', '/mcp/servers/own/login')).status, 400, 'the agent is named');
  t.equal((await d.request('POST', `/mcp/servers/remote/login?agent=${a}`)).status, 400, 'not for an owner sign-in');
  t.equal((await d.request('GET', '/mcp/servers/own/login?agent=nobody')).status, 404);

  t.equal((await signIn(`/mcp/servers/own/login?agent=alice`)).status, 200, 'signed in for alice (by name)');
  const stateA = (await d.request('GET', `/mcp/servers/own/login?agent=${a}`)).body;
  t.same([stateA.agentId, stateA.signedIn], [a, true]);
  t.equal((await d.request('GET', `/mcp/servers/own/login?agent=${b}`)).body.signedIn, false, 'not bob');
  await connected(a, 'own');
  const grantA = /\(grant (\d+)\)/.exec(await driver.run(d, a, 'mcp_own_whoami', {}))?.[1];
  t.ok(grantA, 'alice’s call ran with a sign-in');
  t.equal((await serverView(b, 'own')).status, 'skipped', 'bob stays without one');
  t.notMatch(await driver.run(d, b, 'mcp_own_whoami', {}), /signed in as/, 'bob cannot use alice’s');
  t.equal((await d.request('POST', `/agents/${b}/mcp/own/restart`)).body.status, 'skipped', 'not even on a restart');

  t.equal((await signIn(`/mcp/servers/own/login?agent=${b}`)).status, 200, 'signed in for bob');
  await connected(b, 'own');
  const grantB = /\(grant (\d+)\)/.exec(await driver.run(d, b, 'mcp_own_whoami', {}))?.[1];
  t.ok(grantB);
  t.not(grantB, grantA, 'bob’s own account');
  t.equal(/\(grant (\d+)\)/.exec(await driver.run(d, a, 'mcp_own_whoami', {}))?.[1], grantA, 'alice keeps hers');

  // More scopes are the account's own: bob's step-up names bob and leaves alice's sign-in alone.
  t.match(await driver.run(d, b, 'mcp_own_admin', {}), `agt mcp login own --agent ${b}`);
  t.equal((await d.request('GET', `/mcp/servers/own/login?agent=${b}`)).body.scopeNeeded, 'mcp:tools mcp:admin');
  t.notOk('scopeNeeded' in (await d.request('GET', `/mcp/servers/own/login?agent=${a}`)).body, 'not alice');

  t.same((await d.request('DELETE', `/mcp/servers/own/login?agent=${a}`)).body, {
    server: 'own',
    agentId: a,
    signedOut: true,
  });
  await skipped(a);
  t.equal((await serverView(b, 'own')).status, 'connected', 'bob’s sign-in is his own');
});

t.test('no token anywhere the owner or an agent can read', async (t) => {
  const { issued } = await fixtureState();
  t.ok(issued.length >= 4, 'tokens were issued');
  const seen: Array<[string, string]> = [
    ['stdout', d.stdout()],
    ['stderr', d.stderr()],
    ['events', JSON.stringify(logs.map((l) => l.events))],
    ['GET /mcp', JSON.stringify((await d.request('GET', '/mcp')).body)],
    ['agent mcp', JSON.stringify((await d.request('GET', `/agents/${agentId}/mcp`)).body)],
    ['agent logs', JSON.stringify((await d.request('GET', `/agents/${agentId}/logs?limit=500`)).body)],
    ['login state', JSON.stringify((await d.request('GET', '/mcp/servers/remote/login')).body)],
    ['agent config', JSON.stringify((await d.request('GET', `/agents/${agentId}/config`)).body)],
  ];
  const walk = (folder: string): string[] =>
    readdirSync(folder).flatMap((name) => {
      const path = join(folder, name);
      return statSync(path).isDirectory() ? walk(path) : [path];
    });
  for (const file of [...walk(d.dataDir), filePath]) seen.push([file, readFileSync(file).toString('latin1')]);
  for (const value of issued)
    for (const [where, text] of seen) if (text.includes(value)) t.fail(`a token shows in ${where}`);
  t.ok(
    walk(d.dataDir).some((f) => f.endsWith(join('extension-secrets', 'mcp.json'))),
    'the tokens are in the sealed store',
  );
});

t.test('logout ends the sign-in', async (t) => {
  const out = await d.request('DELETE', '/mcp/servers/remote/login');
  t.same(out.body, { server: 'remote', signedOut: true });
  await until('remote skipped', async () => ((await serverView())?.status === 'skipped' ? true : undefined));
  t.equal((await d.request('GET', '/mcp/servers/remote/login')).body.signedIn, false);
});

/** `agt mcp login remote` as a person runs it (the built CLI), its output gathered; killed at the test's end. */
function agtLogin(t: { teardown(fn: () => void): void }, env: NodeJS.ProcessEnv, more: string[]) {
  const child = spawn(process.execPath, [join(ROOT, 'bin/agt.mjs'), 'mcp', 'login', 'remote', ...more], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((done) => child.once('close', done));
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

t.test('agt mcp login prints the URL and waits for the browser; agt mcp logout', async (t) => {
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: dir,
    NO_COLOR: '1',
    AGT_DAEMON_URL: d.url,
    AGT_DAEMON_TOKEN: d.token,
  };
  const login = agtLogin(t, env, []);
  const printed = await new Promise<string>((done, fail) => {
    const found = () => {
      const url = /^(http\S+)$/m.exec(login.stdout())?.[1];
      if (url) done(url);
    };
    login.child.stdout.on('data', found);
    void login.exited.then(() =>
      fail(new Error(`agt mcp login ended without a URL: ${login.stdout()} ${login.stderr()}`)),
    );
  });
  t.match(login.stdout(), /open this URL in a browser on this machine to sign in to remote/);
  const approved = await fetch(printed, { redirect: 'manual' });
  t.equal((await browserGet(new URL(approved.headers.get('location')!))).status, 200, 'the browser came back');
  t.equal(await login.exited, 0, login.stderr());
  t.match(login.stdout(), /signed in to remote\n$/, 'it waited for the sign-in to finish');
  await connected();
  t.match(await driver.run(d, agentId, 'mcp_remote_whoami', {}), /signed in as client/);
  const out = await agtInProcess(['mcp', 'logout', 'remote'], { ...env, NO_COLOR: '1' });
  t.equal(out.code, 0, out.stderr);
  t.equal(out.stdout, 'signed out of remote\n');
  t.equal((await d.request('GET', '/mcp/servers/remote/login')).body.signedIn, false);
});

t.test(
  'agt mcp login --open hands the URL to the desktop’s opener (a fake xdg-open first on PATH)',
  { skip: process.platform === 'linux' ? false : 'the opener is xdg-open on Linux only' },
  async (t) => {
    const bin = tempDir(t, 'agt-opener-');
    const record = join(bin, 'opened.txt');
    writeFileSync(record, '');
    const script = `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(join(ROOT, 'test/fixtures/fake-browser.mjs'))} "$@"\n`;
    writeFileSync(join(bin, 'xdg-open'), script, { mode: 0o755 });
    const env = {
      PATH: `${bin}:${process.env.PATH ?? ''}`,
      HOME: dir,
      NO_COLOR: '1',
      AGT_DAEMON_URL: d.url,
      AGT_DAEMON_TOKEN: d.token,
      FAKE_BROWSER_RECORD: record,
    };
    const login = agtLogin(t, env, ['--open']);
    const code = await login.exited;
    const stdout = login.stdout();
    t.equal(code, 0, login.stderr());
    t.match(stdout, /signed in to remote\n$/, 'signed in without anyone touching the URL but the opener');
    const [opened, status] = readFileSync(record, 'utf8').trim().split('\n');
    t.equal(opened, /^(http\S+)$/m.exec(stdout)?.[1], 'the opener got the printed URL');
    t.equal(status, '200', 'the browser came back to the daemon');
    t.equal((await d.request('GET', '/mcp/servers/remote/login')).body.signedIn, true);
    t.equal((await agtInProcess(['mcp', 'logout', 'remote'], env)).code, 0);
  },
);

t.test('an answer that names another issuer is refused (RFC 9207)', async (t) => {
  await fetch(new URL('/test/bad-iss', urls.issuer), { method: 'POST' });
  const { status, page } = await signIn();
  t.equal(status, 400);
  t.match(page, /issuer/);
  const state = await d.request('GET', '/mcp/servers/remote/login');
  t.equal(state.body.signedIn, false);
  t.match(state.body.error, /issuer http:\/\/issuer\.invalid\/ is not the authorization server/);
});

t.test('bad requests', async (t) => {
  t.equal((await d.request('POST', '/mcp/servers/nothing/login')).status, 404);
  t.equal(
    (await d.request('POST', '/mcp/servers', { name: 'cmd', type: 'command', command: '/bin/true', oauth: {} })).status,
    400,
    'oauth only for http',
  );
  t.equal((await d.request('POST', '/mcp/servers', { name: 'plain', type: 'http', url: urls.mcp })).status, 201);
  t.equal((await d.request('POST', '/mcp/servers/plain/login')).status, 409, 'not an OAuth registration');
});

t.test('the redirect listener has the guards of every server of the daemon', async (t) => {
  const started = await d.request('POST', '/mcp/servers/remote/login');
  t.equal(started.status, 200);
  const redirect = new URL(new URL(started.body.authorizationUrl).searchParams.get('redirect_uri')!);
  const refused = await rawRequest(redirect.origin, {
    path: `${redirect.pathname}?code=x&state=y`,
    headers: { host: 'evil.example' },
  });
  t.same([refused.status, refused.body.code], [403, 'host_not_allowed'], 'a foreign Host is refused');
  const huge = await rawRequest(redirect.origin, { path: redirect.pathname, headers: { 'x-big': 'a'.repeat(40_000) } });
  t.equal(huge.status, 431, 'headers over the limit are refused');
});
