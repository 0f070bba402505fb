/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`) against agt's MCP client and
 * against agt's MCP server, `/mcp/server` (docs/mcp.md "Conformance"). The suite and a Node 22 for it (npm's
 * `node` package) are installed from the npm registry into `.cache/conformance/`, apart from the project's own
 * node; without the registry the file is skipped saying why. Each client scenario starts the suite's server and
 * runs `conformance/agt-client.mjs`, which drives the built daemon over its API: registers the server, signs in
 * (`auth/*`), and makes an agent call its tool through a fake model. Each server scenario runs the suite's
 * client against `/mcp/server` through a loopback proxy that adds the daemon's bearer token (the suite sends
 * no headers of its own) and otherwise forwards the request as it is. The scenarios listed in `EXPECTED` and
 * `SERVER_EXPECTED` must pass; the rest are run and reported (the docs list each with why).
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { ROOT, runDaemon, tempDir } from './helpers/daemon.js';
import { reply, startFakeOpenAI } from './fakes/openai.js';

// Installing the suite once and running its scenarios take longer than a usual file.
t.setTimeout(600_000);

const CACHE = join(ROOT, '.cache/conformance');
const NODE22 = join(CACHE, 'node_modules/node/bin/node');
const SUITE = join(CACHE, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
/** Scenarios that must pass; the others run and are reported. */
const EXPECTED = (
  process.env.AGT_CONFORMANCE_SCENARIOS ??
  [
    'initialize',
    'tools_call',
    'elicitation-sep1034-client-defaults',
    'auth/metadata-default',
    'auth/metadata-var1',
    'auth/metadata-var2',
    'auth/metadata-var3',
    'auth/basic-cimd',
    'auth/scope-from-www-authenticate',
    'auth/scope-from-scopes-supported',
    'auth/scope-omitted-when-undefined',
    'auth/scope-retry-limit',
    'auth/token-endpoint-auth-basic',
    'auth/token-endpoint-auth-post',
    'auth/token-endpoint-auth-none',
    'auth/pre-registration',
    'auth/scope-step-up',
    // Of the older revision and the draft: they pass too, so they are kept passing.
    'auth/2025-03-26-oauth-endpoint-fallback',
    'auth/resource-mismatch',
    'auth/offline-access-scope',
    'auth/offline-access-not-supported',
    'sse-retry',
  ].join(',')
).split(',');
/**
 * Scenarios to run and report without requiring them (none by default; e.g.
 * `AGT_CONFORMANCE_REPORTED=auth/2025-03-26-oauth-metadata-backcompat,auth/client-credentials-basic` runs the
 * ones docs/mcp.md lists as failing, with why).
 */
const REPORTED = (process.env.AGT_CONFORMANCE_REPORTED ?? '').split(',').filter(Boolean);
/**
 * Server scenarios that must pass. Those of the suite's reference server's own tools, prompts and completions
 * (`tools-call-*`, `prompts-*`, `resources-read-*`, `completion-complete`, `json-schema-2020-12`,
 * `server-sse-polling`'s `test_reconnection`) name fixtures agt does not have (docs/mcp.md lists each).
 */
const SERVER_EXPECTED = (
  process.env.AGT_CONFORMANCE_SERVER_SCENARIOS ??
  [
    'server-initialize',
    'ping',
    'tools-list',
    'resources-list',
    'logging-set-level',
    'dns-rebinding-protection',
    'server-sse-multiple-streams',
  ].join(',')
)
  .split(',')
  .filter(Boolean);
/** Server scenarios to run and report only (`AGT_CONFORMANCE_SERVER_REPORTED=server-sse-polling,...`). */
const SERVER_REPORTED = (process.env.AGT_CONFORMANCE_SERVER_REPORTED ?? '').split(',').filter(Boolean);

const run = (command: string, args: string[], options: { env?: NodeJS.ProcessEnv; timeout: number; cwd?: string }) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(command, args, { ...options, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });

