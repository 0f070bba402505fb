/**
 * The fleet at scale (docs/fleet.md, "At scale"), measured on built daemons and a real `nats-server` with
 * JetStream and its monitoring port (skipped when it is not installed):
 *
 * - 3 daemons, replication on, `perDaemon` agents created on each (each with its key, so one durable message
 *   consumer per agent);
 * - over a steady window of `window` seconds, with a chat every `chatEvery` ms to a sample of agents: each
 *   daemon's CPU (share of one core) and RSS from /proc, the NATS server's too, the messages per second the
 *   server took in and sent out (`/varz`), the JetStream API calls per second and the writes per second to
 *   each stream and bucket (`/jsz`: a stream's last sequence; the placements bucket's are the heartbeats);
 * - a waited chat to an agent through the daemon that holds it and through another (forwarded), p50 and p99;
 * - with `--kill`: one daemon SIGKILLed, its agents' files deleted, and the time until each of its agents is
 *   placed on a survivor and answers a chat there (capped at `cap` seconds; what was seen by then).
 *
 * Usage: node --import tsx bench/fleet-scale.ts [--agents=300] [--window=30] [--chats=60] [--kill] [--cap=180]
 *   [--cut-off=3] (the fleet option `cutOffSeconds`; 0: the takeover waits for the TTL)
 * (after npm run build)
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import { runDaemon, type SpawnedDaemon, tempDir } from '../test/helpers/daemon.js';
import { PASSPHRASE } from '../test/helpers/mesh.js';
import { fleetJoined, fleetManifest, startNats } from '../test/helpers/nats.js';
import { startToolDriver } from '../test/helpers/tool-driver.js';
import { freePort, percentile, runThenClean } from './http.js';

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const CLOCK_TICKS = 100;

export interface FleetScaleOptions {
  perDaemon?: number;
  windowSeconds?: number;
  /** Waited chats timed each way (holder, forwarded). */
  chats?: number;
  kill?: boolean;
  capSeconds?: number;
  /** The fleet option `cutOffSeconds` (0: the takeover waits for the TTL). */
  cutOffSeconds?: number;
}

interface ProcessFigures {
  /** CPU over the window, in shares of one core. */
  cpu: number;
  rssMb: number;
}

export interface FleetScaleFigures {
  daemons: number;
  perDaemon: number;
  ttlSeconds: number;
  cutOffSeconds: number;
  loadMs: number;
  loadAverage: number[];
  windowSeconds: number;
  daemonsCpu: ProcessFigures[];
  nats: ProcessFigures & { inMsgsPerSecond: number; outMsgsPerSecond: number; apiPerSecond: number };
  /** Writes per second to each stream and bucket (`KV_…` buckets, `OBJ_…` object stores), over the window. */
  streamWritesPerSecond: Record<string, number>;
  consumers: number;
  chat: { holderP50Ms: number; holderP99Ms: number; forwardedP50Ms: number; forwardedP99Ms: number };
  failover?: {
    agents: number;
    placedWithinCap: number;
    answeredWithinCap: number;
    placedMedianMs: number;
    placedMaxMs: number;
    answeredMedianMs: number;
    answeredMaxMs: number;
    spread: number[];
    capSeconds: number;
  };
}

/** User + system CPU time of a process so far, in seconds. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

function rssMb(pid: number): number {
  const kb = /^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) / 1024;
}

/** The nats-server process serving monitoring on `port` (the helper does not hand out its pid). */
function natsPid(port: number): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (argv[0]?.endsWith('nats-server') && argv.includes('-m') && argv[argv.indexOf('-m') + 1] === String(port))
        return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  throw new Error(`no nats-server with monitoring port ${port}`);
}

interface Monitor {
  in_msgs: number;
  out_msgs: number;
  api: number;
  consumers: number;
  streams: Map<string, number>;
}

async function monitor(port: number): Promise<Monitor> {
  const get = async (path: string) => (await fetch(`http://127.0.0.1:${port}${path}`)).json() as Promise<any>;
  const varz = await get('/varz');
  const jsz = await get('/jsz?accounts=true&streams=true&consumers=false');
  const streams = new Map<string, number>();
  for (const account of jsz.account_details ?? [])
    for (const stream of account.stream_detail ?? []) streams.set(stream.name, stream.state.last_seq);
  return { in_msgs: varz.in_msgs, out_msgs: varz.out_msgs, api: jsz.api.total, consumers: jsz.consumers, streams };
}

