/**
 * The SSE fan-out figure of `npm run bench`: N clients on `GET /events` of the built daemon (bench/fanout-daemon.mjs,
 * no extensions) while it emits `rate` events/s; delivery latency (emit → read by the client, same clock) p50/p99,
 * frames lost, clients dropped. The clients read in separate processes (bench/sse-reader.mjs, raw sockets).
 *
 * Alone: `node --import tsx bench/sse-fanout.ts [clients=100] [rate=5000] [seconds=2] [--cpu-prof]` (`--cpu-prof`
 * profiles the daemon; the .cpuprofile lands in .cache/agt/profiles/ or `--profile-dir=`; `--daemon=<path>` runs
 * another copy of fanout-daemon.mjs, e.g. beside an older build's dist/, for an A/B in the same minute).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { freePort, TOKEN } from './http.js';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
/**
 * Processes the clients are spread over (see bench/sse-reader.mjs; `AGT_BENCH_READERS=n` to change).
 * One since the readers got cheap (session 5): with 100 clients at 5,000 events/s a single process
 * took 330–380 ms of CPU against 450–710 ms for four (the same bytes read, one wake-up of the event
 * loop for many ready sockets instead of one per process), which leaves the 2 cores to the daemon.
 */
const READER_PROCESSES = Number(process.env.AGT_BENCH_READERS) || 1;
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/**
 * SSE fan-out against the built daemon in a process of its own. `nodeArgs` go to that process (e.g.
 * `--cpu-prof --cpu-prof-dir=...`: the profile is written when it stops).
 */