if (!existsSync(NODE22) || !existsSync(SUITE)) {
  mkdirSync(CACHE, { recursive: true });
  copyFileSync(join(ROOT, 'conformance/package.json'), join(CACHE, 'package.json'));
  const installed = await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: CACHE,
    timeout: 240_000,
  });
  if (installed.code !== 0 || !existsSync(NODE22) || !existsSync(SUITE)) {
    const why = `the conformance suite could not be installed from the npm registry (offline?): ${installed.stderr.trim().split('\n').slice(-3).join(' ')}`;
    console.error(`# skip: ${why}`);
    t.plan(0, why);
    process.exit(0);
  }
}

/** The agent's model: `call <tool> <json>` calls it; the tool's result comes back as `RESULT ok <result>`. */
const model = await startFakeOpenAI(t, (request) => {
  const messages = request.body.messages as Array<{ role: string; content: unknown }>;
  const last = messages.at(-1)!;
  if (last.role === 'tool') return reply.text(`RESULT ok ${String(last.content)}`);
  const asked = /^call (\S+) (.*)$/s.exec(String(last.content).trim());
  if (asked) return reply.toolCalls([{ id: `conf-${Date.now()}`, name: asked[1]!, args: JSON.parse(asked[2]!) }]);
  return reply.text('ok');
});
const d = await runDaemon(t, {
  settings: {
    providers: [{ id: 'conf', type: 'openai-compatible', name: 'Conformance', baseUrl: model.baseUrl }],
  },
});
/**
 * The suite's client sends no headers of its own: this proxy adds the daemon's token. A Host or Origin naming
 * the proxy itself is rewritten to the daemon's port (what a client configured with the daemon's URL sends);
 * any other (the DNS-rebinding scenario's `evil.example.com`) passes unchanged, for the daemon's guards to judge.
 */
const daemonPort = new URL(d.url).port;
const proxy = createServer((incoming, outgoing) => {
  const ours = new RegExp(`^(localhost|127\\.0\\.0\\.1|\\[::1\\]):${proxyPort}$`);
  const headers = { ...incoming.headers, authorization: `Bearer ${d.token}` };
  if (ours.test(headers.host ?? '')) headers.host = headers.host!.replace(/:\d+$/, `:${daemonPort}`);
  const origin = headers.origin?.replace(/^http:\/\//, '');
  if (origin && ours.test(origin)) headers.origin = `http://${origin.replace(/:\d+$/, `:${daemonPort}`)}`;
  const upstream = httpRequest(
    { host: '127.0.0.1', port: daemonPort, method: incoming.method, path: incoming.url, headers },
    (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(outgoing);
    },
  );
  upstream.on('error', () => outgoing.destroy());
  outgoing.on('close', () => upstream.destroy());
  incoming.pipe(upstream);
});
await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done));
const proxyPort = (proxy.address() as AddressInfo).port;
t.teardown(() => {
  proxy.closeAllConnections();
  proxy.close();
});

// One agent per scenario: the scenarios run a few at a time.
const dir = tempDir(t, 'agt-mcp-conf-');
const names = [...EXPECTED, ...REPORTED];
const ids = await Promise.all(
  names.map(async (_name, n) => {
    const filePath = await createAgentFile(dir, { name: `conf-${n}`, model: { provider: 'conf', model_id: 'conf-1' } });
    const loaded = await d.request('POST', '/agents/load', { filePath });
    if (loaded.status !== 200) throw new Error(`an agent did not load: ${JSON.stringify(loaded.body)}`);
    return loaded.body.id as string;
  }),
);
const agents: Record<string, string> = Object.fromEntries(names.map((name, n) => [name, ids[n]!]));

