/**
 * Failover without a shared file system (docs/fleet.md, "Replication"), measured on built daemons and a
 * real `nats-server` (skipped when it is not installed):
 *
 * - a chat turn (`POST /agents/{id}/chat?wait=true` → 200) on a lone daemon and on a fleet daemon that
 *   replicates its agents' files, alternating, median of `turns` each after 3 to warm up, with an instant
 *   model and with one that answers in 100 ms (10 turns each); the fleet's answer waits for the replica
 *   that holds the turn's end;
 * - what replication cost over those turns: copies stored per turn, bytes per copy, milliseconds per copy
 *   (the kernel's snapshot and the upload to the object store);
 * - RTO and RPO: `agents` agents on one of three daemons with their own data directories, a chat to each
 *   every 50 ms, the daemon killed (SIGKILL) and the agents' files deleted; the time from the kill until
 *   each agent answered a chat on another daemon, how the agents spread, turns completed before the kill
 *   (on the fleet stream) missing from history afterwards, and accepted chats not ended exactly once on
 *   the fleet stream.
 *
 * Usage: node --import tsx bench/fleet-failover.ts [--agents=10] [--turns=30] [--ttl=6] [--latency-only]
 * (after npm run build; `--latency-only` stops after the turn latencies and the replication cost).
 */
import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import type { UmbilicalEvent } from '@agt/contracts';
import { reply } from '../test/fakes/script.js';
import { createAgentFile } from '../test/helpers/agent-file.js';
import { runDaemon, type SpawnedDaemon, tempDir } from '../test/helpers/daemon.js';
import { eventLog } from '../test/helpers/events.js';
import { fleetJoined, fleetManifest, startNats } from '../test/helpers/nats.js';
import { startToolDriver } from '../test/helpers/tool-driver.js';
import { percentile, runThenClean } from './http.js';

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const SLOW_MODEL_MS = 100;

export interface FleetFailoverFigures {
  turns: number;
  loneTurnMs: number;
  fleetTurnMs: number;
  /** fleet / lone, medians. */
  turnRatio: number;
  /** The same with a model that takes {@link SLOW_MODEL_MS} per call (10 turns each). */
  slowModel: { modelMs: number; loneTurnMs: number; fleetTurnMs: number; turnRatio: number };
  replication: {
    copiesPerTurn: number;
    /** Bytes sent per copy: the pages a turn changed, or now and then the whole file. */
    bytesPerCopy: number;
    /** Copies stored as changed pages, of all copies. */
    deltaShare: number;
    msPerCopy: number;
    snapshotMsPerCopy: number;
  };
  /** The load average (1 minute) before and after the latency runs. */
  load: [number, number];
  failover?: {
    agents: number;
    ttlSeconds: number;
    /** Kill → each agent's first chat answered on another daemon (ms), sorted. */
    rtoMs: number[];
    rtoMedianMs: number;
    rtoMaxMs: number;
    spread: number[];
    accepted: number;
    completedBeforeKill: number;
    /** Completed turns missing from history afterwards (the RPO in turns: 0). */
    lostCompleted: number;
    /** Accepted chats that did not end exactly once on the fleet stream. */
    notEndedOnce: number;
    /** Turns cut short by the kill (`agent.error` `daemon_restart`). */
    cutShort: number;
  };
}

const endedBy = (event: UmbilicalEvent): string[] => {
  const p = event.payload as { turn_id?: string; absorbed_turn_ids?: string[]; turn_ids?: string[] };
  if (event.event_type === 'turn.completed' || event.event_type === 'agent.error')
    return p.turn_id ? [p.turn_id, ...(p.absorbed_turn_ids ?? [])] : [];
  return event.event_type === 'chat.discarded' ? (p.turn_ids ?? []) : [];
};

