/**
 * A burst of chats sent at once to the built daemon, and what it does to everything else: 1,000 chats
 * over 10 agents (`POST /agents/{id}/chat`, all in flight together over 200 keep-alive connections) while a
 * prober in its own process (bench/health-probe.mjs) calls `GET /health` every 10 ms (often enough that
 * its p99 is not simply the slowest answer); then 1,000 chats to one agent. Both come after a first burst
 * of the same shape over the 10 agents (`first`, reported apart): the first burst of a process runs the
 * accept path's code before V8 compiled it (a third of the daemon's CPU then goes to the compiler
 * threads), which the steady state a daemon serves does not. Reports the accepted chats per second (first request sent → last 202), `/health`'s p50 / p99
 * / slowest answer from the first chat sent until every turn ended, and how every accepted turn ended on
 * `GET /events` (`turn.completed`, as its turn or absorbed; `agent.error`; `chat.discarded`): exactly once
 * each, or the bench says which did not.
 *
 * Alone: `node --import tsx bench/chat-burst.ts [--chats=1000] [--agents=10] [--probe-ms=10] [--rounds=1]
 * [--dist=<build copy>] [--cpu-prof --profile-dir=<dir>] [--node-arg=<flag>]...`; `npm run bench` runs it once as
 * a row. `--node-arg`: a node flag for the daemon (e.g. `--perf-basic-prof` for `perf record`).
 * `--dist`: another build's folder, for an A/B in the same minutes (a copy of dist/ whose
 * `.agt-build.json` names the project as `sourceRoot`, as for bench/agents-scale.ts).
 */
import { fork } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { reply } from '../test/fakes/script.js';
import { startFakeOpenAI } from '../test/fakes/openai.js';
import { call, percentile, runThenClean, startBuiltDaemon, TOKEN } from './http.js';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const log = (line: string) => process.stderr.write(`chat-burst: ${line}\n`);

export interface BurstOptions {
  chats?: number;
  agents?: number;
  probeMs?: number;
  /** A build folder other than dist/ (A/B). */
  dist?: string;
  /** Node flags for the daemon (e.g. `--cpu-prof`). */
  nodeArgs?: string[];
}

export interface BurstFigures {
  chats: number;
  agents: number;
  accepted: number;
  refused: number;
  refusals: Record<string, number>;
  acceptSeconds: number;
  acceptedPerSecond: number;
  /** First chat sent → every accepted turn ended. */
  settleSeconds: number;
  /** The daemon's CPU (user + system, all its threads) from the first chat sent until every turn ended, per chat. */
  cpuPerChatMs: number;
  /** Turns run for the accepted chats: ended by the model's answer, or stopped (interrupted by a later chat). */
  turns: { completed: number; stopped: number };
  health: { probes: number; p50Ms: number; p99Ms: number; maxMs: number; failed: number };
  endedOnce: number;
  endedTwice: number;
  notEnded: number;
  /** The burst's window on the monotonic clock in µs (a daemon profile's clock: profile-top.mjs --from/--to). */
  window: [number, number];
}

export interface BurstResult {
  /** The first burst of the process (over the 10 agents), before V8 compiled the accept path. */
  first: BurstFigures;
  spread: BurstFigures;
  oneAgent: BurstFigures;
}

interface EventFrame {
  event_type: string;
  payload?: Record<string, unknown>;
}

/** The turn ids an event ends (as test/helpers/turn-ends.ts reads them). */
function endedBy(event: EventFrame): string[] {
  const p = event.payload ?? {};
  if (event.event_type === 'turn.completed' || event.event_type === 'agent.error') {
    if (typeof p.turn_id !== 'string') return [];
    return [p.turn_id, ...(Array.isArray(p.absorbed_turn_ids) ? (p.absorbed_turn_ids as string[]) : [])];
  }
  if (event.event_type === 'chat.discarded') return Array.isArray(p.turn_ids) ? (p.turn_ids as string[]) : [];
  return [];
}

/** Counts turn ends on `GET /events` from now on. */
function watchEnds(port: number): {
  ready: Promise<void>;
  ends: Map<string, number>;
  turns: { completed: number; stopped: number };
  close(): void;
} {
  const ends = new Map<string, number>();
  const turns = { completed: 0, stopped: 0 };
  let req: ReturnType<typeof request> | undefined;
  const ready = new Promise<void>((done, fail) => {
    req = request(
      { host: '127.0.0.1', port, path: '/events', headers: { authorization: `Bearer ${TOKEN}` } },
      (res) => {
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let end = buffer.indexOf('\n\n');
          while (end >= 0) {
            const data = buffer
              .slice(0, end)
              .split('\n')
              .find((line) => line.startsWith('data: {'));
            buffer = buffer.slice(end + 2);
            const event = data ? (JSON.parse(data.slice(6)) as { event?: EventFrame }).event : undefined;
            if (event) for (const id of endedBy(event)) ends.set(id, (ends.get(id) ?? 0) + 1);
            if (event?.event_type === 'turn.completed') {
              if (event.payload?.stop_reason === 'end') turns.completed++;
              else turns.stopped++;
            }
            end = buffer.indexOf('\n\n');
          }
        });
        done();
      },
    );
    req.on('error', fail);
    req.end();
  });
  return { ready, ends, turns, close: () => req?.destroy() };
}

