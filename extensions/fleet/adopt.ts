/**
 * Failover (docs/fleet.md, "Failover"): when a daemon dies its placements expire, and the other daemons adopt
 * its agents, each restored from its replica in the object store when the fleet replicates agent files
 * (restore.ts), else loaded from the path it ran from (a shared file system). Every daemon looks at the
 * records it has not seen renewed for a TTL; the bucket decides (a record still there is left alone), and
 * the claim's compare-and-set lets one daemon win each agent. Each daemon goes through them in an order of
 * its own and takes its share (the agents over the daemons alive, members.ts) at once, a few at a time, then
 * what is left after a wait, so the agents spread over the survivors.
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

/** The longest a daemon leaves an agent beyond its share to a less busy one before it tries it. */
const SPREAD_WAIT_MS = 3_000;
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
      for (const candidate of spreadOrder(candidates, this.daemon)) {
        const entry = await placements.get(candidate.key).catch(() => undefined);
        if (entry === undefined) return; // NATS out of reach: decide nothing now.
        if (entry && entry.operation === 'PUT') continue; // still held (the watch lags, or it was renewed)
        this.relay.forget(candidate.key);
        gone.push(candidate);
      }
      if (gone.length === 0) return;
      // This daemon's share first, a few at a time; then what no other daemon took by then, each agent
      // tried only while this daemon runs no more agents than the least busy of the others (or after a wait).
      const dead = new Set(gone.map((candidate) => candidate.record.daemon));
      const alive = (await this.members.live().catch(() => [this.daemon])).filter((name) => !dead.has(name));
      const share = Math.ceil(gone.length / Math.max(1, alive.length));
      await this.adoptAll(placements, gone.slice(0, share));
      for (const candidate of gone.slice(share)) {
        const until = Date.now() + SPREAD_WAIT_MS;
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
 * The candidates in an order of this daemon's own (a hash of the daemon's name and the agent's key): the
 * survivors start on different agents rather than all racing for the first, which spreads them.
 */
function spreadOrder<T extends { key: string }>(candidates: readonly T[], daemon: string): T[] {
  const rank = (key: string) => createHash('sha256').update(`${daemon}\0${key}`).digest().readUInt32BE(0);
  return [...candidates].sort((a, b) => rank(a.key) - rank(b.key));
}
