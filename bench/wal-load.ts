/**
 * The WAL under a sustained write load (docs/performance.md "WAL under load"): one agent of an
 * in-process daemon chats at a steady rate for `--seconds` (default 120); every turn is a tool call
 * (`db_execute` inserting a 2 KB row through the agent's SQL child) and an answer, so both the daemon's
 * connection (loop rows, logs, usage, the queue) and the agent's own connection write. A backup every 20 s
 * holds a read snapshot while it copies (the WAL cannot reset meanwhile). The `-wal` file is sampled every
 * 50 ms; the figures are its largest size, its p99, and its size at the end after the idle checkpoint,
 * against the bound (settings `storage.walMaxBytes`, default 4 MiB).
 *
 * The figures are appended, with a timestamp, the commit and the load average, to bench/wal-load-results.json.
 *
 * Usage: npm run bench:wal, or node --import tsx bench/wal-load.ts [--seconds 120] [--rate 10]
 * (a benchmark: it never fails the build).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { ModelClientProvider, ModelRequest, ModelResponse } from '../contracts/model.js';
import { createAgentFile } from '../test/helpers/agent-file.js';
import { bootDaemon, tempDir } from '../test/helpers/daemon.js';
import { percentile } from './http.js';

const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
};
const SECONDS = arg('seconds', 120);
const RATE = arg('rate', 10);
const BOUND = 4 * 1024 * 1024;
const RESULTS = fileURLToPath(new URL('./wal-load-results.json', import.meta.url));
const cleanups: Array<() => unknown> = [];
const t = { teardown: (fn: () => unknown) => void cleanups.push(fn) };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Each turn: one insert through db_execute, then a short answer (no history kept here). */
const model: ModelClientProvider = {
  resolve: (providerId) =>
    providerId !== 'local'
      ? undefined
      : {
          async complete(request: ModelRequest): Promise<ModelResponse> {
            const base = {
              usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 },
              cost: 0,
              provider: 'local',
              model: request.model.model_id,
            };
            const last = request.messages.at(-1);
            if (last?.role === 'user') {
              return {
                ...base,
                text: '',
                stopReason: 'tool_use',
                toolCalls: [
                  {
                    id: `c${Date.now()}${Math.random()}`,
                    name: 'db_execute',
                    args: { sql: 'INSERT INTO local_rows (body) VALUES (randomblob(2048))' },
                  },
                ],
              };
            }
            return { ...base, text: 'stored', stopReason: 'end', toolCalls: [] };
          },
        },
};

async function main(): Promise<void> {
  const loadBefore = loadavg()[0]!;
  const d = await bootDaemon(t, { settings: { storage: { walMaxBytes: BOUND, maintenanceSeconds: 10 } } });
  d.daemon.kernel.contributions.forExtension('bench-model').modelClients(model);
  const dir = tempDir(t, 'agt-wal-bench-');
  const path = await createAgentFile(dir, { tools: [{ name: 'db_execute', enabled: true }] });
  const id = (await d.request('POST', '/agents/load', { filePath: path })).body.id as string;
  const agent = d.daemon.kernel.registry.resolve(id);
  // The table the turns insert into, made through the agent's own SQL child.
  await d.daemon.kernel.runtime
    .byId(id)!
    .sql.execute({ sql: 'CREATE TABLE local_rows (id INTEGER PRIMARY KEY, body BLOB)' });

  const wal = `${path}-wal`;
  const samples: number[] = [];
  let running = true;
  const sampler = (async () => {
    while (running) {
      try {
        samples.push(statSync(wal).size);
      } catch {
        samples.push(0);
      }
      await sleep(50);
    }
  })();
  const started = Date.now();
  let sent = 0;
  let backups = 0;
  const pending: Array<Promise<unknown>> = [];
  let nextBackup = started + 20_000;
  while (Date.now() - started < SECONDS * 1000) {
    pending.push(d.request('POST', `/agents/${id}/chat`, { text: `row ${sent}` }));
    sent++;
    if (Date.now() >= nextBackup) {
      nextBackup += 20_000;
      pending.push(d.request('POST', `/agents/${id}/backup`, { path: dir }).then(() => backups++));
    }
    await sleep(1000 / RATE);
  }
  await Promise.all(pending);
  // Let the last turns finish, then one maintenance pass on the now idle agent.
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && d.daemon.kernel.runtime.status(agent).runtimeState !== 'idle') await sleep(50);
  await sleep(500);
  const pass = d.daemon.kernel.storage.maintenance.runPass();
  await sleep(100);
  running = false;
  await sampler;
  const status = (await d.request('GET', `/agents/${id}/status`)).body;
  const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(2)} MB`;
  const figures = {
    seconds: SECONDS,
    chatsPerSecond: RATE,
    chatsSent: sent,
    loopRows: status.loopCount,
    localRows: status.storage.tables.local_rows,
    backups,
    boundBytes: BOUND,
    walMaxBytes: Math.max(...samples),
    walP99Bytes: percentile(samples, 99),
    walP50Bytes: percentile(samples, 50),
    walAtEndBytes: status.storage.walBytes,
    idleCheckpoint: pass.find((p) => p.agentId === id)?.checkpoint,
    fileBytes: status.storage.fileBytes,
    samples: samples.length,
  };
  console.log(`WAL under load: ${sent} chats in ${SECONDS} s (${RATE}/s), ${backups} backups meanwhile`);
  console.log(
    `  -wal largest ${mb(figures.walMaxBytes)}, p99 ${mb(figures.walP99Bytes)}, median ${mb(figures.walP50Bytes)} (bound ${mb(BOUND)})`,
  );
  console.log(
    `  at the end, after the idle checkpoint (${figures.idleCheckpoint}): ${mb(figures.walAtEndBytes)}; the .agt file ${mb(figures.fileBytes)}`,
  );
  console.log(JSON.stringify(figures));
  let commit: string | null = null;
  try {
    commit = execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    // Not a checkout.
  }
  const record = {
    at: new Date().toISOString(),
    commit,
    node: process.version,
    cores: cpus().length,
    loadAverage: { before: loadBefore, after: loadavg()[0] },
    ...figures,
  };
  const previous = existsSync(RESULTS) ? (JSON.parse(readFileSync(RESULTS, 'utf8')) as unknown[]) : [];
  writeFileSync(RESULTS, `${JSON.stringify([...previous, record], null, 2)}\n`);
  console.log(`appended to ${RESULTS}`);
}

main()
  .catch((error) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(async () => {
    for (const fn of cleanups.reverse()) await fn();
    process.exit();
  });