async function scenario(name: string) {
  const out = tempDir(t, 'agt-conf-out-');
  const result = await run(
    NODE22,
    [
      SUITE,
      'client',
      '--command',
      `${NODE22} ${join(ROOT, 'conformance/agt-client.mjs')}`,
      '--scenario',
      name,
      '--timeout',
      '60000',
      '-o',
      out,
    ],
    {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? out,
        AGT_CONFORMANCE_URL: d.url,
        AGT_CONFORMANCE_TOKEN: d.token,
        AGT_CONFORMANCE_AGENTS: JSON.stringify(agents),
      },
      timeout: 90_000,
    },
  );
  const summary = `${result.stdout}\n${result.stderr}`
    .split('\n')
    .filter((line) => /✓|✗|⚠|SUCCESS|FAILURE|WARNING|Client exited|Stderr|Error/.test(line))
    .slice(0, 40)
    .join('\n');
  return { passed: result.code === 0, summary };
}

async function serverScenario(name: string) {
  const out = tempDir(t, 'agt-conf-out-');
  const result = await run(
    NODE22,
    [SUITE, 'server', '--url', `http://localhost:${proxyPort}/mcp/server`, '--scenario', name, '-o', out],
    { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? out }, timeout: 90_000 },
  );
  const summary = `${result.stdout}\n${result.stderr}`
    .split('\n')
    .filter((line) => /FAILURE|WARNING|Passed:|Error/.test(line))
    .slice(0, 20)
    .join('\n');
  return { passed: result.code === 0 && /Passed: (\d+)\/\1, 0 failed/.test(result.stdout), summary };
}

/**
 * Scenarios that time the client (`sse-retry` checks the reconnect waits the server's `retry`, within
 * 200 ms): run alone, after the others, so a busy machine does not make them late.
 */
const TIMED = new Set(['sse-retry']);

/** Runs every scenario, a few at a time (each is a node 22 process, a test server and a turn of the daemon). */
const results = new Map<string, Promise<{ passed: boolean; summary: string }>>();
const slots: Array<Promise<unknown>> = [];
type Job = [string, () => Promise<{ passed: boolean; summary: string }>];
const jobs: Job[] = [
  ...names.filter((n) => !TIMED.has(n)).map((name): Job => [name, () => scenario(name)]),
  ...[...SERVER_EXPECTED, ...SERVER_REPORTED].map((name): Job => [`server:${name}`, () => serverScenario(name)]),
  ...names.filter((n) => TIMED.has(n)).map((name): Job => [name, () => scenario(name)]),
];
for (const [name, start] of jobs) {
  if (TIMED.has(name)) await Promise.all(slots);
  else if (slots.length >= 6) await Promise.race(slots);
  const job = start();
  results.set(name, job);
  const slot: Promise<unknown> = job.finally(() => slots.splice(slots.indexOf(slot), 1));
  slots.push(slot);
}

for (const name of EXPECTED)
  t.test(`conformance: ${name}`, async (t) => {
    const { passed, summary } = await results.get(name)!;
    t.ok(passed, `${name} passes`, passed ? {} : { diagnostic: true, summary });
  });

for (const name of REPORTED)
  t.test(`conformance (reported): ${name}`, async (t) => {
    const { passed, summary } = await results.get(name)!;
    t.comment(`${name}: ${passed ? 'pass' : 'FAIL'}${passed ? '' : `\n${summary}`}`);
    t.pass('ran');
  });

for (const name of SERVER_EXPECTED)
  t.test(`conformance (server): ${name}`, async (t) => {
    const { passed, summary } = await results.get(`server:${name}`)!;
    t.ok(passed, `${name} passes`, passed ? {} : { diagnostic: true, summary });
  });

for (const name of SERVER_REPORTED)
  t.test(`conformance (server, reported): ${name}`, async (t) => {
    const { passed, summary } = await results.get(`server:${name}`)!;
    t.comment(`${name}: ${passed ? 'pass' : 'FAIL'}\n${summary}`);
    t.pass('ran');
  });
