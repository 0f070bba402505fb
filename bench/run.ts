/**
 * `npm run bench`: the figures of docs/performance.md in one run, the BUILT daemon (`node bin/agtd.mjs` running
 * dist/) measured beside a bare fastify app with the same two routes (bench/baseline.mjs), alternating
 * between the two so both see the same machine. Prints a table and appends the figures, with a timestamp,
 * to bench/results.json. Benchmarks measure; they never fail the build, and no timing target is a test.
 *
 * The daemon runs as shipped: default log level (info), the shipped extensions.json, a fresh data directory
 * (the fan-out daemon logs errors only: the slow clients it drops are counted instead).
 * - cold start: spawn → first 200 on `GET /health`, fresh data directory each time, median of 5 each (after one
 *   start that wrote V8's code cache of the daemon's script, as the first start after an install does).
 * - `GET /health` and `GET /agents/{id}/status` (bearer): autocannon, 10 connections, 3 rounds of 4 s
 *   each per target after a 1 s warm-up, median req/s and its round's p99.
 * - RSS of the daemon with 0, 10 and 100 idle (created and started) agents, 1 s after the last change.
 * - `POST /agents/create` (`start: true`, through the providers extension): median of 100, one at a time.
 * - a chat turn, `POST /agents/{id}/chat` → `turn.completed` on `GET /events`: median of 30 after 3 to
 *   warm up, one at a time, against an instant fake model (test/fakes/openai.ts).
 * - 10 agents × 10 turns at once: every agent sends its next chat when its previous turn completed.
 * - SSE fan-out: 100 clients on `GET /events` while the built daemon (bench/fanout-daemon.mjs) emits
 *   10,000 events/s for 2 s; delivery latency (emit → read by the client) p50/p99, frames lost.
 * - `/health` delay while the tracked-folders extension walks a 10,000-file tree (bench/tracked-scan.ts).
 * - a burst of 1,000 chats sent at once over 10 agents, then to one agent (bench/chat-burst.ts), after a
 *   first burst over the 10 agents (reported apart: V8 compiling the accept path): `/health` probed every
 *   10 ms meanwhile, accepted chats per second, every accepted turn ending exactly once.
 * - an agent file with 10,000 messages loaded, to its first chat answered: median of 7 (bench/open-large.ts).
 * - the console's fleet view with 1,000 agents in headless Chromium (bench/console-fleet.ts, skipped without
 *   Chromium): first screen, rows in the DOM, frame times while scrolling the whole list, search and sort.
 * - a fleet replicating agent files to NATS (bench/fleet-failover.ts, skipped without `nats-server`): chat
 *   turn latency lone vs fleet, bytes and ms per copy, RTO and RPO after SIGKILL under chat load.
 * - with `AGT_BENCH_FLEET_SCALE=1` only (it adds about two minutes): 3 fleet daemons × 300 agents
 *   (bench/fleet-scale.ts), CPU and RSS per daemon and of NATS, heartbeats per second, chat p50/p99 through the
 *   holder and forwarded.
 *
 * Usage: npm run bench  (builds first; `node --import tsx bench/run.ts` reuses an existing build).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { reply } from '../test/fakes/script.js';
import { startFakeOpenAI } from '../test/fakes/openai.js';
import { call, freePort, percentile, runThenClean, TOKEN } from './http.js';
import { watchTurns, type TurnWatch } from './turn-watch.js';
import { fanout } from './sse-fanout.js';
import { telemetryOffBench } from './telemetry-off.js';
import { trackedScanBench } from './tracked-scan.js';
import { BURST_PROBE_MS, chatBurstBench } from './chat-burst.js';
import { openLargeBench } from './open-large.js';
import { consoleFleetBench } from './console-fleet.js';
import { fleetFailoverBench } from './fleet-failover.js';
import { fleetScaleBench } from './fleet-scale.js';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const RESULTS = join(ROOT, 'bench/results.json');
const DOCS = join(ROOT, 'docs/performance.md');
const DOCS_BEGIN = '<!-- bench:table (npm run bench rewrites this part) -->';
const DOCS_END = '<!-- /bench:table -->';
const CONNECTIONS = 10;
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const cleanups: Array<() => unknown> = [];
const teardown = { teardown: (fn: () => unknown) => void cleanups.push(fn) };

const median = (values: number[]) => percentile(values, 50);

function rssMB(pid: number): number {
  const match = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

/** Polls `GET /health` until it answers 200; the time from `since`. */
async function firstHealthy(port: number, since: number, child: ChildProcess): Promise<number> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`process exited with ${child.exitCode} before answering`);
    try {
      const res = await call(port, 'GET', '/health', undefined, false);
      if (res.status === 200) return performance.now() - since;
    } catch {
      // not listening yet
    }
    await sleep(2);
  }
}

