/**
 * The tracked-folders walk against the event loop (docs/tracked-folders.md): how much a walk of a 10,000-file tree
 * delays `GET /health` of the built daemon. A tree of 100 folders (each with a `docs` folder) holding 10,000 files and
 * 3 agent files is added with `POST /tracked-folders` (the walk, the agent-file summaries and the watcher's own walk)
 * while a client in this process asks `/health` one request after another; the same client measures an idle second
 * first. Reported: the slowest and p99 `/health` latency during the walk, the idle p99, and the delay = slowest during
 * − idle p99 (target ≤ 20 ms). A refused `POST /tracked-folders` first pays the one-time compile of the request
 * validators (Ajv's meta-schema, ~40 ms once per process), so the figure is the walk's; `--cold` leaves that compile
 * inside the measured request. Used by bench/run.ts; alone: `node --import tsx bench/tracked-scan.ts [files]
 * [--dist=<copy>] [--cpu-prof]` (after a build).
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentFile } from '../kernel/agents/agent-file.js';
import { buildEntry, call, freePort, percentile, TOKEN } from './http.js';
import { agentConfig } from '../test/helpers/agent-file.js';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));

export interface TrackedScanFigures {
  files: number;
  walkMs: number;
  healthDuringMaxMs: number;
  healthDuringP99Ms: number;
  healthIdleP99Ms: number;
  /** Slowest during the walk minus the idle p99. */
  delayMs: number;
  requests: number;
  agentCount: number;
}

/** Asks `/health` one request after another until `until()` is true; the latencies. */
async function probe(port: number, until: () => boolean): Promise<number[]> {
  const latencies: number[] = [];
  while (!until()) {
    const since = performance.now();
    await call(port, 'GET', '/health');
    latencies.push(performance.now() - since);
  }
  return latencies;
}

/**
 * `dist`: the build whose entry runs (default dist/; another copy for an A/B in the same minutes, placed
 * under the checkout so it finds node_modules); `nodeArgs` go to the daemon (e.g. `--cpu-prof`). The
 * build's entry runs directly, since bin/agtd.mjs falls back to the sources once any is newer.
 */
export async function trackedScanBench(
  files = 10_000,
  dist = join(ROOT, 'dist'),
  nodeArgs: string[] = [],
): Promise<TrackedScanFigures> {
  const work = mkdtempSync(join(tmpdir(), 'agt-bench-tracked-'));
  const dataDir = join(work, 'data');
  const tree = join(work, 'tree');
  mkdirSync(dataDir);
  writeFileSync(join(dataDir, 'settings.json'), '{}');
  for (let i = 0; i < files; i++) {
    const dir = join(tree, `folder-${Math.floor(i / 100)}`, i % 2 ? 'docs' : '');
    if (i % 100 < 2) mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `note-${i}.txt`), 'x');
  }
  const template = join(work, 'template.agt');
  const file = AgentFile.create(template, agentConfig({ name: 'Bench tracked' }));
  await file.close();
  for (const n of [3, 47, 91]) copyFileSync(template, join(tree, `folder-${n}`, 'docs', `agent-${n}.agt`));

  const port = await freePort();
  const child = spawn(process.execPath, [...nodeArgs, ...buildEntry(dist)], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: dataDir,
      AGT_DAEMON_SETTINGS: join(dataDir, 'settings.json'),
      AGT_DAEMON_TOKEN: TOKEN,
      AGT_DAEMON_PORT: String(port),
      AGT_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  const exited = new Promise((done) => child.once('exit', done));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the daemon exited with ${child.exitCode}`);
      if (
        await call(port, 'GET', '/health').then(
          (res) => res.status === 200,
          () => false,
        )
      )
        break;
      await new Promise((done) => setTimeout(done, 10));
    }
    // The first request with a body after start compiles Ajv's meta-schema and its route's validator
    // (~40 ms, once per process, whatever the request does): a folder given that cannot be tracked (a
    // 4xx) pays it before the measurement, which is of the walk. `--cold` leaves it in.
    if (!process.argv.includes('--cold')) {
      const refused = await call(port, 'POST', '/tracked-folders', { path: join(tree, 'not-there') });
      if (refused.status < 400 || refused.status >= 500) throw new Error(`the warm-up POST answered ${refused.status}`);
    }
    const idleUntil = performance.now() + 1000;
    const idle = await probe(port, () => performance.now() > idleUntil);
    let over = false;
    const during = probe(port, () => over);
    const since = performance.now();
    const added = await call(port, 'POST', '/tracked-folders', { path: tree });
    const walkMs = performance.now() - since;
    over = true;
    const latencies = await during;
    if (added.status !== 201)
      throw new Error(`POST /tracked-folders answered ${added.status}: ${JSON.stringify(added.body)}`);
    const max = Math.max(...latencies);
    return {
      files,
      walkMs,
      healthDuringMaxMs: max,
      healthDuringP99Ms: percentile(latencies, 99),
      healthIdleP99Ms: percentile(idle, 99),
      delayMs: max - percentile(idle, 99),
      requests: latencies.length,
      agentCount: added.body.agentCount,
    };
  } finally {
    // SIGINT lets a profiled daemon write its profile (--cpu-prof) as it shuts down.
    child.kill(nodeArgs.length > 0 ? 'SIGINT' : 'SIGKILL');
    await exited;
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // `[files] [--dist=<build copy>] [--cpu-prof] [--profile-dir=<dir>]` (the profile lands in .cache/agt/profiles/ by
  // default).
  const dist = process.argv.find((arg) => arg.startsWith('--dist='))?.slice(7);
  const profiles = resolve(
    process.argv.find((arg) => arg.startsWith('--profile-dir='))?.slice(14) ?? join(ROOT, '.cache/agt/profiles'),
  );
  const nodeArgs = process.argv.includes('--cpu-prof') ? ['--cpu-prof', `--cpu-prof-dir=${profiles}`] : [];
  const count = Number(process.argv.slice(2).find((arg) => !arg.startsWith('--'))) || undefined;
  const figures = await trackedScanBench(count, dist ? resolve(dist) : undefined, nodeArgs);
  process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
}
