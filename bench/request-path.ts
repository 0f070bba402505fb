/**
 * The request path and the start, A/B in the same minutes: one or more BUILDS of the daemon
 * (a `dist/` folder, or a copy of one: see below) beside bench/baseline.mjs (bare fastify, same routes),
 * every shipped extension, default log level, alternating between the targets so all see the same machine.
 *
 * - cold start: spawn → first 200 on `GET /health`, fresh data directory, median of `--cold` (5) each;
 * - RSS with 0 agents, 1 s after the first 200 (median of the cold starts' processes);
 * - `GET /health` and `GET /agents/{id}/status` (bearer): autocannon, 10 connections, `--rounds` (3)
 *   rounds of `--seconds` (4) per target after a 1 s warm-up; median req/s and its round's p99;
 * - with `--agents=N` (e.g. 1000) the status rounds run again once every build has N agents loaded,
 *   after the process's CPU with N idle agents is measured alone (`--idle-seconds`, 10), so the status
 *   CPU per request is also given net of that idle work.
 * - `--prof`: the builds run under `--cpu-prof` (profiles in .cache/agt/profiles/, one per process,
 *   written at a clean shutdown; read them with `node bench/profile-top.mjs <file>`).
 * - `--only=cold,rss,health,status` picks the parts.
 * - the builds run with bin/v8-flags.mjs preloaded, as bin/agtd.mjs runs them (`--no-v8-flags`: without).
 * - `--rest=S`: also the RSS of one idle process per target S seconds after its first 200 (V8's memory
 *   reducer gives the start-up's young generation back about 10 s after start: try 20).
 * - `--together`: the load rounds hit every target at the same time (then read the CPU per request, which
 *   other work on the machine moves least; the req/s split between the targets).
 *
 * A copy of a build for an A/B: `cp -r dist .cache/<you>/dist-old` and set its `.agt-build.json`
 * `sourceRoot` to the project root relative to the copy (`../../..`), so the shipped manifest's
 * extensions resolve to the copy's modules (kernel/extensions/typescript.ts) and node_modules is found.
 *
 * Run: node --import tsx bench/request-path.ts [--builds=dist,.cache/x/dist-old] [--rounds=3] [--seconds=4]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { reply } from '../test/fakes/script.js';
import { startFakeOpenAI } from '../test/fakes/openai.js';
import { buildEntry, call, freePort, percentile, runThenClean, TOKEN } from './http.js';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const { values: args } = parseArgs({
  options: {
    builds: { type: 'string', default: 'dist' },
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '4' },
    cold: { type: 'string', default: '5' },
    agents: { type: 'string', default: '0' },
    only: { type: 'string', default: 'cold,rss,health,status' },
    prof: { type: 'boolean', default: false },
    together: { type: 'boolean', default: false },
    rest: { type: 'string', default: '0' },
    'no-v8-flags': { type: 'boolean', default: false },
    'idle-seconds': { type: 'string', default: '10' },
  },
});
const builds = args.builds!.split(',').map((dir) => resolve(ROOT, dir));
const parts = new Set(args.only!.split(','));
const rounds = Number(args.rounds);
const seconds = Number(args.seconds);
const idleSeconds = Number(args['idle-seconds']);
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const median = (values: number[]) => percentile(values, 50);
const cleanups: Array<() => unknown> = [];
const log = (line: string) => process.stderr.write(`request-path: ${line}\n`);
const profiles = join(ROOT, '.cache/agt/profiles');

interface Target {
  name: string;
  start(extraEnv?: Record<string, string>): Promise<Running>;
}
interface Running {
  port: number;
  pid: number;
  coldMs: number;
  /** CPU time (user + system) the process used up to its first 200: what a loaded machine moves least. */
  coldCpuMs: number;
  stop(): Promise<void>;
}

