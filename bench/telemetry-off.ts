/**
 * Telemetry off costs nothing: the built daemon started with the shipped extensions (telemetry
 * listed, no `telemetry.otlpEndpoint`) beside the same manifest without the telemetry entry, alternating, 5
 * cold starts each (spawn → first 200 on `/health`, median) and the idle RSS 1 s after the last start. The
 * telemetry extension imports neither the OpenTelemetry SDK nor prom-client and listens to nothing while off.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { call, freePort, percentile, TOKEN } from './http.js';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));

export interface TelemetryOffFigures {
  coldStartMs: { telemetryOff: number; withoutTelemetry: number };
  rssMB: { telemetryOff: number; withoutTelemetry: number };
}

function manifest(dir: string, withTelemetry: boolean): string {
  const shipped = JSON.parse(readFileSync(join(ROOT, 'extensions.json'), 'utf8')) as {
    extensions: Array<{ name: string; module: string }>;
  };
  const extensions = shipped.extensions
    .filter((entry) => withTelemetry || entry.name !== 'telemetry')
    // Absolute project paths: the built daemon imports their dist/ twins, as it does for the shipped file.
    .map((entry) => ({ ...entry, module: join(ROOT, entry.module) }));
  const path = join(dir, withTelemetry ? 'with.json' : 'without.json');
  writeFileSync(path, JSON.stringify({ extensions }));
  return path;
}

const rssMB = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;

/** One start: the cold-start time and the RSS one second later. */
async function startOnce(manifestPath: string): Promise<{ coldMs: number; rss: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'agt-bench-telemetry-'));
  const port = await freePort();
  const since = performance.now();
  const child = spawn(process.execPath, ['bin/agtd.mjs'], {
    cwd: ROOT,
    stdio: 'ignore',
    env: {
      PATH: process.env.PATH ?? '',
      HOME: dataDir,
      AGT_DAEMON_SETTINGS: join(dataDir, 'settings.json'),
      AGT_DAEMON_TOKEN: TOKEN,
      AGT_DAEMON_PORT: String(port),
      AGT_EXTENSIONS: manifestPath,
      MESH_PORT: '0',
      AGT_LOG_LEVEL: 'warn',
    },
  });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`agtd exited with ${child.exitCode}`);
      const ok = await call(port, 'GET', '/health', undefined, false).then(
        (res) => res.status === 200,
        () => false,
      );
      if (ok) break;
      await new Promise((done) => setTimeout(done, 10));
    }
    const coldMs = performance.now() - since;
    await new Promise((done) => setTimeout(done, 1000));
    return { coldMs, rss: rssMB(child.pid!) };
  } finally {
    child.kill('SIGTERM');
    await new Promise((done) => (child.exitCode !== null ? done(null) : child.once('exit', done)));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function telemetryOffBench(rounds = 5): Promise<TelemetryOffFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'agt-bench-manifests-'));
  try {
    const withPath = manifest(dir, true);
    const withoutPath = manifest(dir, false);
    const off = { cold: [] as number[], rss: [] as number[] };
    const without = { cold: [] as number[], rss: [] as number[] };
    for (let i = 0; i < rounds; i++) {
      for (const [path, into] of [
        [withPath, off],
        [withoutPath, without],
      ] as const) {
        const { coldMs, rss } = await startOnce(path);
        into.cold.push(coldMs);
        into.rss.push(rss);
      }
    }
    const median = (values: number[]) => percentile(values, 50);
    return {
      coldStartMs: { telemetryOff: median(off.cold), withoutTelemetry: median(without.cold) },
      rssMB: { telemetryOff: median(off.rss), withoutTelemetry: median(without.rss) },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// `node --import tsx bench/telemetry-off.ts` runs it alone (after `npm run build`).
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const figures = await telemetryOffBench();
  process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
}