interface Running {
  name: string;
  child: ChildProcess;
  port: number;
  stderr: () => string;
  stop(): Promise<void>;
}

function launch(name: string, args: string[], env: Record<string, string>, port: number): Running {
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  // The daemon logs at its default level (info: no line per request; request lines are at debug, see
  // RequestLogController in kernel/http/app.ts), as shipped; only the start of its stderr is kept (it
  // tells whether the build ran).
  let err = '';
  child.stderr!.on('data', (chunk) => {
    if (err.length < 4096) err += chunk;
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  cleanups.push(stop);
  return { name, child, port, stderr: () => err, stop };
}

interface DaemonSetup {
  dataDir: string;
  env: Record<string, string>;
}

function daemonSetup(settings: Record<string, unknown> = {}): DaemonSetup {
  const dataDir = mkdtempSync(join(tmpdir(), 'agt-bench-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  writeFileSync(join(dataDir, 'settings.json'), JSON.stringify(settings));
  return {
    dataDir,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: dataDir,
      AGT_DAEMON_SETTINGS: join(dataDir, 'settings.json'),
      AGT_DAEMON_TOKEN: TOKEN,
    },
  };
}

async function startAgt(setup: DaemonSetup): Promise<{ running: Running; coldMs: number }> {
  const port = await freePort();
  const since = performance.now();
  const running = launch('agt', ['bin/agtd.mjs'], { ...setup.env, AGT_DAEMON_PORT: String(port) }, port);
  const coldMs = await firstHealthy(port, since, running.child);
  if (/running the TypeScript sources/.test(running.stderr())) builtWarning = running.stderr().trim();
  return { running, coldMs };
}

async function startBaseline(): Promise<{ running: Running; coldMs: number }> {
  const port = await freePort();
  const since = performance.now();
  const running = launch(
    'baseline',
    ['bench/baseline.mjs'],
    { PATH: process.env.PATH ?? '', PORT: String(port), TOKEN },
    port,
  );
  return { running, coldMs: await firstHealthy(port, since, running.child) };
}

let builtWarning = '';

/** Starts the daemon once and waits (at most 15 s) until it wrote the code cache of its script, then stops it. */
async function warmCodeCache(): Promise<void> {
  const info = JSON.parse(readFileSync(join(ROOT, 'dist/.agt-build.json'), 'utf8')) as { bundle?: string };
  if (!info.bundle) return;
  const cacheDir = join(ROOT, '.cache', 'compile');
  const written = () => {
    try {
      return readdirSync(cacheDir).some(
        (name) => name.startsWith('agtd-') && name.endsWith('.v8') && statSync(join(cacheDir, name)).mtimeMs >= since,
      );
    } catch {
      return false;
    }
  };
  const since = Date.now();
  const { running } = await startAgt(daemonSetup());
  for (let waited = 0; !written() && waited < 15_000; waited += 100) await sleep(100);
  await running.stop();
}

async function load(
  port: number,
  path: string,
  seconds: number,
): Promise<{ rps: number; p99: number; non2xx: number; errors: number }> {
  const result = await autocannon({
    url: `http://127.0.0.1:${port}${path}`,
    connections: CONNECTIONS,
    duration: seconds,
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  return { rps: result.requests.average, p99: result.latency.p99, non2xx: result.non2xx, errors: result.errors };
}

/** Alternates agt and the baseline on one path: warm-up, then `rounds` measured rounds each. */
async function compare(agt: Running, base: Running, agtPath: string, basePath: string, rounds = 3, seconds = 4) {
  await load(agt.port, agtPath, 1);
  await load(base.port, basePath, 1);
  const runs: Record<'agt' | 'baseline', Array<{ rps: number; p99: number; non2xx: number; errors: number }>> = {
    agt: [],
    baseline: [],
  };
  for (let round = 0; round < rounds; round++) {
    runs.agt.push(await load(agt.port, agtPath, seconds));
    runs.baseline.push(await load(base.port, basePath, seconds));
  }
  const pick = (list: typeof runs.agt) => {
    const sorted = [...list].sort((a, b) => a.rps - b.rps);
    const mid = sorted[Math.floor(sorted.length / 2)]!;
    return {
      rps: Math.round(mid.rps),
      p99: mid.p99,
      non2xx: list.reduce((n, r) => n + r.non2xx, 0),
      errors: list.reduce((n, r) => n + r.errors, 0),
    };
  };
  return { agt: pick(runs.agt), baseline: pick(runs.baseline) };
}

async function chatOnce(port: number, watcher: TurnWatch, agentId: string, text: string): Promise<number> {
  const since = performance.now();
  const res = await call(port, 'POST', `/agents/${agentId}/chat`, { text });
  if (res.status !== 202) throw new Error(`chat answered ${res.status}: ${JSON.stringify(res.body)}`);
  return (await watcher.until(res.body.turnId)) - since;
}

const fmt = (n: number, digits = 0) =>
  Number.isFinite(n)
    ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : '—';

async function main(): Promise<void> {
  const began = performance.now();
  const loadBefore = loadavg()[0]!;
  if (!existsSync(join(ROOT, 'dist/.agt-build.json')))
    throw new Error('no build in dist/: run `npm run build` (npm run bench builds first)');
  const log = (line: string) => process.stderr.write(`bench: ${line}\n`);

  // 1. Cold starts, alternating. The first start after a build compiles the daemon's script and writes V8's
  // code cache once it listens (bin/daemon-bundle.mjs), as the first `npm start` after an install does: one
  // start is let finish that before the measured ones, which SIGKILL the daemon at its first 200.
  log('cold starts');
  await warmCodeCache();
  const cold = { agt: [] as number[], baseline: [] as number[] };
  for (let i = 0; i < 5; i++) {
    const a = await startAgt(daemonSetup());
    cold.agt.push(a.coldMs);
    await a.running.stop();
    const b = await startBaseline();
    cold.baseline.push(b.coldMs);
    await b.running.stop();
  }

  // 2. The measured daemon, an instant model and the baseline.
  const fake = await startFakeOpenAI(teardown, [], { fallback: reply.text('ok') });
  const setup = daemonSetup({
    providers: [
      { id: 'fake', type: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, defaultModel: 'fake-model' },
    ],
  });
  const { running: agt } = await startAgt(setup);
  const { running: base } = await startBaseline();
  await sleep(1000);
  const rss = { agt: [rssMB(agt.child.pid!)] as number[], baseline: rssMB(base.child.pid!) };

  const identity = await call(agt.port, 'POST', '/identity/create', { passphrase: 'bench passphrase, not a secret' });
  if (identity.status !== 201)
    throw new Error(`identity/create answered ${identity.status}: ${JSON.stringify(identity.body)}`);

  log('creating 100 agents');
  const createMs: number[] = [];
  const agentIds: string[] = [];
  for (let i = 1; i <= 100; i++) {
    const since = performance.now();
    const res = await call(agt.port, 'POST', '/agents/create', { name: `Bench ${i}`, provider: 'fake', start: true });
    createMs.push(performance.now() - since);
    if (res.status !== 201) throw new Error(`agents/create answered ${res.status}: ${JSON.stringify(res.body)}`);
    agentIds.push(res.body.agentId);
    if (i === 10 || i === 100) {
      await sleep(1000);
      rss.agt.push(rssMB(agt.child.pid!));
    }
  }

  log('GET /health');
  const health = await compare(agt, base, '/health', '/health');
  log('GET /agents/{id}/status');
  const status = await compare(agt, base, `/agents/${agentIds[0]}/status`, '/agents/bench/status');

  log('chat turns');
  const watcher = watchTurns(agt.port);
  cleanups.push(() => watcher.close());
  await watcher.ready;
  await sleep(100);
  for (let i = 0; i < 3; i++) await chatOnce(agt.port, watcher, agentIds[0]!, `warm-up ${i}`);
  const turnMs: number[] = [];
  for (let i = 0; i < 30; i++) turnMs.push(await chatOnce(agt.port, watcher, agentIds[0]!, `turn ${i}`));

  const parallelSince = performance.now();
  await Promise.all(
    agentIds.slice(1, 11).map(async (id) => {
      for (let i = 0; i < 10; i++) await chatOnce(agt.port, watcher, id, `parallel ${i}`);
    }),
  );
  const parallelSeconds = (performance.now() - parallelSince) / 1000;
  const rssAfter = rssMB(agt.child.pid!);

  // 1,000 idle agents: what a loaded agent costs in memory and in listing them.
  log('creating 900 more agents (1,000 loaded)');
  for (let i = 101; i <= 1000; i++) {
    const res = await call(agt.port, 'POST', '/agents/create', { name: `Bench ${i}`, provider: 'fake', start: true });
    if (res.status !== 201) throw new Error(`agents/create answered ${res.status}: ${JSON.stringify(res.body)}`);
  }
  await sleep(1000);
  const rss1000 = rssMB(agt.child.pid!);
  const listMs: number[] = [];
  for (let i = 0; i < 23; i++) {
    const since = performance.now();
    const res = await call(agt.port, 'GET', '/agents');
    if (i >= 3) listMs.push(performance.now() - since);
    if (res.status !== 200 || !Array.isArray(res.body) || res.body.length < 1000)
      throw new Error(`GET /agents answered ${res.status} with ${res.body?.length} agents`);
  }
  // The hot paths must not grow with the loaded agents: /status again, one agent among 1,000.
  log('GET /agents/{id}/status with 1,000 agents');
  const status1000 = await compare(agt, base, `/agents/${agentIds[0]}/status`, '/agents/bench/status', 1, 3);
  await agt.stop();
  await base.stop();

  log('SSE fan-out');
  const sse = await fanout(100, 10_000, 2);

  log('tracked folder walk');
  const trackedScan = await trackedScanBench();

  log('a burst of 1,000 chats');
  const burst = await chatBurstBench({}, cleanups);

  log('an agent file with 10,000 messages: load to first chat answered');
  const openLarge = await openLargeBench({}, cleanups);

  log('console: a fleet of 1,000 agents in headless Chromium');
  const consoleFleet = await consoleFleetBench({}, cleanups);

  log('fleet: replication cost, turn latency lone vs fleet, RTO and RPO after SIGKILL');
  const fleet = await fleetFailoverBench({}, cleanups);

  // Opt-in: it takes about two minutes more, and the default run stays near two minutes.
  let fleetScale: Awaited<ReturnType<typeof fleetScaleBench>> | undefined;
  if (process.env.AGT_BENCH_FLEET_SCALE === '1') {
    log('fleet at scale: 3 daemons × 300 agents');
    fleetScale = await fleetScaleBench({}, cleanups);
  }

  log('agt --help and agtd --help');
  const cliHelp = await helpTimes();

  log('telemetry off: shipped manifest vs the same without telemetry');
  const telemetryOff = await telemetryOffBench();

  const figures = {
    coldStartMs: { agt: median(cold.agt), baseline: median(cold.baseline), samples: cold },
    healthRps: health,
    statusRps: status,
    rssMB: {
      agt0: rss.agt[0],
      agt10: rss.agt[1],
      agt100: rss.agt[2],
      agt1000: rss1000,
      agtAfterLoad: rssAfter,
      baseline: rss.baseline,
    },
    listAgents1000Ms: { median: median(listMs), p95: percentile(listMs, 95) },
    statusRps1000Agents: status1000,
    createMs: { median: median(createMs), p90: percentile(createMs, 90), first: createMs[0] },
    chatTurnMs: { median: median(turnMs), p90: percentile(turnMs, 90), p95: percentile(turnMs, 95) },
    parallelTurns: {
      agents: 10,
      turnsEach: 10,
      seconds: parallelSeconds,
      turnsPerSecond: 100 / parallelSeconds,
      failures: watcher.failures(),
    },
    sseFanout: sse,
    trackedScan,
    chatBurst: burst,
    openLarge,
    consoleFleet,
    fleetFailover: fleet,
    ...(fleetScale ? { fleetScale } : {}),
    cliHelpMs: cliHelp,
    telemetryOff,
  };

  const ratio = (a: number, b: number) => `${fmt((a / b) * 100)}%`;
  const load = { before: loadBefore, after: loadavg()[0]! };
  const lines = [
    '| figure | agt | bare fastify | agt / fastify | target |',
    '|---|---|---|---|---|',
    `| cold start, spawn → first 200 on \`/health\` (V8's code cache written by an earlier start) | ${fmt(figures.coldStartMs.agt)} ms | ${fmt(figures.coldStartMs.baseline)} ms | ${ratio(figures.coldStartMs.agt, figures.coldStartMs.baseline)} | ≤ 150% |`,
    `| \`GET /health\` req/s | ${fmt(health.agt.rps)} (p99 ${health.agt.p99} ms) | ${fmt(health.baseline.rps)} (p99 ${health.baseline.p99} ms) | ${ratio(health.agt.rps, health.baseline.rps)} | ≥ 90% |`,
    `| \`GET /agents/{id}/status\` req/s (bearer, guard) | ${fmt(status.agt.rps)} (p99 ${status.agt.p99} ms) | ${fmt(status.baseline.rps)} (p99 ${status.baseline.p99} ms) | ${ratio(status.agt.rps, status.baseline.rps)} | ≥ 80% |`,
    `| RSS with 0 / 10 / 100 / 1,000 idle agents | ${fmt(rss.agt[0]!)} / ${fmt(rss.agt[1]!)} / ${fmt(rss.agt[2]!)} / ${fmt(rss1000)} MB | ${fmt(rss.baseline)} MB | | ≤ 90 MB + 0.25 MB per agent; 1,000 ≤ 300 MB |`,
    `| \`GET /agents\` with 1,000 listed, median of 20 | ${fmt(figures.listAgents1000Ms.median, 1)} ms (p95 ${fmt(figures.listAgents1000Ms.p95, 1)}) | — | | |`,
    `| \`GET /agents/{id}/status\` req/s with 1,000 agents loaded | ${fmt(status1000.agt.rps)} (p99 ${status1000.agt.p99} ms) | ${fmt(status1000.baseline.rps)} (p99 ${status1000.baseline.p99} ms) | ${ratio(status1000.agt.rps, status1000.baseline.rps)} | as with 1 |`,
    `| \`POST /agents/create\` per agent (start: true), median | ${fmt(figures.createMs.median, 1)} ms (p90 ${fmt(figures.createMs.p90, 1)}) | — | | ≤ 5 ms |`,
    `| chat turn, POST → \`turn.completed\`, median | ${fmt(figures.chatTurnMs.median, 1)} ms (p95 ${fmt(figures.chatTurnMs.p95, 1)}) | — | | ≤ 3 ms, p95 ≤ 2× the median |`,
    `| 10 agents × 10 turns at once | ${fmt(figures.parallelTurns.turnsPerSecond)} turns/s | — | | ≥ 600 turns/s |`,
    `| SSE fan-out: ${sse.clients} clients, ${fmt(sse.rate)} events/s for 2 s | delivery p50 ${fmt(sse.deliveryP50Ms, 1)} ms, p99 ${fmt(sse.deliveryP99Ms, 1)} ms; ${fmt(sse.framesLost)} frames lost, ${sse.droppedClients} clients dropped | — | | p99 ≤ 20 ms, nothing lost |`,
    `| \`/health\` during a tracked-folder walk of ${fmt(trackedScan.files)} files (${fmt(trackedScan.walkMs)} ms; validators compiled before) | slowest ${fmt(trackedScan.healthDuringMaxMs, 1)} ms, p99 ${fmt(trackedScan.healthDuringP99Ms, 1)} ms (idle p99 ${fmt(trackedScan.healthIdleP99Ms, 1)} ms): delay ${fmt(trackedScan.delayMs, 1)} ms | — | | ≤ 20 ms |`,
    `| \`/health\` during a burst of ${fmt(burst.spread.chats)} chats over ${burst.spread.agents} agents (probed every ${fmt(BURST_PROBE_MS)} ms; the first burst of the process in brackets) | p50 ${fmt(burst.spread.health.p50Ms, 1)} ms, p99 ${fmt(burst.spread.health.p99Ms, 1)} ms, slowest ${fmt(burst.spread.health.maxMs, 1)} ms over ${fmt(burst.spread.health.probes)} probes (p99 ${fmt(burst.first.health.p99Ms, 1)}, slowest ${fmt(burst.first.health.maxMs, 1)} ms); ${fmt(burst.spread.accepted)} accepted, ${fmt(burst.spread.endedOnce)} ended once, ${fmt(burst.spread.endedTwice + burst.spread.notEnded)} not | — | | p99 ≤ 20 ms, max ≤ 100 ms; all accepted, each ends once |`,
    `| accepted chats per second (202s), ${fmt(burst.oneAgent.chats)} at once to one agent / over ${burst.spread.agents} | ${fmt(burst.oneAgent.acceptedPerSecond)} / ${fmt(burst.spread.acceptedPerSecond)} (daemon CPU ${fmt(burst.oneAgent.cpuPerChatMs, 2)} / ${fmt(burst.spread.cpuPerChatMs, 2)} ms per chat, its turns included; first burst, over 10: ${fmt(burst.first.acceptedPerSecond)}/s, ${fmt(burst.first.cpuPerChatMs, 2)} ms) | — | | ≥ 2,000 / ≥ 5,000 |`,
    `| open (load) an agent file with ${fmt(openLarge.messages)} messages (${fmt(openLarge.fileMB, 1)} MB), to first chat answered, median of ${openLarge.samples.length} | ${fmt(openLarge.medianMs, 1)} ms (the load alone ${fmt(openLarge.loadMedianMs, 1)} ms) | — | | ≤ 20 ms |`,
    consoleFleetRow(consoleFleet),
    'skipped' in fleet || !fleet.failover
      ? `| fleet failover without a shared file system | skipped: ${'skipped' in fleet ? fleet.skipped : 'latency only'} | — | | |`
      : `| fleet, agent files replicated to NATS: chat turn lone / fleet (instant model; ${fleet.slowModel.modelMs} ms model), per copy (changed pages, now and then the whole file); RTO and RPO after SIGKILL, ${fleet.failover.agents} agents, TTL ${fleet.failover.ttlSeconds} s | ${fmt(fleet.loneTurnMs, 1)} / ${fmt(fleet.fleetTurnMs, 1)} ms (${fmt(fleet.turnRatio, 2)}×; ${fmt(fleet.slowModel.turnRatio, 2)}×), ${fmt(fleet.replication.copiesPerTurn, 1)} copy per turn of ${fmt(fleet.replication.bytesPerCopy / 1024)} KB sent in ${fmt(fleet.replication.msPerCopy, 1)} ms; RTO median ${fmt(fleet.failover.rtoMedianMs / 1000, 1)} s, slowest ${fmt(fleet.failover.rtoMaxMs / 1000, 1)} s; ${fleet.failover.lostCompleted} of ${fleet.failover.completedBeforeKill} completed turns lost, ${fleet.failover.notEndedOnce} of ${fleet.failover.accepted} accepted not ended once | — | | ≤ 2×; RTO ≤ 10 s; nothing lost |`,
    ...(fleetScale === undefined ? [] : [fleetScaleRow(fleetScale)]),
    `| \`agt --help\` / \`agtd --help\`, spawn → exit, median of ${cliHelp.samples.agt.length} | ${fmt(cliHelp.agt)} ms / ${fmt(cliHelp.agtd)} ms | — | | agt < 200 ms |`,
    `| telemetry off (listed, no endpoint) / not listed: cold start, RSS | ${fmt(telemetryOff.coldStartMs.telemetryOff)} / ${fmt(telemetryOff.coldStartMs.withoutTelemetry)} ms, ${fmt(telemetryOff.rssMB.telemetryOff)} / ${fmt(telemetryOff.rssMB.withoutTelemetry)} MB | — | | unchanged |`,
  ];
  // Other work on the machine moves every figure: the 1-minute load average says how much there was.
  lines.push(
    `| machine: load average (1 min) before / after the run | ${fmt(load.before, 2)} / ${fmt(load.after, 2)} on ${cpus().length} cores, node ${process.version} | | | above ~1 on 2 cores, other work shared the machine |`,
  );
  const wallSeconds = (performance.now() - began) / 1000;
  process.stdout.write(`\n${lines.join('\n')}\n\n`);
  process.stdout.write(
    `node ${process.version}, ${cpus().length} cores, ${CONNECTIONS} connections, RSS after the turns ${fmt(rssAfter)} MB, bench wall time ${fmt(wallSeconds)} s\n`,
  );
  process.stdout.write(
    `load average (1 min) ${fmt(load.before, 2)} before, ${fmt(load.after, 2)} after (above ~1 on 2 cores, other work shared the machine)\n`,
  );
  const errors = health.agt.errors + health.baseline.errors + status.agt.errors + status.baseline.errors;
  const non2xx = health.agt.non2xx + health.baseline.non2xx + status.agt.non2xx + status.baseline.non2xx;
  if (errors || non2xx)
    process.stdout.write(`warning: ${errors} connection errors and ${non2xx} non-2xx answers under load\n`);
  if (builtWarning) process.stdout.write(`warning: the daemon did not run the build: ${builtWarning}\n`);

  const record = {
    at: new Date().toISOString(),
    commit: gitHead(),
    node: process.version,
    cores: cpus().length,
    loadAverage: load,
    ranBuild: builtWarning === '',
    wallSeconds,
    ...figures,
  };
  const previous = existsSync(RESULTS) ? (JSON.parse(readFileSync(RESULTS, 'utf8')) as unknown[]) : [];
  writeFileSync(RESULTS, `${JSON.stringify([...previous, record], null, 2)}\n`);
  process.stdout.write(`appended to ${RESULTS}\n`);
  if (writeDocsTable(lines, record.commit)) process.stdout.write(`table updated in ${DOCS}\n`);
}

/**
 * Replaces the table between the bench markers of docs/performance.md with this run's, so the page
 * always shows the latest figures with their fastify column and the machine's load.
 */
function writeDocsTable(lines: string[], commit: string | null): boolean {
  if (!existsSync(DOCS)) return false;
  const page = readFileSync(DOCS, 'utf8');
  const begin = page.indexOf(DOCS_BEGIN);
  const end = page.indexOf(DOCS_END);
  if (begin < 0 || end < begin) return false;
  const stamp = `Latest run: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, commit ${commit?.slice(0, 7) ?? 'unknown'}, every shipped extension enabled (written by \`npm run bench\`).`;
  writeFileSync(
    DOCS,
    `${page.slice(0, begin + DOCS_BEGIN.length)}\n${stamp}\n\n${lines.join('\n')}\n${page.slice(end)}`,
  );
  // The tree's formatter checks Markdown too (`npm test`): the table is written the way it would leave it.
  spawnSync(process.execPath, [join(ROOT, 'node_modules/@biomejs/biome/bin/biome'), 'format', '--write', DOCS], {
    stdio: 'ignore',
  });
  return true;
}

/** Wall time of one `node <bin> --help`, spawn to exit (what a person waits for). */
function helpOnce(bin: string): Promise<number> {
  const since = performance.now();
  const child = spawn(process.execPath, [join(ROOT, bin), '--help'], { stdio: 'ignore' });
  return new Promise((done, fail) => {
    child.once('error', fail);
    child.once('exit', (code) =>
      code === 0 ? done(performance.now() - since) : fail(new Error(`${bin} --help exited with ${code}`)),
    );
  });
}

/** `agt --help` (must not load the daemon) and `agtd --help`, alternating, 7 runs each. */
async function helpTimes(runs = 7): Promise<{ agt: number; agtd: number; samples: { agt: number[]; agtd: number[] } }> {
  const samples = { agt: [] as number[], agtd: [] as number[] };
  for (let i = 0; i < runs; i++) {
    samples.agt.push(await helpOnce('bin/agt.mjs'));
    samples.agtd.push(await helpOnce('bin/agtd.mjs'));
  }
  return { agt: median(samples.agt), agtd: median(samples.agtd), samples };
}

/** The checked-out commit, from git itself (in a worktree `.git` is a file naming the repository's folder). */
function gitHead(): string | null {
  const result = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim() || null : null;
}

await runThenClean(main, cleanups);

function fleetScaleRow(f: Awaited<ReturnType<typeof fleetScaleBench>>): string {
  if ('skipped' in f) return `| fleet at scale | skipped: ${f.skipped} | — | | |`;
  const cpu = f.daemonsCpu.map((d) => fmt(d.cpu * 100)).join(' / ');
  const rss = f.daemonsCpu.map((d) => fmt(d.rssMb)).join(' / ');
  const heartbeats = f.streamWritesPerSecond.KV_agt_fleet_scale_placements ?? 0;
  return `| fleet at scale: ${f.daemons} daemons × ${f.perDaemon} agents, replication on, one nats-server | daemons CPU ${cpu}% of a core, RSS ${rss} MB; NATS ${fmt(f.nats.cpu * 100)}%, ${fmt(f.nats.rssMb)} MB, ${fmt(heartbeats)} heartbeats/s, ${fmt(f.nats.apiPerSecond)} API calls/s; chat p50/p99 holder ${fmt(f.chat.holderP50Ms, 1)} / ${fmt(f.chat.holderP99Ms, 1)} ms, forwarded ${fmt(f.chat.forwardedP50Ms, 1)} / ${fmt(f.chat.forwardedP99Ms, 1)} ms | — | | |`;
}

function consoleFleetRow(f: Awaited<ReturnType<typeof consoleFleetBench>>): string {
  if ('skipped' in f)
    return `| console, a fleet of 1,000 agents in headless Chromium | skipped: ${f.skipped} | — | | |`;
  return `| console, a fleet of ${fmt(f.agents)} agents in headless Chromium, median of ${f.runs}: first screen (list served → first row), rows in the DOM; frame while scrolling the whole list; search / sort (→ the frame showing it) | ${fmt(f.firstScreenMs)} ms, ${fmt(f.rowsInDom)} rows; frame median ${fmt(f.frameMedianMs, 1)} ms, p95 ${fmt(f.frameP95Ms, 1)} ms, slowest ${fmt(f.frameMaxMs)} ms; ${fmt(f.searchMs, 1)} / ${fmt(f.sortMs, 1)} ms | — | | first screen ≤ 1 s, no jank |`;
}
