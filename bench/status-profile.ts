/**
 * Where the CPU of one `GET /agents/{id}/status` (or `/health`) goes, per request, A/B in the same minutes:
 * BUILDS of the daemon (a `dist/` or a copy: see bench/request-path.ts) beside bench/baseline.mjs,
 * alternating rounds of a fixed number of requests (autocannon, 10 connections), each target's CPU per
 * request from /proc. With `--prof` each process runs under `--cpu-prof` and the samples taken inside the
 * measured rounds only (the profile's clock is the machine's monotonic clock, as `process.hrtime`) are
 * summed by function and divided by the requests of those rounds: µs per request, side by side.
 *
 * Run: node --import tsx bench/status-profile.ts [--builds=dist,.cache/x/dist-old] [--routes=health,status]
 *      [--requests=40000] [--rounds=3] [--prof] [--rows=30] [--fastify-v8-flags] [--no-v8-flags]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { reply } from '../test/fakes/script.js';
import { startFakeOpenAI } from '../test/fakes/openai.js';
import { buildEntry, call, freePort, runThenClean, TOKEN } from './http.js';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const { values: args } = parseArgs({
  options: {
    builds: { type: 'string', default: 'dist' },
    routes: { type: 'string', default: 'health,status' },
    requests: { type: 'string', default: '40000' },
    rounds: { type: 'string', default: '3' },
    rows: { type: 'string', default: '30' },
    prof: { type: 'boolean', default: false },
    'fastify-v8-flags': { type: 'boolean', default: false },
    'no-v8-flags': { type: 'boolean', default: false },
  },
});
const cleanups: Array<() => unknown> = [];
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const v8Flags = ['--import', pathToFileURL(join(ROOT, 'bin/v8-flags.mjs')).href];

interface Target {
  name: string;
  port: number;
  pid: number;
  paths: Record<string, string>;
  profDir?: string;
  stop(): Promise<void>;
}
/** One route of one target: its measured rounds. */
interface Lane {
  name: string;
  target: Target;
  path: string;
  windows: Array<[number, number]>;
  requests: number;
  cpuUs: number[];
}