async function turnMs(d: SpawnedDaemon, agentId: string, text: string): Promise<number> {
  const since = performance.now();
  const answer = await d.request('POST', `/agents/${agentId}/chat?wait=true`, { text });
  if (answer.status !== 200) throw new Error(`chat answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return performance.now() - since;
}

export async function fleetFailoverBench(
  options: { agents?: number; turns?: number; ttlSeconds?: number; failover?: boolean } = {},
  cleanups: Array<() => unknown> = [],
): Promise<FleetFailoverFigures | { skipped: string }> {
  const agents = options.agents ?? 10;
  const turns = options.turns ?? 30;
  const ttlSeconds = options.ttlSeconds ?? 6;
  // Cleanups run in order: the daemons before NATS, so they stop while it still answers.
  const later: Array<() => unknown> = [];
  cleanups.push(async () => {
    for (const fn of later.reverse()) await fn();
  });
  const t = { teardown: (fn: () => unknown) => void later.push(fn) };
  const nats = await startNats(t);
  if (typeof nats === 'string') return { skipped: nats };
  const driver = await startToolDriver(t);
  // A model that takes 100 ms to answer (a real one takes longer): the turn's own time beside the replica's.
  const slow = await startToolDriver(t, () => reply.text('ok', { delayMs: SLOW_MODEL_MS }), 'slow');
  const manifest = fleetManifest({ ttlSeconds, replicate: true });
  const member = (daemonName: string) =>
    runDaemon(t, {
      settings: {
        providers: [driver.provider, slow.provider],
        fleet: { servers: [nats.url], name: 'bench', daemonName },
      },
      extensions: manifest,
    });
  const [lone, alpha, beta, gamma] = await Promise.all([
    runDaemon(t, { settings: { providers: [driver.provider, slow.provider] } }),
    member('alpha'),
    member('beta'),
    member('gamma'),
  ]);
  await Promise.all([fleetJoined(alpha), fleetJoined(beta), fleetJoined(gamma)]);
  const files = tempDir(t);

  // Turn latency, lone against fleet, alternating.
  const load = async (d: SpawnedDaemon, name: string, model = driver.model) => {
    const loaded = await d.request('POST', '/agents/load', {
      filePath: await createAgentFile(files, { name, model }),
    });
    if (loaded.status !== 200) throw new Error(`load answered ${loaded.status}: ${JSON.stringify(loaded.body)}`);
    return loaded.body.id as string;
  };
  const loneAgent = await load(lone, 'lone');
  const fleetAgent = await load(alpha, 'fleet');
  for (let i = 0; i < 3; i++) {
    await turnMs(lone, loneAgent, `warm ${i}`);
    await turnMs(alpha, fleetAgent, `warm ${i}`);
  }
  const loadBefore = loadavg()[0]!;
  const before = (await alpha.request('GET', '/fleet')).body.replication;
  const loneMs: number[] = [];
  const fleetMs: number[] = [];
  for (let i = 0; i < turns; i++) {
    loneMs.push(await turnMs(lone, loneAgent, `turn ${i}`));
    fleetMs.push(await turnMs(alpha, fleetAgent, `turn ${i}`));
  }
  const after = (await alpha.request('GET', '/fleet')).body.replication;
  const copies = after.uploads - before.uploads;
  const attempts = copies + (after.unchanged - before.unchanged);
  const loneSlow = await load(lone, 'lone-slow', slow.model);
  const fleetSlow = await load(alpha, 'fleet-slow', slow.model);
  const loneSlowMs: number[] = [];
  const fleetSlowMs: number[] = [];
  for (let i = 0; i < 10; i++) {
    loneSlowMs.push(await turnMs(lone, loneSlow, `slow ${i}`));
    fleetSlowMs.push(await turnMs(alpha, fleetSlow, `slow ${i}`));
  }
  const latency = {
    turns,
    loneTurnMs: percentile(loneMs, 50),
    fleetTurnMs: percentile(fleetMs, 50),
    turnRatio: percentile(fleetMs, 50) / percentile(loneMs, 50),
    slowModel: {
      modelMs: SLOW_MODEL_MS,
      loneTurnMs: percentile(loneSlowMs, 50),
      fleetTurnMs: percentile(fleetSlowMs, 50),
      turnRatio: percentile(fleetSlowMs, 50) / percentile(loneSlowMs, 50),
    },
    replication: {
      copiesPerTurn: copies / turns,
      bytesPerCopy: copies > 0 ? (after.bytes - before.bytes) / copies : 0,
      deltaShare: copies > 0 ? (after.deltas - before.deltas) / copies : 0,
      msPerCopy: copies > 0 ? (after.snapshotMs - before.snapshotMs + after.uploadMs - before.uploadMs) / copies : 0,
      snapshotMsPerCopy: attempts > 0 ? (after.snapshotMs - before.snapshotMs) / attempts : 0,
    },
    load: [loadBefore, loadavg()[0]!] as [number, number],
  };
  if (options.failover === false) return latency;

  // RTO and RPO under chat load.
  const fleet = await eventLog(t, beta, '?scope=fleet');
  const ids: string[] = [];
  for (let i = 0; i < agents; i++) ids.push(await load(alpha, `failover-${i}`));
  const texts = new Map<string, { agentId: string; text: string }>();
  let killed = false;
  const chats = ids.map(async (id, i) => {
    for (let n = 0; !killed; n++) {
      const text = `load ${i}.${n}`;
      const answer = await alpha.request('POST', `/agents/${id}/chat`, { text }).catch(() => undefined);
      if (answer?.status === 202) texts.set(answer.body.turnId as string, { agentId: id, text });
      await sleep(50);
    }
  });
  await sleep(1_500);
  const killedAt = performance.now();
  await alpha.stop('SIGKILL');
  killed = true;
  await Promise.all(chats);
  rmSync(files, { recursive: true, force: true });
  const completed = new Set(fleet.events.filter((event) => event.event_type === 'turn.completed').flatMap(endedBy));
  const rto: number[] = [];
  await Promise.all(
    ids.map(async (id) => {
      for (;;) {
        const answer = await beta.request('POST', `/agents/${id}/chat?wait=true`, { text: 'after' });
        if (answer.status === 200) {
          texts.set(answer.body.turnId as string, { agentId: id, text: 'after' });
          rto.push(performance.now() - killedAt);
          return;
        }
        if (performance.now() - killedAt > 120_000) throw new Error(`agent ${id} not back within 120 s`);
        await sleep(100);
      }
    }),
  );
  const spread = await Promise.all(
    [beta, gamma].map(async (d) => (await d.request('GET', '/fleet')).body.agents.length as number),
  );
  const counts = () => {
    const count = new Map<string, number>();
    for (const event of fleet.events)
      for (const turnId of endedBy(event)) count.set(turnId, (count.get(turnId) ?? 0) + 1);
    return count;
  };
  const until = performance.now() + 30_000;
  while ([...texts.keys()].some((turnId) => !counts().has(turnId)) && performance.now() < until) await sleep(200);
  const count = counts();
  let lost = 0;
  for (const id of ids) {
    const history = JSON.stringify((await beta.request('GET', `/agents/${id}/chat?limit=500`)).body);
    for (const [turnId, { agentId, text }] of texts)
      if (agentId === id && completed.has(turnId) && !history.includes(`"${text}"`)) lost += 1;
  }
  rto.sort((a, b) => a - b);
  return {
    ...latency,
    failover: {
      agents,
      ttlSeconds,
      rtoMs: rto.map(Math.round),
      rtoMedianMs: percentile(rto, 50),
      rtoMaxMs: rto[rto.length - 1] ?? Number.NaN,
      spread,
      accepted: texts.size,
      completedBeforeKill: completed.size,
      lostCompleted: lost,
      notEndedOnce: [...texts.keys()].filter((turnId) => count.get(turnId) !== 1).length,
      cutShort: fleet.events.filter(
        (event) => event.event_type === 'agent.error' && (event.payload as { code?: string }).code === 'daemon_restart',
      ).length,
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const cleanups: Array<() => unknown> = [];
  await runThenClean(async () => {
    const figures = await fleetFailoverBench(
      {
        agents: Number(arg('agents') ?? 10),
        turns: Number(arg('turns') ?? 30),
        ttlSeconds: Number(arg('ttl') ?? 6),
        failover: !process.argv.includes('--latency-only'),
      },
      cleanups,
    );
    process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
  }, cleanups);
}