function rssMB(pid: number): number {
  const match = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

/** `shutdown`: how to stop it cleanly (a call, or a signal); without it, SIGKILL. */
async function spawnUntilHealthy(
  argv: string[],
  env: Record<string, string>,
  port: number,
  shutdown?: (() => Promise<void>) | NodeJS.Signals,
): Promise<Running> {
  const since = performance.now();
  const child: ChildProcess = spawn(process.execPath, argv, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (chunk) => void (err.length < 4096 && (err += chunk)));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const stop = async () => {
    if (typeof shutdown === 'string') child.kill(shutdown);
    else if (shutdown && child.exitCode === null) await shutdown().catch(() => {});
    const forced = setTimeout(() => child.kill('SIGKILL'), shutdown ? 10_000 : 0);
    await exited;
    clearTimeout(forced);
  };
  cleanups.push(stop);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${argv.join(' ')} exited with ${child.exitCode}: ${err}`);
    try {
      if ((await call(port, 'GET', '/health', undefined, false)).status === 200) break;
    } catch {
      // not listening yet
    }
    await sleep(2);
  }
  return { port, pid: child.pid!, coldMs: performance.now() - since, coldCpuMs: cpuMs(child.pid!), stop };
}

function buildTarget(dir: string, settings: Record<string, unknown>): Target {
  return {
    name: dir.startsWith(ROOT) ? dir.slice(ROOT.length + 1) : dir,
    async start(extraEnv = {}) {
      const dataDir = mkdtempSync(join(tmpdir(), 'agt-bench-'));
      cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
      writeFileSync(join(dataDir, 'settings.json'), JSON.stringify(settings));
      const port = await freePort();
      const prof = args.prof ? ['--cpu-prof', `--cpu-prof-dir=${profiles}`] : [];
      const env = {
        PATH: process.env.PATH ?? '',
        HOME: dataDir,
        AGT_DAEMON_SETTINGS: join(dataDir, 'settings.json'),
        AGT_DAEMON_TOKEN: TOKEN,
        AGT_DAEMON_PORT: String(port),
        ...extraEnv,
      };
      // A clean shutdown writes the CPU profile.
      // The V8 settings bin/agtd.mjs applies first (bin/v8-flags.mjs), unless `--no-v8-flags`.
      const v8Flags = args['no-v8-flags'] ? [] : ['--import', pathToFileURL(join(ROOT, 'bin/v8-flags.mjs')).href];
      return spawnUntilHealthy(
        [...prof, ...v8Flags, ...buildEntry(dir)],
        env,
        port,
        async () => void (await call(port, 'POST', '/daemon/shutdown', {})),
      );
    },
  };
}

const baseline: Target = {
  name: 'fastify',
  async start() {
    const port = await freePort();
    const prof = args.prof ? ['--cpu-prof', `--cpu-prof-dir=${profiles}`] : [];
    return spawnUntilHealthy(
      [...prof, join(ROOT, 'bench/baseline.mjs')],
      { PATH: process.env.PATH ?? '', PORT: String(port), TOKEN },
      port,
      args.prof ? 'SIGTERM' : undefined,
    );
  },
};

/** CPU time (user + system) of a process so far, in ms (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * One autocannon round: req/s, p99, and the server's CPU per request (µs), which a loaded machine
 * moves much less than the req/s (other work takes cores away, not CPU per request).
 */
async function load(port: number, pid: number, path: string, duration: number) {
  const cpuBefore = cpuMs(pid);
  const result = await autocannon({
    url: `http://127.0.0.1:${port}${path}`,
    connections: 10,
    duration,
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  if (result.non2xx || result.errors) log(`warning: ${result.non2xx} non-2xx and ${result.errors} errors on ${path}`);
  return {
    rps: result.requests.average,
    p99: result.latency.p99,
    cpuUs: ((cpuMs(pid) - cpuBefore) * 1000) / Math.max(1, result.requests.total),
  };
}

/** Alternating rounds over the targets; median req/s per target (and that round's p99). */
async function compare(running: Array<{ name: string; port: number; pid: number; path: string }>) {
  for (const target of running) await load(target.port, target.pid, target.path, 1);
  const runs = new Map<string, Array<{ rps: number; p99: number; cpuUs: number }>>(
    running.map((target) => [target.name, []]),
  );
  for (let round = 0; round < rounds; round++) {
    if (args.together) {
      // All targets at once: whatever else the machine does disturbs them alike (CPU per request is
      // the figure to read then; req/s splits between them).
      const results = await Promise.all(running.map((target) => load(target.port, target.pid, target.path, seconds)));
      for (const [i, target] of running.entries()) runs.get(target.name)!.push(results[i]!);
    } else {
      for (const target of running)
        runs.get(target.name)!.push(await load(target.port, target.pid, target.path, seconds));
    }
  }
  return new Map(
    [...runs].map(([name, list]) => {
      const sorted = [...list].sort((a, b) => a.rps - b.rps);
      return [
        name,
        {
          ...sorted[Math.floor(sorted.length / 2)]!,
          cpuUs: median(list.map((r) => r.cpuUs)),
          cpuMinUs: Math.min(...list.map((r) => r.cpuUs)),
          all: list.map((r) => Math.round(r.rps)),
        },
      ];
    }),
  );
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const pct = (a: number, b: number) => `${Math.round((a / b) * 100)}%`;

async function main() {
  mkdirSync(profiles, { recursive: true });
  const loadBefore = loadavg()[0]!;
  const fake = await startFakeOpenAI({ teardown: (fn) => void cleanups.push(fn) }, [], { fallback: reply.text('ok') });
  const settings = {
    providers: [
      { id: 'fake', type: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, defaultModel: 'fake-model' },
    ],
  };
  const targets = [...builds.map((dir) => buildTarget(dir, settings)), baseline];
  const lines: string[] = [];

  if (parts.has('cold') || parts.has('rss')) {
    log('cold starts');
    const cold = new Map<string, number[]>(targets.map((t) => [t.name, []]));
    const coldCpu = new Map<string, number[]>(targets.map((t) => [t.name, []]));
    const rss = new Map<string, number[]>(targets.map((t) => [t.name, []]));
    for (let i = 0; i < Number(args.cold); i++) {
      for (const target of targets) {
        const running = await target.start();
        cold.get(target.name)!.push(running.coldMs);
        coldCpu.get(target.name)!.push(running.coldCpuMs);
        if (parts.has('rss')) {
          await sleep(1000);
          rss.get(target.name)!.push(rssMB(running.pid));
        }
        await running.stop();
      }
    }
    const base = median(cold.get('fastify')!);
    const baseCpu = median(coldCpu.get('fastify')!);
    for (const target of targets) {
      const ms = median(cold.get(target.name)!);
      const cpu = median(coldCpu.get(target.name)!);
      lines.push(
        `cold start  ${target.name.padEnd(24)} ${fmt(ms)} ms (${pct(ms, base)} of fastify) [${cold.get(target.name)!.map(fmt).join(' ')}]; CPU ${fmt(cpu)} ms (${pct(cpu, baseCpu)})`,
      );
    }
    if (parts.has('rss'))
      for (const target of targets)
        lines.push(
          `RSS at 0    ${target.name.padEnd(24)} ${median(rss.get(target.name)!).toFixed(1)} MB [${rss
            .get(target.name)!
            .map((v) => v.toFixed(0))
            .join(' ')}]`,
        );
    const rest = Number(args.rest);
    if (rest > 0) {
      const resting = await Promise.all(targets.map(async (target) => ({ target, running: await target.start() })));
      await sleep(rest * 1000);
      for (const { target, running } of resting) {
        lines.push(
          `RSS at rest ${target.name.padEnd(24)} ${rssMB(running.pid).toFixed(1)} MB (${rest} s after its first 200)`,
        );
        await running.stop();
      }
    }
  }

  if (parts.has('health') || parts.has('status')) {
    const running = await Promise.all(targets.map(async (target) => ({ target, process: await target.start() })));
    const agentOf = new Map<string, string>();
    for (const { target, process: p } of running) {
      if (target === baseline) continue;
      const identity = await call(p.port, 'POST', '/identity/create', { passphrase: 'bench passphrase, not a secret' });
      if (identity.status !== 201) throw new Error(`identity/create answered ${identity.status}`);
      const res = await call(p.port, 'POST', '/agents/create', { name: 'Bench', provider: 'fake', start: true });
      if (res.status !== 201) throw new Error(`agents/create answered ${res.status}: ${JSON.stringify(res.body)}`);
      agentOf.set(target.name, res.body.agentId);
    }
    await sleep(500);
    const report = (label: string, result: Awaited<ReturnType<typeof compare>>) => {
      const base = result.get('fastify')!;
      for (const [name, r] of result) {
        lines.push(
          `${label.padEnd(11)} ${name.padEnd(24)} ${fmt(r.rps)} req/s p99 ${r.p99} ms (${pct(r.rps, base.rps)} of fastify) [${r.all.map(fmt).join(' ')}]; CPU ${r.cpuUs.toFixed(1)} µs/req (fastify ÷ this ${pct(base.cpuUs, r.cpuUs)}; least of the rounds ${r.cpuMinUs.toFixed(1)}, ${pct(base.cpuMinUs, r.cpuMinUs)})`,
        );
      }
    };
    const statusPaths = () =>
      running.map(({ target, process: p }) => ({
        name: target.name,
        port: p.port,
        pid: p.pid,
        path: target === baseline ? '/agents/bench/status' : `/agents/${agentOf.get(target.name)}/status`,
      }));
    if (parts.has('health')) {
      log('GET /health');
      report(
        '/health',
        await compare(
          running.map(({ target, process: p }) => ({ name: target.name, port: p.port, pid: p.pid, path: '/health' })),
        ),
      );
    }
    if (parts.has('status')) {
      log('GET /agents/{id}/status');
      report('/status', await compare(statusPaths()));
    }
    const more = Number(args.agents);
    if (more > 1 && parts.has('status')) {
      log(`creating ${more - 1} more agents per build`);
      for (const { target, process: p } of running) {
        if (target === baseline) continue;
        for (let i = 2; i <= more; i++) {
          const res = await call(p.port, 'POST', '/agents/create', {
            name: `Bench ${i}`,
            provider: 'fake',
            start: true,
          });
          if (res.status !== 201) throw new Error(`agents/create answered ${res.status}`);
        }
      }
      await sleep(1000);
      // The agents' own idle work (lease heartbeats, maintenance, credential rechecks) is CPU the
      // process spends whatever it serves: measured alone first, so the status rounds can be read net of it.
      const idleMsPerS = new Map<string, number>();
      for (const { target, process: p } of running) {
        if (target === baseline) continue;
        const before = cpuMs(p.pid);
        await sleep(idleSeconds * 1000);
        idleMsPerS.set(target.name, (cpuMs(p.pid) - before) / idleSeconds);
        lines.push(
          `RSS at ${more}`.padEnd(12) +
            target.name.padEnd(25) +
            `${rssMB(p.pid).toFixed(1)} MB; idle CPU ${idleMsPerS.get(target.name)!.toFixed(1)} ms per s over ${idleSeconds} s`,
        );
      }
      log(`GET /agents/{id}/status with ${more} agents`);
      const result = await compare(statusPaths());
      report(`/status@${more}`, result);
      for (const [name, idle] of idleMsPerS) {
        const r = result.get(name)!;
        lines.push(
          `/status@${more}`.padEnd(12) +
            name.padEnd(25) +
            `CPU net of the idle work ${(r.cpuUs - (idle * 1000) / r.rps).toFixed(1)} µs/req`,
        );
      }
    }
    for (const { process: p } of running) await p.stop();
  }
  process.stdout.write(
    `${lines.join('\n')}\nload average (1 min) ${loadBefore.toFixed(2)} before, ${loadavg()[0]!.toFixed(2)} after; node ${process.version}\n`,
  );
}

await runThenClean(main, cleanups);
