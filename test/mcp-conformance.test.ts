/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`) against agt's MCP client
 * (docs/mcp.md "Conformance"). The suite and a Node 22 for it (npm's `node` package) are installed from
 * the npm registry into `.cache/conformance/`, apart from the project's own node; without the registry the
 * file is skipped saying why. Each client scenario starts the suite's server and runs
 * `conformance/agt-client.mjs`, which drives the built daemon over its API: registers the server, signs in
 * (`auth/*`), and makes an agent call its tool through a fake model. The scenarios listed in `EXPECTED`
 * must pass; the rest are run and reported (the docs list each with why).
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
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
    'sse-retry',
  ].join(',')
).split(',');
/**
 * Scenarios to run and report without requiring them (none by default; e.g.
 * `AGT_CONFORMANCE_REPORTED=auth/2025-03-26-oauth-metadata-backcompat` runs one of the older revision's).
 */
const REPORTED = (process.env.AGT_CONFORMANCE_REPORTED ?? '').split(',').filter(Boolean);

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

/**
 * Scenarios that time the client (`sse-retry` checks the reconnect waits the server's `retry`, within
 * 200 ms): run alone, after the others, so a busy machine does not make them late.
 */
const TIMED = new Set(['sse-retry']);

/** Runs every scenario, a few at a time (each is a node 22 process, a test server and a turn of the daemon). */
const results = new Map<string, Promise<{ passed: boolean; summary: string }>>();
const slots: Array<Promise<unknown>> = [];
for (const name of [...names.filter((n) => !TIMED.has(n)), ...names.filter((n) => TIMED.has(n))]) {
  if (TIMED.has(name)) await Promise.all(slots);
  else if (slots.length >= 6) await Promise.race(slots);
  const job = scenario(name);
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