function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function start(
  name: string,
  argv: string[],
  env: Record<string, string>,
  port: number,
  shutdown: () => Promise<void> | void,
  profDir?: string,
) {
  const child = spawn(process.execPath, argv, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'ignore'] });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const stop = async () => {
    if (child.exitCode === null) await Promise.resolve(shutdown()).catch(() => {});
    const forced = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(forced);
  };
  cleanups.push(stop);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}`);
    try {
      if ((await call(port, 'GET', '/health', undefined, false)).status === 200) break;
    } catch {
      // not listening yet
    }
    await sleep(5);
  }
  return { name, port, pid: child.pid!, stop, profDir, paths: {} } as Target;
}

async function startBuild(dir: string, settings: unknown): Promise<Target> {
  const dataDir = mkdtempSync(join(tmpdir(), 'agt-status-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  writeFileSync(join(dataDir, 'settings.json'), JSON.stringify(settings));
  const port = await freePort();
  const profDir = args.prof ? profDirOf(dir) : undefined;
  const prof = profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [];
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: dataDir,
    AGT_DAEMON_SETTINGS: join(dataDir, 'settings.json'),
    AGT_DAEMON_TOKEN: TOKEN,
    AGT_DAEMON_PORT: String(port),
  };
  const name = dir.startsWith(ROOT) ? dir.slice(ROOT.length + 1) : dir;
  const target = await start(
    name,
    [...prof, ...(args['no-v8-flags'] ? [] : v8Flags), ...buildEntry(dir)],
    env,
    port,
    async () => void (await call(port, 'POST', '/daemon/shutdown', {})),
    profDir,
  );
  if ((await call(port, 'POST', '/identity/create', { passphrase: 'bench passphrase, not a secret' })).status !== 201)
    throw new Error('identity/create failed');
  const res = await call(port, 'POST', '/agents/create', { name: 'Bench', provider: 'fake', start: true });
  if (res.status !== 201) throw new Error(`agents/create answered ${res.status}`);
  target.paths = { health: '/health', status: `/agents/${res.body.agentId}/status` };
  return target;
}

async function startFastify(): Promise<Target> {
  const port = await freePort();
  const profDir = args.prof ? profDirOf('fastify') : undefined;
  const prof = profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [];
  const flags = args['fastify-v8-flags'] ? v8Flags : [];
  let child = 0;
  const target = await start(
    'fastify',
    [...prof, ...flags, join(ROOT, 'bench/baseline.mjs')],
    { PATH: process.env.PATH ?? '', PORT: String(port), TOKEN },
    port,
    () => void process.kill(child, 'SIGTERM'),
    profDir,
  );
  child = target.pid;
  target.paths = { health: '/health', status: '/agents/bench/status' };
  return target;
}

/** Profiles are kept (.cache/agt/profiles/status-<target>-<time>/) for bench/profile-top.mjs or a closer look. */
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const profDirOf = (name: string) =>
  join(ROOT, '.cache/agt/profiles', `status-${name.replace(/[^a-z0-9-]+/gi, '_').slice(-30)}-${stamp}`);

const nowUs = () => Number(process.hrtime.bigint() / 1000n);

async function round(lane: Lane, amount: number, measured: boolean) {
  const target = lane.target;
  const before = cpuMs(target.pid);
  const from = nowUs();
  const result = await autocannon({
    url: `http://127.0.0.1:${target.port}${lane.path}`,
    connections: 10,
    amount,
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  const to = nowUs();
  if (result.non2xx || result.errors)
    throw new Error(`${target.name}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  if (!measured) return;
  lane.windows.push([from, to]);
  lane.requests += result.requests.total;
  lane.cpuUs.push(((cpuMs(target.pid) - before) * 1000) / result.requests.total);
}

/** Self time per function inside the windows, µs per request. */
const profileCache = new Map<string, any>();
function selfPerRequest(lane: Lane): Map<string, number> {
  const dir = lane.target.profDir!;
  if (!profileCache.has(dir))
    profileCache.set(
      dir,
      JSON.parse(readFileSync(join(dir, readdirSync(dir).find((f) => f.endsWith('.cpuprofile'))!), 'utf8')),
    );
  const p = profileCache.get(dir);
  const byId = new Map<number, any>(p.nodes.map((n: any) => [n.id, n]));
  const out = new Map<string, number>();
  let at = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    const dt = p.timeDeltas[i] ?? 0;
    at += dt;
    if (!lane.windows.some(([a, b]) => at >= a && at <= b)) continue;
    const cf = byId.get(p.samples[i]).callFrame;
    const url = String(cf.url)
      .replace(/^.*\/node_modules\//, '')
      .replace(/^file:\/\/\/work\/main\//, '')
      .replace(/^\/work\/main\//, '');
    const key = `${cf.functionName || '(anon)'} ${url.split('/').slice(-2).join('/')}:${cf.lineNumber + 1}`;
    out.set(key, (out.get(key) ?? 0) + dt);
  }
  for (const [k, v] of out) out.set(k, v / lane.requests);
  return out;
}

async function main() {
  const fake = await startFakeOpenAI({ teardown: (fn) => void cleanups.push(fn) }, [], { fallback: reply.text('ok') });
  const settings = {
    providers: [
      { id: 'fake', type: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, defaultModel: 'fake-model' },
    ],
  };
  const loadBefore = loadavg()[0]!;
  const targets: Target[] = [];
  for (const dir of args.builds!.split(',')) targets.push(await startBuild(resolve(ROOT, dir), settings));
  targets.push(await startFastify());
  const routes = args.routes!.split(',');
  const lanes: Lane[] = routes.flatMap((route) =>
    targets.map((target) => ({
      name: `${route} ${target.name}`,
      target,
      path: target.paths[route]!,
      windows: [],
      requests: 0,
      cpuUs: [],
    })),
  );
  const amount = Number(args.requests);
  for (const lane of lanes) await round(lane, Math.min(amount, 20_000), false);
  for (let r = 0; r < Number(args.rounds); r++) for (const lane of lanes) await round(lane, amount, true);
  for (const target of targets) await target.stop();
  const lines: string[] = [];
  for (const t of lanes) {
    const sorted = [...t.cpuUs].sort((a, b) => a - b);
    lines.push(
      `${t.name.padEnd(26)} CPU ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} µs/req (least ${sorted[0]!.toFixed(1)}) [${t.cpuUs.map((v) => v.toFixed(1)).join(' ')}]`,
    );
  }
  if (args.prof) {
    const maps = lanes.map(selfPerRequest);
    const keys = new Set<string>();
    const rows = Number(args.rows);
    for (const m of maps)
      [...m]
        .filter(([k]) => !k.startsWith('(idle)'))
        .sort((a, b) => b[1] - a[1])
        .slice(0, rows)
        .forEach(([k]) => {
          keys.add(k);
        });
    const busy = maps.map((m) => [...m].filter(([k]) => !k.startsWith('(idle)')).reduce((s, [, v]) => s + v, 0));
    lines.push(`profiled busy µs/req: ${lanes.map((t, i) => `${t.name} ${busy[i]!.toFixed(2)}`).join(', ')}`);
    const sum = (k: string) => maps.reduce((s, m) => s + (m.get(k) ?? 0), 0);
    const sortedKeys = [...keys].sort((a, b) => sum(b) - sum(a));
    lines.push(
      `${lanes
        .map((t) => `${t.name.slice(0, 3)}|${t.target.name.slice(-6)}`)
        .map((n) => n.padStart(10))
        .join(' ')}  function`,
    );
    for (const k of sortedKeys)
      lines.push(`${maps.map((m) => (m.get(k) ?? 0).toFixed(3).padStart(10)).join(' ')}  ${k}`);
  }
  process.stdout.write(
    `${lines.join('\n')}\nload average (1 min) ${loadBefore.toFixed(2)} before, ${loadavg()[0]!.toFixed(2)} after\n`,
  );
}

await runThenClean(main, cleanups);
