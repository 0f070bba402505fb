/**
 * Failover (docs/fleet.md, "Failover"): when a daemon dies its placements expire, and the other daemons adopt
 * its agents, each restored from its replica in the object store when the fleet replicates agent files
 * (restore.ts), else loaded from the path it ran from (a shared file system). Every daemon looks at the
 * records it has not seen renewed for a TTL; the bucket decides (a record still there is left alone), and
 * the claim's compare-and-set lets one daemon win each agent. Each daemon takes the agents rendezvous hashing
 * gives it, up to its share of the load (members.ts says which daemons are alive), a few at a time, then what
 * is left while it runs no more agents than the others, so the agents spread evenly over the survivors.
 */
import { createHash } from 'node:crypto';
import type { ExtensionContext, Logger } from '@agt/contracts';
import type { KV } from '@nats-io/kv';
import type { FleetConnection } from './connection.js';
import type { Members } from './members.js';
import type { PlacementRecord } from './placement.js';
import type { Relay } from './relay.js';
import type { Replicator } from './replicas.js';
import { type CarriedEnd, restoreReplica } from './restore.js';

/**
 * The longest a daemon leaves an agent beyond its share to a less busy one before it tries it (the TTL when
 * shorter): the other may be slower at restoring its share, or dead.
 */
const SPREAD_WAIT_MS = 10_000;
const WAIT_STEP_MS = 200;
/** Restores (or loads) run at once by one daemon. */
const ADOPT_AT_ONCE = 4;

type Candidate = { key: string; record: PlacementRecord };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

export class Adopter {
  private timer: NodeJS.Timeout | undefined;
  private busy = false;

  constructor(
    private readonly ctx: Pick<ExtensionContext, 'requests' | 'settings'>,
    private readonly connection: FleetConnection,
    private readonly relay: Relay,
    private readonly ttlMs: number,
    private readonly logger: Logger,
    private readonly daemon: string,
    private readonly members: Members,
    private readonly replicator?: Replicator,
    private readonly carried: (end: CarriedEnd) => void = () => {},
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.pass(), Math.max(250, Math.floor(this.ttlMs / 4)));
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Loads the agent from the path it ran from (a shared file system); the answer's status. */
  private async loadFromPath(filePath: string): Promise<number> {
    if (!filePath || !this.ctx.requests) return 404;
    const body = Buffer.from(JSON.stringify({ filePath })).toString('base64');
    const answer = await this.ctx.requests.dispatch({
      method: 'POST',
      url: '/agents/load',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body,
    });
    return answer.statusCode;
  }

  private async pass(): Promise<void> {
    if (this.busy || !this.ctx.requests) return;
    const candidates = this.relay.stale();
    if (candidates.length === 0) return;
    this.busy = true;
    try {
      const { placements } = await this.connection.get(1_000);
      const gone: Candidate[] = [];
      for (const candidate of candidates) {
        const entry = await placements.get(candidate.key).catch(() => undefined);
        if (entry === undefined) return; // NATS out of reach: decide nothing now.
        if (entry && entry.operation === 'PUT') continue; // still held (the watch lags, or it was renewed)
        this.relay.forget(candidate.key);
        gone.push(candidate);
      }
      if (gone.length === 0) return;
      // First the agents rendezvous hashing gives this daemon, up to its share of the load (all the agents
      // of the daemons alive and these, over the daemons alive); then the others, each only while this daemon
      // runs no more agents than the least busy of the others (or after a wait: that one may be slow, or dead).
      const dead = new Set(gone.map((candidate) => candidate.record.daemon));
      const alive = (await this.members.live().catch(() => [this.daemon])).filter((name) => !dead.has(name));
      const counts = this.relay.counts();
      const load = alive.reduce((sum, name) => sum + (counts.get(name) ?? 0), gone.length);
      const share = Math.max(0, Math.ceil(load / Math.max(1, alive.length)) - (counts.get(this.daemon) ?? 0));
      const ordered = spreadOrder(gone, this.daemon, alive);
      const first = ordered.filter((candidate) => candidate.first).slice(0, share);
      await this.adoptAll(placements, first);
      for (const candidate of ordered.filter((candidate) => !first.includes(candidate))) {
        const until = Date.now() + Math.min(this.ttlMs, SPREAD_WAIT_MS);
        for (;;) {
          const counts = this.relay.counts();
          const others = alive.filter((name) => name !== this.daemon).map((name) => counts.get(name) ?? 0);
          if ((counts.get(this.daemon) ?? 0) <= Math.min(...others) || Date.now() > until) {
            await this.adopt(placements, candidate);
            break;
          }
          const entry = await placements.get(candidate.key).catch(() => undefined);
          if (entry === undefined || (entry && entry.operation === 'PUT')) break;
          await sleep(WAIT_STEP_MS);
        }
      }
    } catch (error) {
      this.logger.debug({ err: error }, 'fleet: adoption pass failed');
    } finally {
      this.busy = false;
    }
  }

  /** Adopts `list`, {@link ADOPT_AT_ONCE} at a time. */
  private async adoptAll(placements: KV, list: readonly Candidate[]): Promise<void> {
    let next = 0;
    const worker = async () => {
      while (next < list.length) await this.adopt(placements, list[next++]!);
    };
    await Promise.all(Array.from({ length: Math.min(ADOPT_AT_ONCE, list.length) }, worker));
  }

  /** Takes one agent over, unless another daemon did already; true when it runs here now. */
  private async adopt(placements: KV, { key, record }: Candidate): Promise<boolean> {
    // Another daemon may have taken it meanwhile: then nothing is downloaded.
    const again = await placements.get(key).catch(() => undefined);
    if (again === undefined || (again && again.operation === 'PUT')) return false;
    const began = Date.now();
    const requests = this.ctx.requests!;
    const restored = this.replicator
      ? await restoreReplica(this.replicator, requests, this.ctx.settings.dataDir, record.agentId, (ends) => {
          for (const end of ends) this.carried(end);
        })
      : undefined;
    const status = restored ? restored.status : await this.loadFromPath(record.filePath);
    if (status === 200)
      this.logger.info(
        {
          agentId: record.agentId,
          from: record.daemon,
          ms: Date.now() - began,
          ...(restored ? { replica: { turnId: restored.turnId, bytes: restored.bytes } } : {}),
        },
        `fleet: adopted agent ${record.name} after daemon ${record.daemon} stopped renewing it${restored ? ' (from its replica)' : ''}`,
      );
    else
      this.logger.info(
        { agentId: record.agentId, status, code: restored?.code },
        'fleet: an agent of a stopped daemon was not adopted here (another daemon did, or its file is out of reach)',
      );
    return status === 200;
  }
}

/**
 * The candidates by rendezvous hashing over the daemons alive: `first` for those this daemon weighs most for
 * (no other daemon puts them first), those first, each group by this daemon's weight. The survivors thus
 * start on different agents rather than all racing for the same ones.
 */
function spreadOrder(
  candidates: readonly Candidate[],
  daemon: string,
  alive: readonly string[],
): Array<Candidate & { first: boolean }> {
  const weight = (name: string, key: string) => createHash('sha256').update(`${name}\0${key}`).digest().readUInt32BE(0);
  return candidates
    .map((candidate) => ({
      ...candidate,
      first: alive.every((name) => name === daemon || weight(name, candidate.key) < weight(daemon, candidate.key)),
      weight: weight(daemon, candidate.key),
    }))
    .sort((a, b) => Number(b.first) - Number(a.first) || b.weight - a.weight);
}
