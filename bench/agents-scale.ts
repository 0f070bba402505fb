/**
 * What an agent costs: the BUILT daemon with every shipped extension, `n` agents created one
 * at a time (`POST /agents/create`, `start: true`, through the providers extension against an instant
 * fake model), the daemon's RSS at 0 / 10 / 100 / n idle agents (2 s after the last create), the create
 * median and p90 (of the first 100), and `GET /agents` with n listed (median of 20).
 *
 * Run: `node --import tsx bench/agents-scale.ts [n=1000] [--dist=<build copy>] [--cpu-prof] [--heap]`
 * - `--dist`: another build's folder (e.g. a copy of dist/ under .cache/, so that it finds node_modules),
 *   for an A/B of two builds in the same minutes;
 * - `--cpu-prof`: the daemon is profiled (written at shutdown to .cache/agt/profiles/; read it with
 *   `node bench/profile-top.mjs <file>`);
 * - `--node-arg=<flag>`: a node flag for the daemon (e.g. `--node-arg=--trace-gc`);
 * - `--no-v8-flags`: without the V8 settings `bin/agtd.mjs` applies (bin/v8-flags.mjs, preloaded by
 *   default since the build's entry is run directly), e.g. for a build from before they existed;
 * - `--smaps`: the daemon's anonymous memory by kind of mapping at each step;
 * - `--restart`: then the daemon is started again and the RSS read once tracked-folders autostarted them;
 * - `--idle=<s>`: then the agents are left idle for s seconds: RSS and `/health` latency sampled;
 * - `--out=<dir>`: where profiles and snapshots go (default .cache/agt/profiles);
 * - `--heap`: a heap snapshot of the daemon at 100 and at n agents (`--heapsnapshot-signal`), in the
 *   same folder.
 * Besides RSS it prints the daemon's anonymous and file-backed memory (`/proc/<pid>/smaps_rollup`), so
 * native memory (libsql's page caches) can be told from the file pages SQLite maps.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Database from 'libsql';
import { reply } from '../test/fakes/script.js';
import { startFakeOpenAI } from '../test/fakes/openai.js';
import { buildEntry, call, freePort, percentile, TOKEN } from './http.js';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const args = process.argv.slice(2);
const n = Number(args.find((arg) => /^\d+$/.test(arg))) || 1000;
const flag = (name: string) => args.includes(`--${name}`);
const distArg = args.find((arg) => arg.startsWith('--dist='))?.slice(7);
const dist = resolve(ROOT, distArg ?? 'dist');
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const cleanups: Array<() => unknown> = [];

/** The daemon's CPU time so far (user + system, ms) from `/proc/<pid>/stat`: what a loaded machine moves least. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

function memory(pid: number): { rss: number; anon: number; file: number } {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? NaN) / 1024;
  return { rss: kb('Rss'), anon: kb('Anonymous'), file: kb('Rss') - kb('Anonymous') };
}

const fake = await startFakeOpenAI({ teardown: (fn) => void cleanups.push(fn) }, [], { fallback: reply.text('ok') });
const dataDir = mkdtempSync(join(tmpdir(), 'agt-bench-scale-'));
const profiles = resolve(ROOT, args.find((arg) => arg.startsWith('--out='))?.slice(6) ?? '.cache/agt/profiles');
mkdirSync(profiles, { recursive: true });
writeFileSync(
  join(dataDir, 'settings.json'),
  JSON.stringify({
    providers: [
      { id: 'fake', type: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, defaultModel: 'fake-model' },
    ],
  }),
);
// A database that is not an agent file (no agt marker table): see collectGarbage.
const foreign = join(dataDir, 'not-an-agent.db');
{
  const db = new Database(foreign);
  db.exec('CREATE TABLE t (x)');
  db.close();
}
// The build's entry itself: bin/agtd.mjs would fall back to the sources when any changed since the build.
const build = JSON.parse(readFileSync(join(dist, '.agt-build.json'), 'utf8')) as { main: string; sourceRoot?: string };
// A copy of dist/ elsewhere must name the project as its source root, or the kernel does not find the
// built twins of the shipped extensions and loads them from the sources through tsx (60 MB more RSS).
if (resolve(dist, build.sourceRoot ?? '..') !== ROOT) {
  throw new Error(
    `${dist}/.agt-build.json: set "sourceRoot" to "${relative(dist, ROOT)}" (the project), or the shipped extensions load through tsx`,
  );
}
const nodeArgs = [
  // What `agtd` sets before it imports the build (bin/agtd.mjs).
  ...(flag('no-v8-flags') ? [] : ['--import', pathToFileURL(join(ROOT, 'bin', 'v8-flags.mjs')).href]),
  ...(flag('cpu-prof') ? ['--cpu-prof', `--cpu-prof-dir=${profiles}`] : []),
  ...(flag('heap') ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${profiles}`] : []),
  // Any other node flag for the daemon, e.g. `--node-arg=--trace-gc`.
  ...args.filter((arg) => arg.startsWith('--node-arg=')).map((arg) => arg.slice(11)),
];
let port = 0;
let child: ChildProcess;
let pid = 0;

/** Starts the daemon on a fresh port and waits for its first `/health`. */
async function startDaemon(): Promise<void> {
  port = await freePort();
  child = spawn(process.execPath, [...nodeArgs, ...buildEntry(dist)], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: dataDir,
      AGT_DAEMON_SETTINGS: join(dataDir, 'settings.json'),
      AGT_DAEMON_TOKEN: TOKEN,
      AGT_DAEMON_PORT: String(port),
    },
    stdio: ['ignore', flag('node-arg=--trace-gc') ? 'inherit' : 'ignore', 'inherit'],
  });
  pid = child.pid!;
  for (;;) {
    try {
      if ((await call(port, 'GET', '/health', undefined, false)).status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(20);
  }
}

async function stopDaemon(): Promise<void> {
  await call(port, 'POST', '/daemon/shutdown', {});
  if (child.exitCode === null) await new Promise((done) => child.once('exit', done));
}

/** With `--smaps`: the daemon's largest anonymous mappings (V8's heap, malloc's arenas, thread stacks). */
function topMappings(label: string): void {
  if (!flag('smaps')) return;
  const mappings: Array<{ name: string; anon: number }> = [];
  let current: { name: string; anon: number } | undefined;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) mappings.push((current = { name: header[1] || '[anon]', anon: 0 }));
    const anon = /^Anonymous:\s+(\d+)/.exec(line);
    if (anon && current) current.anon += Number(anon[1]) / 1024;
  }
  const byName = new Map<string, { anon: number; count: number }>();
  for (const m of mappings) {
    const key =
      m.name === '[anon]'
        ? m.anon >= 16
          ? '[anon] >= 16 MB'
          : m.anon >= 1
            ? '[anon] 1-16 MB'
            : '[anon] < 1 MB'
        : m.name;
    const entry = byName.get(key) ?? { anon: 0, count: 0 };
    entry.anon += m.anon;
    entry.count += m.anon > 0 ? 1 : 0;
    byName.set(key, entry);
  }
  const top = [...byName].sort((a, b) => b[1].anon - a[1].anon).slice(0, 6);
  console.log(
    `anonymous memory at ${label}: ${top.map(([name, { anon, count }]) => `${name} ${Math.round(anon)} MB in ${count}`).join('; ')}`,
  );
}

