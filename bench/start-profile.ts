/**
 * The cold start alone, profiled: each BUILD (a `dist/` folder or a copy of one, see
 * bench/request-path.ts) started `--runs` times under `--cpu-prof` (every shipped extension, fresh data
 * directory), alternating; for each start the wall time and CPU (user + system, `/proc`) to the first
 * 200 on `GET /health`, and the profile cut at that moment (the clock of `--cpu-prof` is the machine's
 * monotonic clock, the one this process reads too). Prints the medians and, for the median start of
 * each build, `bench/profile-top.mjs` of the window spawn → first 200.
 *
 * `fastify` as a build is bench/baseline.mjs (bare fastify, same routes).
 *
 * The wall time is also split, from the kernel's per-thread scheduler counters (`/proc/<pid>/task/<tid>/
 * schedstat`, ns) read at the first 200: the main thread's time on a CPU, its time runnable but waiting
 * for one (what other work on the machine adds), and the rest, blocked (file reads, futex waits on V8's
 * or libuv's threads, the event loop idle); other threads' CPU apart. "main CPU + blocked" is about the
 * wall time the start would take on an idle machine.
 *
 * Run: node --import tsx bench/start-profile.ts [--builds=dist,.cache/x/dist-old,fastify] [--runs=5] [--rows=25]
 *      [--node-args="--max-semi-space-size=..."] (extra Node flags for every build)
 *      [--v8-flags] (the builds, not fastify, with bin/v8-flags.mjs preloaded, as bin/agtd.mjs runs them)
 *      [--incl=name,name] (functions whose inclusive time up to the first 200 is listed, median of the runs)
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { buildEntry, call, freePort, percentile, TOKEN } from './http.js';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const { values: args } = parseArgs({
  options: {
    builds: { type: 'string', default: 'dist' },
    runs: { type: 'string', default: '5' },
    rows: { type: 'string', default: '25' },
    'node-args': { type: 'string', default: '' },
    'no-prof': { type: 'boolean', default: false },
    'v8-flags': { type: 'boolean', default: false },
    incl: {
      type: 'string',
      default:
        'compileSourceTextModule,(garbage collector),Router.on,evaluate,buildApp,registerKernelRoutes,loadExtensions,composeKernel',
    },
  },
});
const builds = args.builds!.split(',').map((dir) => resolve(ROOT, dir));
const nodeArgs = args['node-args']!.split(' ').filter(Boolean);
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const cpuMs = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
};

interface Start {
  wallMs: number;
  cpuMs: number;
  profile?: string;
  toUs: number;
  sched: Sched;
}
interface Sched {
  mainCpuMs: number;
  runQueueMs: number;
  blockedMs: number;
  otherCpuMs: number;
}

/** The main thread's CPU and run-queue wait and the other threads' CPU so far (ms), from schedstat. */
function schedOf(pid: number, wallMs: number): Sched {
  let mainCpuMs = 0,
    runQueueMs = 0,
    otherCpuMs = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let fields: number[];
    try {
      fields = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
    } catch {
      continue; // the thread ended meanwhile
    }
    if (tid === String(pid)) [mainCpuMs, runQueueMs] = [fields[0]! / 1e6, fields[1]! / 1e6];
    else otherCpuMs += fields[0]! / 1e6;
  }
  return { mainCpuMs, runQueueMs, blockedMs: wallMs - mainCpuMs - runQueueMs, otherCpuMs };
}

