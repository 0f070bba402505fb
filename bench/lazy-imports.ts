/**
 * What the bundling rule for lazily imported packages costs (scripts/build.mjs, docs/performance.md
 * "Bundling"): each BUILD folder (dist/ or a variant from `node scripts/build.mjs --out=... --without=lazy-rule`)
 * started `--runs` times, alternating, every shipped extension, fresh data directory; for each start the RSS
 * at the first 200 on `/health`, then the first `GET /openapi.json` (imports @fastify/swagger) and the first
 * `GET /metrics` (imports prom-client): each one's wall time and the RSS after it. Prints the medians.
 *
 * Run: node --import tsx bench/lazy-imports.ts --builds=dist,.cache/ab/lazy-rule [--runs=7]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { buildEntry, call, freePort, percentile, TOKEN } from './http.js';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const { values: args } = parseArgs({
  options: { builds: { type: 'string', default: 'dist' }, runs: { type: 'string', default: '7' } },
});
const builds = args.builds!.split(',').map((dir) => resolve(ROOT, dir));
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const rssMB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

interface Sample {
  rssStart: number;
  openapiMs: number;
  rssOpenapi: number;
  metricsMs: number;
  metricsStatus: number;
  rssMetrics: number;
}

async function once(dir: string): Promise<Sample> {
  const dataDir = mkdtempSync(join(tmpdir(), 'agt-lazy-'));
  writeFileSync(join(dataDir, 'settings.json'), '{}');
  const port = await freePort();
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: dataDir,
    AGT_DAEMON_SETTINGS: join(dataDir, 'settings.json'),
    AGT_DAEMON_TOKEN: TOKEN,
    AGT_DAEMON_PORT: String(port),
    MESH_PORT: '0',
    AGT_LOG_LEVEL: 'silent',
  };
  const child = spawn(
    process.execPath,
    ['--import', pathToFileURL(join(ROOT, 'bin/v8-flags.mjs')).href, ...buildEntry(dir)],
    {
      cwd: ROOT,
      env,
      stdio: 'ignore',
    },
  );
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${dir} exited with ${child.exitCode}`);
    if ((await call(port, 'GET', '/health', undefined, false).catch(() => ({ status: 0 }))).status === 200) break;
    await sleep(5);
  }
  const rssStart = rssMB(child.pid!);
  const timed = async (path: string) => {
    const since = performance.now();
    const { status } = await call(port, 'GET', path);
    return { ms: performance.now() - since, status };
  };
  const openapi = await timed('/openapi.json');
  const rssOpenapi = rssMB(child.pid!);
  const metrics = await timed('/metrics');
  const rssMetrics = rssMB(child.pid!);
  await call(port, 'POST', '/daemon/shutdown', {}).catch(() => {});
  await exited;
  rmSync(dataDir, { recursive: true, force: true });
  return {
    rssStart,
    openapiMs: openapi.ms,
    rssOpenapi,
    metricsMs: metrics.ms,
    metricsStatus: metrics.status,
    rssMetrics,
  };
}

const results = new Map<string, Sample[]>(builds.map((dir) => [dir, []]));
const loadBefore = loadavg()[0]!.toFixed(1);
for (let i = 0; i < Number(args.runs); i++) for (const dir of builds) results.get(dir)!.push(await once(dir));
const median = (values: number[]) => percentile(values, 50).toFixed(1);
process.stdout.write(`load ${loadBefore} → ${loadavg()[0]!.toFixed(1)}; medians of ${args.runs}\n`);
process.stdout.write(
  '| build | RSS at first 200 | first /openapi.json | RSS after | first /metrics (status) | RSS after |\n|---|---|---|---|---|---|\n',
);
for (const [dir, samples] of results) {
  const of = (key: keyof Sample) => median(samples.map((s) => s[key] as number));
  process.stdout.write(
    `| ${dir.slice(ROOT.length + 1)} | ${of('rssStart')} MB | ${of('openapiMs')} ms | ${of('rssOpenapi')} MB | ${of('metricsMs')} ms (${[...new Set(samples.map((s) => s.metricsStatus))].join('/')}) | ${of('rssMetrics')} MB |\n`,
  );
}