/**
 * Makes the daemon run a full garbage collection: loading a database that is not an agent file fails
 * after the connection was opened, and closing it collects (kernel/agents/handle-release.ts). The
 * figures after it hold no garbage of the JS heap, so two builds compare by what they keep.
 */
async function collectGarbage(): Promise<void> {
  const res = await call(port, 'POST', '/agents/load', { filePath: foreign });
  if (res.status !== 422) throw new Error(`loading a foreign database answered ${res.status}`);
  await sleep(500);
}

/** A heap snapshot of the daemon, waiting until the file is complete. */
async function snapshot(label: string): Promise<void> {
  if (!flag('heap')) return;
  const before = new Set(readdirSync(profiles));
  process.kill(pid, 'SIGUSR2');
  for (;;) {
    await sleep(200);
    const fresh = readdirSync(profiles).find((name) => name.endsWith('.heapsnapshot') && !before.has(name));
    // The answer to a call means the daemon's event loop runs again, so the snapshot is written.
    if (fresh && (await call(port, 'GET', '/health', undefined, false)).status === 200) {
      // Taking the snapshot ran a full collection: the RSS now holds no garbage of the JS heap.
      console.log(
        `heap snapshot at ${label}: ${join(profiles, fresh)}; after its full GC: RSS ${Math.round(memory(pid).rss)} MB, anon ${Math.round(memory(pid).anon)} MB`,
      );
      return;
    }
  }
}