async function waitedChat(d: SpawnedDaemon, agentId: string, text: string): Promise<number> {
  const since = performance.now();
  const answer = await d.request('POST', `/agents/${agentId}/chat?wait=true`, { text });
  if (answer.status !== 200) throw new Error(`chat answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return performance.now() - since;
}

/** Runs `fn` over `items`, `width` at a time. */
async function pool<T>(items: T[], width: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const index = next++;
        await fn(items[index]!, index);
      }
    }),
  );
}

export async function fleetScaleBench(
  options: FleetScaleOptions = {},
  cleanups: Array<() => unknown> = [],
): Promise<FleetScaleFigures | { skipped: string }> {
  const perDaemon = options.perDaemon ?? 300;
  const windowSeconds = options.windowSeconds ?? 30;
  const chats = options.chats ?? 60;
  const capSeconds = options.capSeconds ?? 180;
  const ttlSeconds = 15;
  const cutOffSeconds = options.cutOffSeconds ?? 3;
  // Cleanups run in order: the daemons before NATS, so they stop while it still answers.
  const later: Array<() => unknown> = [];
  cleanups.push(async () => {
    for (const fn of later.reverse()) await fn();
  });
  const t = { teardown: (fn: () => unknown) => void later.push(fn) };
  const monitorPort = await freePort();
  const nats = await startNats(t, { extra: ['-m', String(monitorPort)] });
  if (typeof nats === 'string') return { skipped: nats };
  const natsProcess = natsPid(monitorPort);
  const driver = await startToolDriver(t);
  const manifest = fleetManifest({ ttlSeconds, replicate: true, cutOffSeconds });
  const member = (daemonName: string) =>
    runDaemon(t, {
      settings: { providers: [driver.provider], fleet: { servers: [nats.url], name: 'scale', daemonName } },
      extensions: manifest,
      env: { AGT_OWNER_PASSPHRASE: PASSPHRASE },
    });
  const daemons = await Promise.all([member('alpha'), member('beta'), member('gamma')]);
  // An owner on each daemon, so its agents have their keys: an agent with a DID gets its message consumer.
  for (const d of daemons) {
    const created = await d.request('POST', '/identity/create', { passphrase: PASSPHRASE });
    if (created.status !== 201) throw new Error(`identity: ${created.status} ${JSON.stringify(created.body)}`);
  }
  await Promise.all(daemons.map((d) => fleetJoined(d)));
  const [alpha, beta, gamma] = daemons as [SpawnedDaemon, SpawnedDaemon, SpawnedDaemon];

  // Agents: created (and loaded) on each daemon, a few at a time.
  const files = daemons.map(() => tempDir(t));
  const ids: string[][] = daemons.map(() => []);
  const loadStart = performance.now();
  await Promise.all(
    daemons.map((d, k) =>
      pool(
        Array.from({ length: perDaemon }, (_, i) => i),
        4,
        async (i) => {
          const created = await d.request('POST', '/agents/create', {
            name: `scale-${k}-${i}`,
            directory: files[k],
            provider: driver.provider.id,
            model: driver.model.model_id,
          });
          if (created.status !== 201) throw new Error(`create: ${created.status} ${JSON.stringify(created.body)}`);
          ids[k]!.push(created.body.agentId as string);
        },
      ),
    ),
  );
  const loadMs = performance.now() - loadStart;
  // Let the copies made at load time and the first renewals settle before the window.
  const settleBy = performance.now() + 120_000;
  for (const d of daemons) {
    while (performance.now() < settleBy && (await d.request('GET', '/fleet')).body.replication.lagMs) await sleep(500);
  }
  await sleep(2_000);

  // The steady window: heartbeats, and a chat to a sample of agents now and then, each way.
  const sample = ids[0]!.slice(0, Math.min(20, perDaemon));
  for (const agentId of sample) await waitedChat(beta, agentId, 'warm');
  const pids = daemons.map((d) => d.child.pid!);
  const cpuBefore = pids.map(cpuSeconds);
  const natsCpuBefore = cpuSeconds(natsProcess);
  const before = await monitor(monitorPort);
  const windowStart = performance.now();
  const holderMs: number[] = [];
  const forwardedMs: number[] = [];
  const rss: number[][] = daemons.map(() => []);
  const natsRss: number[] = [];
  const gap = (windowSeconds * 1000) / (chats * 2);
  for (let i = 0; performance.now() - windowStart < windowSeconds * 1000; i++) {
    const agentId = sample[i % sample.length]!;
    if (i < chats) {
      // Alternating which goes first, so neither gains from the other having just woken the agent.
      const holder = () => waitedChat(alpha, agentId, `holder ${i}`);
      const forwarded = () => waitedChat(i % 2 ? beta : gamma, agentId, `forwarded ${i}`);
      if (i % 2) {
        holderMs.push(await holder());
        forwardedMs.push(await forwarded());
      } else {
        forwardedMs.push(await forwarded());
        holderMs.push(await holder());
      }
    }
    for (const [k, pid] of pids.entries()) rss[k]!.push(rssMb(pid));
    natsRss.push(rssMb(natsProcess));
    await sleep(gap);
  }
  const seconds = (performance.now() - windowStart) / 1000;
  const after = await monitor(monitorPort);
  const cpuAfter = pids.map(cpuSeconds);
  const natsCpuAfter = cpuSeconds(natsProcess);
  const streamWritesPerSecond: Record<string, number> = {};
  for (const [name, seq] of after.streams)
    streamWritesPerSecond[name] = Math.round(((seq - (before.streams.get(name) ?? 0)) / seconds) * 10) / 10;
  const max = (values: number[]) => Math.max(...values);

  const figures: FleetScaleFigures = {
    daemons: daemons.length,
    perDaemon,
    ttlSeconds,
    cutOffSeconds,
    loadMs: Math.round(loadMs),
    loadAverage: loadavg().map((value) => Math.round(value * 100) / 100),
    windowSeconds: Math.round(seconds),
    daemonsCpu: pids.map((_, k) => ({ cpu: (cpuAfter[k]! - cpuBefore[k]!) / seconds, rssMb: max(rss[k]!) })),
    nats: {
      cpu: (natsCpuAfter - natsCpuBefore) / seconds,
      rssMb: max(natsRss),
      inMsgsPerSecond: (after.in_msgs - before.in_msgs) / seconds,
      outMsgsPerSecond: (after.out_msgs - before.out_msgs) / seconds,
      apiPerSecond: (after.api - before.api) / seconds,
    },
    streamWritesPerSecond,
    consumers: after.consumers,
    chat: {
      holderP50Ms: percentile(holderMs, 50),
      holderP99Ms: percentile(holderMs, 99),
      forwardedP50Ms: percentile(forwardedMs, 50),
      forwardedP99Ms: percentile(forwardedMs, 99),
    },
  };
  if (!options.kill) return figures;

  // RTO at scale: alpha killed, its files gone (the survivors restore from replicas), every agent polled.
  const dead = new Set(ids[0]);
  const killedAt = performance.now();
  await alpha.stop('SIGKILL');
  rmSync(files[0]!, { recursive: true, force: true });
  const placed = new Map<string, { at: number; on: SpawnedDaemon }>();
  const answered = new Map<string, number>();
  const capAt = killedAt + capSeconds * 1000;
  const survivors = [beta, gamma];
  const asking = new Set<string>();
  const asks: Promise<void>[] = [];
  while (answered.size < dead.size && performance.now() < capAt) {
    for (const d of survivors) {
      const listed = (await d.request('GET', '/fleet')).body.agents as Array<{ agentId: string }>;
      for (const { agentId } of listed)
        if (dead.has(agentId) && !placed.has(agentId)) placed.set(agentId, { at: performance.now(), on: d });
    }
    // Each newly placed agent is asked for a waited chat on the daemon that now holds it at once, as its own
    // client would (until it answers 200, every 500 ms): one client per agent, not a pool that queues them.
    for (const [agentId, { on }] of placed) {
      if (asking.has(agentId)) continue;
      asking.add(agentId);
      asks.push(
        (async () => {
          while (performance.now() < capAt) {
            const answer = await on.request('POST', `/agents/${agentId}/chat?wait=true`, { text: 'after' });
            if (answer.status === 200) return void answered.set(agentId, performance.now() - killedAt);
            await sleep(500);
          }
        })(),
      );
    }
    await sleep(500);
  }
  await Promise.all(asks);
  const placedMs = [...placed.values()].map(({ at }) => at - killedAt).sort((a, b) => a - b);
  const answeredMs = [...answered.values()].sort((a, b) => a - b);
  const spread = await Promise.all(
    survivors.map(async (d) => (await d.request('GET', '/fleet')).body.agents.length as number),
  );
  figures.failover = {
    agents: dead.size,
    placedWithinCap: placedMs.length,
    answeredWithinCap: answeredMs.length,
    placedMedianMs: percentile(placedMs, 50),
    placedMaxMs: placedMs[placedMs.length - 1] ?? Number.NaN,
    answeredMedianMs: percentile(answeredMs, 50),
    answeredMaxMs: answeredMs[answeredMs.length - 1] ?? Number.NaN,
    spread,
    capSeconds,
  };
  return figures;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const cleanups: Array<() => unknown> = [];
  await runThenClean(async () => {
    const figures = await fleetScaleBench(
      {
        perDaemon: Number(arg('agents') ?? 300),
        windowSeconds: Number(arg('window') ?? 30),
        chats: Number(arg('chats') ?? 60),
        kill: process.argv.includes('--kill'),
        capSeconds: Number(arg('cap') ?? 180),
        cutOffSeconds: Number(arg('cut-off') ?? 3),
      },
      cleanups,
    );
    process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
  }, cleanups);
}
