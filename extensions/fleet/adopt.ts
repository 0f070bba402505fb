/**
 * Failover (docs/fleet.md, "Failover"): when a daemon dies its placements are fenced once NATS says it is gone
 * past its cut-off (takeover.ts), or expire after the TTL, and the other daemons adopt its agents, each
 * restored from its replica in the object store when the fleet replicates agent files (restore.ts), else
 * loaded from the path it ran from (a shared file system). Every daemon looks at the fenced records and at
 * those it has not seen renewed for a TTL; the bucket decides (a record held is left alone), and the claim's
 * compare-and-set lets one daemon win each agent. Each daemon takes the agents rendezvous hashing
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
import type { ReplicaVouches } from './replica-vouches.js';
import type { Replicator } from './replicas.js';
import { type CarriedEnd, restoreReplica } from './restore.js';
import { fence, GoneRuns, heldRecord, PROBE_MS } from './takeover.js';

/**
 * The longest a daemon leaves an agent beyond its share to a less busy one before it tries it (the TTL when
 * shorter): the other may be slower at restoring its share, or dead.
 */
const SPREAD_WAIT_MS = 10_000;
const WAIT_STEP_MS = 200;
/** How long after a failed adoption this daemon tries the agent again. */
const RETRY_ADOPT_MS = 5_000;
/**
 * Restores (or loads) run at once by one daemon: a restore waits on NATS (the download, the claim, the
 * message consumer) and on the disk as much as on the event loop, so more than the cores pay; 16 restored
 * 50 agents per survivor faster than 8 or 4 in the bench (docs/fleet.md, "At scale").
 */
const ADOPT_AT_ONCE = 16;
/** The most between two looks at the records of dead daemons. */
const PASS_MAX_MS = 1_000;

type Candidate = { key: string; record: PlacementRecord };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

export class Adopter {
  private timer: NodeJS.Timeout | undefined;
  private prober: NodeJS.Timeout | undefined;
  private busy = false;
  private probing = false;
  private readonly gone: GoneRuns;

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
    fleet = '',
    private readonly vouches?: ReplicaVouches,
    /** Told when a restore of the agent begins (true) and ends (false). */
    private readonly restoring: (agentId: string, now: boolean) => void = () => {},
  ) {
    this.gone = new GoneRuns(connection, fleet);
  }

  start(): void {
    this.timer ??= setInterval(
      () => void this.pass(),
      Math.min(PASS_MAX_MS, Math.max(250, Math.floor(this.ttlMs / 4))),
    );
    this.timer.unref();
    this.prober ??= setInterval(() => void this.probe(), PROBE_MS);
    this.prober.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    clearInterval(this.prober);
    this.timer = undefined;
    this.prober = undefined;
  }

  /**
   * Asks NATS about the runs of other daemons holding records that promise a cut-off, fences the records of
   * those gone past it (takeover.ts), and adopts them at once.
   */
  private async probe(): Promise<void> {
    if (this.probing) return;
    this.probing = true;
    try {
      const others = this.relay.others().filter((candidate) => !candidate.record.fenced);
      const runs = new Map(
        others
          .filter((candidate) => candidate.record.cutOffMs !== undefined)
          .map((candidate) => [candidate.record.run, candidate.record.daemon]),
      );
      await this.gone.probe(runs);
      const past = others.filter(
        (candidate) =>
          candidate.record.cutOffMs !== undefined && this.gone.past(candidate.record.run, candidate.record.cutOffMs),
      );
      if (past.length === 0) return;
      const { placements } = await this.connection.get(1_000);
      const fenced = await Promise.all(
        past.map((candidate) => fence(placements, candidate.key, candidate.record).catch(() => false)),
      );
      const taken = past.filter((_, index) => fenced[index]);
      if (taken.length === 0) return;
      const daemons = [...new Set(taken.map((candidate) => candidate.record.daemon))].join(', ');
      this.logger.info(
        { agents: taken.length, daemons },
        `fleet: NATS says daemon ${daemons} is gone past its cut-off; its agents are up for adoption`,
      );
      void this.pass(taken.map((candidate) => ({ ...candidate, record: { ...candidate.record, fenced: true } })));
    } catch (error) {
      this.logger.debug({ err: error }, 'fleet: asking NATS which daemons are gone failed');
    } finally {
      this.probing = false;
    }
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

  private async pass(fenced: readonly Candidate[] = []): Promise<void> {
    if (this.busy || !this.ctx.requests) return;
    const candidates = new Map<string, Candidate>();
    for (const candidate of [
      ...this.relay.stale(),
      ...this.relay.others().filter((other) => other.record.fenced),
      ...fenced,
    ])
      candidates.set(candidate.key, candidate);
    if (candidates.size === 0) return;
    this.busy = true;
    try {
      const { placements } = await this.connection.get(1_000);
      // All at once: the bucket says which are free (expired, deleted or fenced).
      const list = [...candidates.values()];
      const entries = await Promise.all(list.map((candidate) => placements.get(candidate.key).catch(() => undefined)));
      if (entries.includes(undefined)) return; // NATS out of reach: decide nothing now.
      const gone = list.filter((_, index) => !heldRecord(entries[index]!));
      for (const candidate of gone) this.relay.forget(candidate.key);
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
      const first = await this.busiestFirst(ordered.filter((candidate) => candidate.first).slice(0, share));
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
          if (entry === undefined || heldRecord(entry)) break;
          await sleep(WAIT_STEP_MS);
        }
      }
    } catch (error) {
      this.logger.debug({ err: error }, 'fleet: adoption pass failed');
    } finally {
      this.busy = false;
    }
  }

  /**
   * `list` with the agents whose replica was stored last first: a copy is stored when a chat is accepted and
   * when a turn starts or ends, so those are the agents with work in hand (or a client waiting). As it is
   * without replicas, or when the object store cannot list them.
   */
  private async busiestFirst(list: Candidate[]): Promise<Candidate[]> {
    if (!this.replicator || list.length < 2) return list;
    const stored = new Map<string, number>();
    try {
      const store = await this.replicator.objects();
      for (const info of await store.list()) stored.set(info.name, Date.parse(info.mtime) || 0);
    } catch {
      return list;
    }
    return [...list].sort((a, b) => (stored.get(b.key) ?? 0) - (stored.get(a.key) ?? 0));
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
    if (again === undefined || heldRecord(again)) return false;
    try {
      if (await this.take(record)) return true;
    } catch (error) {
      this.logger.warn({ err: error, agentId: record.agentId }, 'fleet: adopting an agent failed; trying again');
    }
    // Not here, and maybe nowhere: a download that stalled or a store out of reach must not orphan it.
    this.relay.retryLater(key, record, RETRY_ADOPT_MS);
    return false;
  }

  /** Restores (or loads) the agent of `record` here; true when it runs here now. */
  private async take(record: PlacementRecord): Promise<boolean> {
    const began = Date.now();
    const requests = this.ctx.requests!;
    if (this.replicator) this.restoring(record.agentId, true);
    const restored = this.replicator
      ? await restoreReplica(
          this.replicator,
          requests,
          this.ctx.settings.dataDir,
          record.agentId,
          (ends) => {
            for (const end of ends) this.carried(end);
          },
          undefined,
          this.vouches,
        ).finally(() => this.restoring(record.agentId, false))
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