try {
  await startDaemon();
  await call(port, 'POST', '/identity/create', { passphrase: 'bench passphrase, not a secret' });
  await sleep(2000);
  const rss: Record<string, ReturnType<typeof memory>> = { 0: memory(pid) };
  await collectGarbage();
  const collected: Record<string, ReturnType<typeof memory>> = { 0: memory(pid) };
  topMappings('0 agents');
  const createMs: number[] = [];
  // The last 100 (of n > 200): a create must not cost more with more agents loaded.
  const lastCreateMs: number[] = [];
  // Daemon CPU over the creates only (the pauses and collections between them left out).
  let createCpu = 0;
  for (let i = 0; i < n; i++) {
    const cpuBefore = cpuMs(pid);
    const since = performance.now();
    const res = await call(port, 'POST', '/agents/create', { name: `Scale ${i}`, provider: 'fake', start: true });
    if (i < 100) createMs.push(performance.now() - since);
    else if (i >= n - 100) lastCreateMs.push(performance.now() - since);
    createCpu += cpuMs(pid) - cpuBefore;
    if (res.status !== 201) throw new Error(`agents/create answered ${res.status}: ${JSON.stringify(res.body)}`);
    if (i + 1 === 10 || i + 1 === 100 || i + 1 === n) {
      await sleep(2000);
      rss[i + 1] = memory(pid);
      await collectGarbage();
      collected[i + 1] = memory(pid);
      topMappings(`${i + 1} agents`);
      if (i + 1 === 100 || i + 1 === n) await snapshot(`${i + 1} agents`);
    }
  }
  const listMs: number[] = [];
  for (let i = 0; i < 20; i++) {
    const since = performance.now();
    const res = await call(port, 'GET', '/agents');
    listMs.push(performance.now() - since);
    if (res.status !== 200 || !Array.isArray(res.body) || res.body.length < n)
      throw new Error(`GET /agents answered ${res.status}`);
  }
  const mb = (value: number) => Math.round(value * 10) / 10;
  const counts = Object.keys(rss)
    .map(Number)
    .sort((a, b) => a - b);
  console.log(
    `build ${dist}, ${n} agents, load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
  );
  console.log(`RSS   ${counts.map((count) => `${count}: ${mb(rss[count]!.rss)}`).join(' / ')} MB`);
  console.log(
    `after a full GC: RSS ${counts.map((count) => `${count}: ${mb(collected[count]!.rss)}`).join(' / ')} MB, per agent ${mb((collected[n]!.rss - collected[0]!.rss) / n)} MB`,
  );
  console.log(
    `anon  ${counts.map((count) => `${count}: ${mb(rss[count]!.anon)}`).join(' / ')} MB (file-backed at ${n}: ${mb(rss[n]!.file)} MB)`,
  );
  console.log(
    `per agent ${mb((rss[n]!.rss - rss[0]!.rss) / n)} MB (0 → ${n}), ${mb((rss[100]!.rss - rss[0]!.rss) / 100)} MB (0 → 100)`,
  );
  console.log(
    `create median ${mb(percentile(createMs, 50))} ms, p90 ${mb(percentile(createMs, 90))} ms (first 100), daemon CPU per create ${mb(createCpu / n)} ms${lastCreateMs.length ? `; last 100: median ${mb(percentile(lastCreateMs, 50))} ms, p90 ${mb(percentile(lastCreateMs, 90))} ms` : ''}`,
  );
  console.log(`GET /agents with ${n}: median ${mb(percentile(listMs, 50))} ms, p95 ${mb(percentile(listMs, 95))} ms`);
  const idleSeconds = Number(args.find((arg) => arg.startsWith('--idle='))?.slice(7) ?? 0);
  if (idleSeconds > 0) {
    // The agents left alone: heartbeats, maintenance and credential passes run over all of them. RSS
    // every second, and `/health` every 50 ms (its slowest answer is the longest the event loop was held).
    const samples: number[] = [];
    const health: number[] = [];
    const until = Date.now() + idleSeconds * 1000;
    // The profile's clock is the monotonic one: this window is what `bench/profile-top.mjs --from --to` takes.
    const fromUs = process.hrtime.bigint() / 1000n;
    const cpuBefore = cpuMs(pid);
    // The daemon's CPU per 10 s of the idle time: the first maintenance passes over new agents, then the
    // steady state.
    const cpuSlices: number[] = [];
    let sliceCpu = cpuBefore;
    let nextSlice = Date.now() + 10_000;
    let nextRss = 0;
    while (Date.now() < until) {
      const since = performance.now();
      await call(port, 'GET', '/health', undefined, false);
      health.push(performance.now() - since);
      if (Date.now() >= nextSlice) {
        const now = cpuMs(pid);
        cpuSlices.push(Math.round((now - sliceCpu) / 10));
        sliceCpu = now;
        nextSlice += 10_000;
      }
      if (Date.now() >= nextRss) {
        samples.push(memory(pid).rss);
        nextRss = Date.now() + 1000;
      }
      await sleep(50);
    }
    console.log(
      `idle ${idleSeconds} s with ${n}: RSS max ${mb(Math.max(...samples))} MB, last ${mb(samples.at(-1)!)} MB; /health median ${mb(percentile(health, 50))} ms, p99 ${mb(percentile(health, 99))} ms, slowest ${mb(Math.max(...health))} ms; daemon CPU ${mb((cpuMs(pid) - cpuBefore) / idleSeconds)} ms per s (per 10 s: ${cpuSlices.join(' ')}; window --from=${fromUs} --to=${process.hrtime.bigint() / 1000n})`,
    );
  }
  await stopDaemon();
  if (flag('restart')) {
    // The same agents loaded by the tracked-folders autostart of a fresh daemon: what they cost without
    // the garbage and the fragmentation their creation left.
    await startDaemon();
    for (;;) {
      const res = await call(port, 'GET', '/agents');
      if (Array.isArray(res.body) && res.body.length >= n) break;
      await sleep(500);
    }
    await sleep(2000);
    const again = memory(pid);
    topMappings(`${n} agents after a restart`);
    console.log(`after a restart with ${n} autostarted: RSS ${mb(again.rss)} MB, anon ${mb(again.anon)} MB`);
    await stopDaemon();
  }
} finally {
  if (child! && child.exitCode === null) child.kill('SIGKILL');
  for (const cleanup of cleanups) await cleanup();
  rmSync(dataDir, { recursive: true, force: true });
}