async function startOnce(dir: string): Promise<Start> {
  const baseline = dir.endsWith('/fastify');
  const entry = baseline ? [join(ROOT, 'bench/baseline.mjs')] : buildEntry(dir);
  const dataDir = mkdtempSync(join(tmpdir(), 'agt-start-'));
  const profDir = join(dataDir, 'prof');
  mkdirSync(profDir);
  writeFileSync(join(dataDir, 'settings.json'), '{}');
  const port = await freePort();
  const env = baseline
    ? { PATH: process.env.PATH ?? '', PORT: String(port), TOKEN }
    : {
        PATH: process.env.PATH ?? '',
        HOME: dataDir,
        AGT_DAEMON_SETTINGS: join(dataDir, 'settings.json'),
        AGT_DAEMON_TOKEN: TOKEN,
        AGT_DAEMON_PORT: String(port),
      };
  const prof = args['no-prof'] ? [] : ['--cpu-prof', `--cpu-prof-dir=${profDir}`];
  const since = performance.now();
  const v8Flags = args['v8-flags'] && !baseline ? ['--import', pathToFileURL(join(ROOT, 'bin/v8-flags.mjs')).href] : [];
  const child = spawn(process.execPath, [...nodeArgs, ...v8Flags, ...prof, ...entry], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (chunk) => void (err.length < 4096 && (err += chunk)));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${dir} exited with ${child.exitCode}: ${err}`);
    try {
      if ((await call(port, 'GET', '/health', undefined, false)).status === 200) break;
    } catch {
      // not listening yet
    }
    await sleep(2);
  }
  const wallMs = performance.now() - since;
  const toUs = Number(process.hrtime.bigint() / 1000n);
  const cpu = cpuMs(child.pid!);
  const sched = schedOf(child.pid!, wallMs);
  if (baseline) child.kill('SIGTERM');
  else await call(port, 'POST', '/daemon/shutdown', {}).catch(() => {});
  const forced = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(forced);
  let profile: string | undefined;
  if (!args['no-prof']) {
    const file = readdirSync(profDir).find((name) => name.endsWith('.cpuprofile'));
    if (file) {
      profile = join(ROOT, '.cache/start-profiles', `start-${process.pid}-${Math.round(since)}.cpuprofile`);
      mkdirSync(join(ROOT, '.cache/start-profiles'), { recursive: true });
      writeFileSync(profile, readFileSync(join(profDir, file)));
    }
  }
  rmSync(dataDir, { recursive: true, force: true });
  return { wallMs, cpuMs: cpu, toUs, sched, ...(profile ? { profile } : {}) };
}

/** Inclusive time (ms) of each named function (first frame of that name on a stack) up to `toUs`, and the total. */
function inclusive(file: string, toUs: number, names: string[]): Map<string, number> {
  const p = JSON.parse(readFileSync(file, 'utf8')) as {
    nodes: Array<{ id: number; callFrame: { functionName: string }; children?: number[] }>;
    samples: number[];
    timeDeltas: number[];
    startTime: number;
  };
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const out = new Map<string, number>([['total', 0], ...names.map((n) => [n, 0] as [string, number])]);
  let at = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    at += p.timeDeltas[i] ?? 0;
    if (at > toUs) break;
    const dt = (p.timeDeltas[i] ?? 0) / 1000;
    out.set('total', out.get('total')! + dt);
    const seen = new Set<string>();
    for (let id: number | undefined = p.samples[i]; id !== undefined; id = parent.get(id)) {
      const name = byId.get(id)!.callFrame.functionName;
      if (out.has(name) && name !== 'total' && !seen.has(name)) {
        seen.add(name);
        out.set(name, out.get(name)! + dt);
      }
    }
  }
  return out;
}

const load = loadavg()[0]!;
const results = new Map<string, Start[]>(builds.map((dir) => [dir, []]));
for (let i = 0; i < Number(args.runs); i++) for (const dir of builds) results.get(dir)!.push(await startOnce(dir));
for (const [dir, starts] of results) {
  const name = dir.slice(ROOT.length + 1) || dir;
  const wall = percentile(
    starts.map((s) => s.wallMs),
    50,
  );
  const cpu = percentile(
    starts.map((s) => s.cpuMs),
    50,
  );
  // The least CPU of the runs is what a loaded machine disturbs least (other work only ever adds to it).
  const least = Math.min(...starts.map((s) => s.cpuMs));
  process.stdout.write(
    `${name}: wall ${Math.round(wall)} ms [${starts.map((s) => Math.round(s.wallMs)).join(' ')}], CPU median ${cpu} ms, least ${least} ms [${starts.map((s) => s.cpuMs).join(' ')}]\n`,
  );
  const split = (key: keyof Sched) =>
    Math.round(
      percentile(
        starts.map((s) => s.sched[key]),
        50,
      ),
    );
  process.stdout.write(
    `   wall split (medians): main thread CPU ${split('mainCpuMs')} ms, waiting for a CPU ${split('runQueueMs')} ms, blocked ${split('blockedMs')} ms; other threads' CPU ${split('otherCpuMs')} ms\n`,
  );
  const names = args.incl!.split(',').filter(Boolean);
  const incl = starts.filter((s) => s.profile).map((s) => inclusive(s.profile!, s.toUs, names));
  if (incl.length > 0) {
    process.stdout.write(
      `   profiled, inclusive ms to the first 200 (median of ${incl.length}): ${['total', ...names]
        .map(
          (n) =>
            `${n} ${Math.round(
              percentile(
                incl.map((m) => m.get(n)!),
                50,
              ),
            )}`,
        )
        .join(', ')}\n`,
    );
  }
  const sorted = [...starts].filter((s) => s.profile).sort((a, b) => a.cpuMs - b.cpuMs);
  const mid = sorted[Math.floor(sorted.length / 2)];
  if (mid) {
    process.stdout.write(`-- profile of the median start (${mid.profile}, to ${mid.toUs})\n`);
    const top = spawnSync(
      process.execPath,
      [join(ROOT, 'bench/profile-top.mjs'), mid.profile!, args.rows!, `--to=${mid.toUs}`],
      { encoding: 'utf8' },
    );
    process.stdout.write(top.stdout + top.stderr);
  }
}
process.stdout.write(
  `load average (1 min) ${load.toFixed(2)} before, ${loadavg()[0]!.toFixed(2)} after; node ${process.version}\n`,
);
