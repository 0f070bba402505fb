/**
 * The two chat-turn rows of `npm run bench`, alone, for A/B runs in the same minutes: the BUILT daemon
 * (every shipped extension, default log level, as `npm run bench` runs it) against an instant fake model.
 * - a chat turn, `POST /agents/{id}/chat` → `turn.completed` on `GET /events`: median and p95 of `turns`
 *   after 3 to warm up, one at a time;
 * - 10 agents × 10 turns at once (each agent sends its next chat when its previous turn completed).
 *
 * Also printed: the daemon's CPU per turn over both phases (from /proc: the A/B figure that a shared
 * machine disturbs least), the part of it on the main thread (the rest is V8's compiler and GC threads)
 * and, with `--cpu-prof`, the measured window for profile-top.mjs. The daemon runs with the V8 settings
 * `bin/agtd.mjs` applies (bin/v8-flags.mjs preloaded; `--no-v8-flags` leaves them out).
 *
 * Run: `node --import tsx bench/turn-rate.ts [--turns=30] [--rounds=1] [--daemon=<dist dir>]... [--cpu-prof]
 * [--no-v8-flags]`. Each `--daemon` is a build's dist/ folder (default `dist`; copy an old one aside, under the
 * checkout so it finds node_modules, e.g. `.cache/<you>/dist-0`); with several, the rounds alternate between them and
 * each prints one JSON line per round. `--cpu-prof` writes the daemon's profile to .cache/agt/profiles/turn-rate/.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { reply } from '../test/fakes/script.js';
import { startFakeOpenAI } from '../test/fakes/openai.js';
import { buildEntry, call, freePort, percentile, TOKEN } from './http.js';
import { watchTurns } from './turn-watch.js';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const args = process.argv.slice(2);
const flag = (name: string) => args.filter((a) => a.startsWith(`--${name}=`)).map((a) => a.slice(name.length + 3));
const turns = Number(flag('turns')[0]) || 30;
const rounds = Number(flag('rounds')[0]) || 1;
const builds = flag('daemon').length ? flag('daemon') : ['dist'];
const profile = args.includes('--cpu-prof');
const v8Flags = args.includes('--no-v8-flags') ? [] : ['--import', join(ROOT, 'bin', 'v8-flags.mjs')];
const cleanups: Array<() => unknown> = [];
const fake = await startFakeOpenAI({ teardown: (fn) => void cleanups.push(fn) }, [], { fallback: reply.text('ok') });

/**
 * The daemon's CPU time so far (user + system, /proc), in ms: per turn, the figure that a loaded machine
 * disturbs least (wall times stretch with the load, the work a turn takes much less).
 */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /, '')
    .split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** The same for the process's main thread alone (its task has the process's id). */
function mainThreadMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8')
    .replace(/^.*\) /, '')
    .split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

async function round(dist: string) {
  const dataDir = mkdtempSync(join(tmpdir(), 'agt-bench-'));
  writeFileSync(
    join(dataDir, 'settings.json'),
    JSON.stringify({
      providers: [
        { id: 'fake', type: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, defaultModel: 'fake-model' },
      ],
    }),
  );
  const port = await freePort();
  const profiles = join(ROOT, '.cache/agt/profiles/turn-rate');
  if (profile) mkdirSync(profiles, { recursive: true });
  const child = spawn(
    process.execPath,
    [...v8Flags, ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profiles}`] : []), ...buildEntry(join(ROOT, dist))],
    {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: dataDir,
        AGT_DAEMON_SETTINGS: join(dataDir, 'settings.json'),
        AGT_DAEMON_TOKEN: TOKEN,
        AGT_DAEMON_PORT: String(port),
      },
      stdio: ['ignore', 'ignore', 'ignore'],
    },
  );
  const exited = new Promise((done) => child.once('exit', done));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`daemon exited with ${child.exitCode}`);
      try {
        if ((await call(port, 'GET', '/health', undefined, false)).status === 200) break;
      } catch {
        // not listening yet
      }
      await new Promise((done) => setTimeout(done, 20));
    }
    await call(port, 'POST', '/identity/create', { passphrase: 'bench passphrase, not a secret' });
    const agents: string[] = [];
    for (let i = 0; i < 11; i++)
      agents.push(
        (await call(port, 'POST', '/agents/create', { name: `Bench ${i}`, provider: 'fake', start: true })).body
          .agentId,
      );
    const watcher = watchTurns(port);
    await watcher.ready;
    const chat = async (agentId: string, text: string) => {
      const since = performance.now();
      const res = await call(port, 'POST', `/agents/${agentId}/chat`, { text });
      if (res.status !== 202) throw new Error(`chat answered ${res.status}: ${JSON.stringify(res.body)}`);
      return (await watcher.until(res.body.turnId)) - since;
    };
    for (let i = 0; i < 3; i++) await chat(agents[0]!, `warm-up ${i}`);
    // The measured phase on the profile's clock (monotonic µs), for `profile-top.mjs --from= --to=`.
    const clock = () => Number(process.hrtime.bigint() / 1000n);
    const from = clock();
    const cpuFrom = cpuMs(child.pid!);
    const mainFrom = mainThreadMs(child.pid!);
    const ms: number[] = [];
    for (let i = 0; i < turns; i++) ms.push(await chat(agents[0]!, `turn ${i}`));
    const since = performance.now();
    await Promise.all(
      agents.slice(1).map(async (id) => {
        for (let i = 0; i < 10; i++) await chat(id, `parallel ${i}`);
      }),
    );
    const rate = 100 / ((performance.now() - since) / 1000);
    const to = clock();
    const cpuPerTurn = (cpuMs(child.pid!) - cpuFrom) / (turns + 100);
    const mainPerTurn = (mainThreadMs(child.pid!) - mainFrom) / (turns + 100);
    watcher.close();
    await call(port, 'POST', '/daemon/shutdown', {});
    await exited;
    const r = (n: number) => Math.round(n * 100) / 100;
    return {
      daemon: dist,
      medianMs: r(percentile(ms, 50)),
      p95Ms: r(percentile(ms, 95)),
      turnsPerSecond: Math.round(rate),
      daemonCpuMsPerTurn: r(cpuPerTurn),
      mainThreadMsPerTurn: r(mainPerTurn),
      failures: watcher.failures(),
      load: r(loadavg()[0]!),
      ...(profile ? { window: `--from=${from} --to=${to}` } : {}),
    };
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

try {
  for (let i = 0; i < rounds; i++) for (const dist of builds) console.log(JSON.stringify(await round(dist)));
} finally {
  for (const cleanup of cleanups) await cleanup();
}