interface Probe {
  at: number;
  ms: number;
  status: number;
}

async function startProber(port: number, intervalMs: number): Promise<{ stop(): Promise<Probe[]> }> {
  const child = fork(join(ROOT, 'bench/health-probe.mjs'), [String(port), String(intervalMs)], { stdio: 'ignore' });
  await new Promise<void>((done) => child.once('message', () => done()));
  return {
    stop: () =>
      new Promise((done) => {
        child.on('message', (message: { op: string; probes?: Probe[] }) => {
          if (message.op === 'probes') done(message.probes ?? []);
        });
        child.send({ op: 'stop' });
      }),
  };
}

const CONNECTIONS = 200;

/** `/health` is probed this often during a burst (ms). */
export const BURST_PROBE_MS = 10;

/** Why chats were not accepted (status and body start, or the connection error), counted. */
const refusals = new Map<string, number>();

/** One chat over `agent`'s keep-alive sockets; resolves with the turn id, or undefined when refused. */
function chat(port: number, agent: Agent, agentId: string, text: string): Promise<string | undefined> {
  const payload = JSON.stringify({ text });
  return new Promise((done) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: `/agents/${agentId}/chat`,
        agent,
        headers: {
          authorization: `Bearer ${TOKEN}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          if (res.statusCode === 202) return done((JSON.parse(text) as { turnId: string }).turnId);
          refusals.set(
            `${res.statusCode} ${text.slice(0, 120)}`,
            (refusals.get(`${res.statusCode} ${text.slice(0, 120)}`) ?? 0) + 1,
          );
          done(undefined);
        });
      },
    );
    req.on('error', (error) => {
      const key = `error ${(error as NodeJS.ErrnoException).code ?? error.message}`;
      refusals.set(key, (refusals.get(key) ?? 0) + 1);
      done(undefined);
    });
    req.end(payload);
  });
}

/** User + system CPU of process `pid` so far, in ms (the figure a shared machine moves least). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** Sends `chats` chats at once, spread round-robin over `agentIds`, and follows them to their ends. */
async function burst(
  port: number,
  pid: number,
  agentIds: string[],
  chats: number,
  probeMs: number,
): Promise<BurstFigures> {
  const watch = watchEnds(port);
  await watch.ready;
  const prober = await startProber(port, probeMs);
  await sleep(300);
  // 200 connections: under the daemon's default cap per client address (a quarter of an eighth of the
  // open-file limit; over it a connection is closed unanswered), every chat in flight at once.
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  refusals.clear();
  const cpuBefore = cpuMs(pid);
  const fromUs = Number(process.hrtime.bigint() / 1000n);
  const since = performance.timeOrigin + performance.now();
  const sent: Array<Promise<string | undefined>> = [];
  for (let i = 0; i < chats; i++) sent.push(chat(port, agent, agentIds[i % agentIds.length]!, `burst chat ${i}`));
  const turnIds = await Promise.all(sent);
  const acceptSeconds = (performance.timeOrigin + performance.now() - since) / 1000;
  const accepted = turnIds.filter((id): id is string => id !== undefined);
  // Every accepted turn ends (the bench gives up after 60 s and reports the ones that did not).
  const deadline = Date.now() + 60_000;
  while (accepted.some((id) => !watch.ends.has(id)) && Date.now() < deadline) await sleep(20);
  const settleSeconds = (performance.timeOrigin + performance.now() - since) / 1000;
  const cpuPerChatMs = (cpuMs(pid) - cpuBefore) / chats;
  const toUs = Number(process.hrtime.bigint() / 1000n);
  const probes = (await prober.stop()).filter((probe) => probe.at >= since);
  watch.close();
  agent.destroy();
  const latencies = probes.map((probe) => probe.ms);
  return {
    chats,
    agents: agentIds.length,
    accepted: accepted.length,
    refused: chats - accepted.length,
    refusals: Object.fromEntries(refusals),
    acceptSeconds,
    acceptedPerSecond: accepted.length / acceptSeconds,
    settleSeconds,
    cpuPerChatMs,
    turns: watch.turns,
    health: {
      probes: probes.length,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      maxMs: Math.max(...latencies),
      failed: probes.filter((probe) => probe.status !== 200).length,
    },
    endedOnce: accepted.filter((id) => watch.ends.get(id) === 1).length,
    endedTwice: accepted.filter((id) => (watch.ends.get(id) ?? 0) > 1).length,
    notEnded: accepted.filter((id) => !watch.ends.has(id)).length,
    window: [fromUs, toUs],
  };
}

/** Starts the built daemon with an instant fake model, `agents` + 1 started agents, and runs both bursts. */
export async function chatBurstBench(options: BurstOptions = {}, cleanups: Array<() => unknown> = []) {
  const chats = options.chats ?? 1000;
  const agents = options.agents ?? 10;
  const probeMs = options.probeMs ?? BURST_PROBE_MS;
  const dist = resolve(ROOT, options.dist ?? 'dist');
  const fake = await startFakeOpenAI({ teardown: (fn) => void cleanups.push(fn) }, [], {
    fallback: reply.text('ok'),
  });
  const dataDir = mkdtempSync(join(tmpdir(), 'agt-burst-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  writeFileSync(
    join(dataDir, 'settings.json'),
    JSON.stringify({
      providers: [
        { id: 'fake', type: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, defaultModel: 'fake-model' },
      ],
    }),
  );
  const { port, child, exited } = await startBuiltDaemon(ROOT, dist, dataDir, cleanups, options.nodeArgs);
  log(`daemon pid ${child.pid}`);
  const identity = await call(port, 'POST', '/identity/create', { passphrase: 'bench passphrase, not a secret' });
  if (identity.status !== 201) throw new Error(`identity/create answered ${identity.status}`);
  const agentIds: string[] = [];
  log(`creating ${agents + 1} agents`);
  for (let i = 0; i <= agents; i++) {
    const res = await call(port, 'POST', '/agents/create', { name: `Burst ${i}`, provider: 'fake', start: true });
    if (res.status !== 201) throw new Error(`agents/create answered ${res.status}: ${JSON.stringify(res.body)}`);
    agentIds.push(res.body.agentId);
  }
  // A few turns first, so the burst does not measure the first compile of the turn's code.
  log('warm-up turns');
  for (const id of agentIds) await call(port, 'POST', `/agents/${id}/chat?wait=true`, { text: 'warm-up' });
  log(`${chats} chats over ${agents} agents, the first burst`);
  const first = await burst(port, child.pid!, agentIds.slice(0, agents), chats, probeMs);
  log(`${chats} chats over ${agents} agents`);
  const spread = await burst(port, child.pid!, agentIds.slice(0, agents), chats, probeMs);
  log(`${chats} chats to one agent`);
  const oneAgent = await burst(port, child.pid!, [agentIds[agents]!], chats, probeMs);
  // A graceful stop, so a `--cpu-prof` profile is written.
  await call(port, 'POST', '/daemon/shutdown', {});
  await exited;
  return { first, spread, oneAgent } satisfies BurstResult;
}

const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** One line of figures for a burst. */
export function describeBurst(f: BurstFigures): string {
  return (
    `${f.accepted}/${f.chats} accepted over ${f.agents} agent(s) in ${fmt(f.acceptSeconds, 2)} s (${fmt(f.acceptedPerSecond)}/s), ` +
    `all ended in ${fmt(f.settleSeconds, 2)} s, daemon CPU ${fmt(f.cpuPerChatMs, 2)} ms per chat; /health over ${f.health.probes} probes p50 ${fmt(f.health.p50Ms, 1)} ` +
    `p99 ${fmt(f.health.p99Ms, 1)} max ${fmt(f.health.maxMs, 1)} ms (${f.health.failed} failed); ` +
    `ended once ${f.endedOnce}, twice ${f.endedTwice}, not ${f.notEnded}`
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const arg = (name: string) =>
    process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ??
    (process.argv.includes(`--${name}`) ? '' : undefined);
  const rounds = Number(arg('rounds') ?? 1);
  const profileDir = resolve(arg('profile-dir') ?? join(tmpdir(), 'agt-burst-profiles'));
  const nodeArgs = [
    ...(arg('cpu-prof') !== undefined ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
    ...process.argv.filter((a) => a.startsWith('--node-arg=')).map((a) => a.slice('--node-arg='.length)),
  ];
  if (nodeArgs.length > 0) mkdirSync(profileDir, { recursive: true });
  const cleanups: Array<() => unknown> = [];
  await runThenClean(async () => {
    for (let round = 0; round < rounds; round++) {
      const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
      const result = await chatBurstBench(
        {
          chats: Number(arg('chats') ?? 1000),
          agents: Number(arg('agents') ?? 10),
          probeMs: Number(arg('probe-ms') ?? BURST_PROBE_MS),
          ...(arg('dist') ? { dist: arg('dist') } : {}),
          nodeArgs,
        },
        cleanups,
      );
      process.stdout.write(
        `${JSON.stringify({ round, load, build: arg('dist') ?? 'dist', ...result })}\n` +
          `  first: ${describeBurst(result.first)}\n  spread: ${describeBurst(result.spread)}\n  one agent: ${describeBurst(result.oneAgent)}\n`,
      );
    }
  }, cleanups);
}