export async function fanout(
  clients: number,
  rate: number,
  seconds: number,
  payloadBytes = 256,
  nodeArgs: string[] = [],
  daemonScript = 'bench/fanout-daemon.mjs',
) {
  const dataDir = mkdtempSync(join(tmpdir(), 'agt-bench-'));
  writeFileSync(join(dataDir, 'settings.json'), '{}');
  const manifest = join(dataDir, 'no-extensions.json');
  writeFileSync(manifest, '{"extensions":[]}');
  const port = await freePort();
  const child = spawn(process.execPath, [...nodeArgs, daemonScript], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: dataDir,
      AGT_DAEMON_SETTINGS: join(dataDir, 'settings.json'),
      AGT_DAEMON_TOKEN: TOKEN,
      AGT_DAEMON_PORT: String(port),
      AGT_EXTENSIONS: manifest,
      AGT_LOG_LEVEL: process.env.AGT_BENCH_LOG_LEVEL ?? 'error',
      // Pacing knobs for an A/B within one build (bench/fanout-daemon.mjs).
      ...Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('AGT_BENCH_FLUSH_'))),
    },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  try {
    return await measure(child, port, clients, rate, seconds, payloadBytes);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function measure(
  child: ChildProcess,
  port: number,
  clients: number,
  rate: number,
  seconds: number,
  payloadBytes: number,
) {
  const next = (op: string) =>
    new Promise<any>((done) => {
      const listener = (message: any) => {
        if (message.op !== op) return;
        child.off('message', listener);
        done(message);
      };
      child.on('message', listener);
    });
  await next('ready');

  const count = rate * seconds;
  // The daemon pads each message with `payloadBytes - 24` characters right after the timestamp.
  const readers = await startReaders(`http://127.0.0.1:${port}`, clients, Math.max(0, payloadBytes - 24));
  let before: any;
  for (;;) {
    child.send({ op: 'stats' });
    before = await next('stats');
    if (before.clients >= clients) break;
    await sleep(20);
  }
  child.send({ op: 'emit', rate, count, payloadBytes });
  const emitted = await next('emitted');
  // Frames in flight: wait until every client has all, or nothing arrives for 2 s.
  let last = -1;
  for (let quiet = 0; quiet < 20; quiet++) {
    const total = await readers.count();
    if (total >= count * clients) break;
    if (total !== last) quiet = 0;
    last = total;
    await sleep(100);
  }
  child.send({ op: 'stats' });
  const stats = await next('stats');
  const { received, histogram, cpuMs, loopDelayMaxMs } = await readers.report();
  child.send({ op: 'stop' });
  await new Promise((done) => child.once('exit', done));
  return {
    clients,
    rate,
    events: emitted.count,
    emitSeconds: emitted.ms / 1000,
    deliveryP50Ms: histogramPercentile(histogram, 50),
    deliveryP99Ms: histogramPercentile(histogram, 99),
    framesLost: count * clients - received.reduce((a, b) => a + b, 0),
    readerProcesses: READER_PROCESSES,
    droppedClients: stats.dropped,
    // CPU the daemon (emitting and writing) and the readers spent, from connect to the end: on 2 cores,
    // readers that take most of it make the figure theirs rather than the daemon's.
    daemonCpuMs: Math.round(stats.cpuMs - before.cpuMs),
    // Flushes and socket writes of frames (the per-write cost dominates; absent from older builds).
    flushes: stats.flushes === undefined ? null : stats.flushes - before.flushes,
    writes: stats.writes === undefined ? null : stats.writes - before.writes,
    readerCpuMs: Math.round(cpuMs),
    // The longest a reader's event loop was late: past ~200 ms (1,000 frames at 5,000/s) the daemon
    // drops that reader's clients however fast it writes.
    readerLoopDelayMaxMs: Math.round(loopDelayMaxMs),
    daemonLoopDelayMaxMs: emitted.loopDelayMaxMs === undefined ? null : Math.round(emitted.loopDelayMaxMs),
    daemonGcMaxMs: emitted.gcMaxMs === undefined ? null : Math.round(emitted.gcMaxMs),
    daemonGcTotalMs: emitted.gcTotalMs === undefined ? null : Math.round(emitted.gcTotalMs),
  };
}

function ipc(child: ChildProcess) {
  return (op: string, message: Record<string, unknown> = {}) =>
    new Promise<any>((done) => {
      const listener = (reply: any) => {
        if (reply.op !== op) return;
        child.off('message', listener);
        done(reply);
      };
      child.on('message', listener);
      if (op !== 'ready') child.send({ op, ...message });
    });
}

/** The clients, spread over {@link READER_PROCESSES} reader processes. */
async function startReaders(url: string, clients: number, skip: number) {
  const children = Array.from({ length: READER_PROCESSES }, () =>
    spawn(
      process.execPath,
      [
        ...(process.env.AGT_BENCH_READER_PROF
          ? ['--cpu-prof', `--cpu-prof-dir=${process.env.AGT_BENCH_READER_PROF}`]
          : []),
        join(ROOT, 'bench/sse-reader.mjs'),
      ],
      { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] },
    ),
  );
  const calls = children.map(ipc);
  await Promise.all(calls.map((call) => call('ready')));
  await Promise.all(
    calls.map((call, i) => {
      const share = Math.floor(clients / children.length) + (i < clients % children.length ? 1 : 0);
      return call('connected', { op: 'connect', url, token: TOKEN, clients: share, skip });
    }),
  );
  return {
    count: async () =>
      (await Promise.all(calls.map((call) => call('count')))).reduce((n, r) => n + r.received, 0) as number,
    report: async () => {
      const reports = await Promise.all(calls.map((call) => call('report')));
      const histogram = new Map<number, number>();
      for (const r of reports)
        for (const [bucket, n] of r.histogram as Array<[number, number]>)
          histogram.set(bucket, (histogram.get(bucket) ?? 0) + n);
      const cpuMs = reports.reduce((n, r) => n + (r.cpuMs ?? 0), 0) as number;
      const loopDelayMaxMs = Math.max(...reports.map((r) => r.loopDelayMaxMs as number));
      return { received: reports.flatMap((r) => r.received as number[]), histogram, cpuMs, loopDelayMaxMs };
    },
  };
}

/** The p-th percentile of 0.1 ms buckets, in ms. */
function histogramPercentile(histogram: Map<number, number>, p: number): number {
  const buckets = [...histogram].sort((a, b) => a[0] - b[0]);
  const total = buckets.reduce((n, [, count]) => n + count, 0);
  if (total === 0) return NaN;
  const rank = Math.ceil((p / 100) * total);
  let seen = 0;
  for (const [bucket, count] of buckets) if ((seen += count) >= rank) return bucket / 10;
  return NaN;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const profile = process.argv.includes('--cpu-prof');
  const [clients, rate, seconds] = process.argv
    .slice(2)
    .filter((arg) => !arg.startsWith('--'))
    .map(Number);
  // `--profile-dir=<dir>`: where the .cpuprofile goes (default .cache/agt/profiles/, shared with other benches).
  const dir = resolve(
    process.argv.find((arg) => arg.startsWith('--profile-dir='))?.slice(14) ?? join(ROOT, '.cache/agt/profiles'),
  );
  if (profile) mkdirSync(dir, { recursive: true });
  const daemon = process.argv.find((arg) => arg.startsWith('--daemon='))?.slice(9);
  const result = await fanout(
    clients || 100,
    rate || 5000,
    seconds || 2,
    256,
    profile ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [],
    daemon,
  );
  console.log(JSON.stringify(result));
}
