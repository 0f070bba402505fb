/**
 * One daemon's membership of the fleet: its connection, the placements it holds, and what `/fleet` reports.
 */
import { type ExtensionContext, type FleetSettings, turnIdsEndedBy, type UmbilicalEvent } from '@agt/contracts';
import { FleetConnection } from './connection.js';
import type { FleetOptions } from './options.js';
import { PlacementKeeper, type PlacementRecord, parseRecord } from './placement.js';
import { Relay } from './relay.js';
import { Signer } from './signing.js';
import { FleetEvents } from './events.js';
import { Adopter } from './adopt.js';
import { DrainMarks } from './drain-marks.js';
import { AgentDirectory } from './agent-directory.js';
import { FleetMessages } from './messages.js';
import { Members } from './members.js';
import { Replicator } from './replicas.js';
import { Handoffs } from './handoff.js';
import { daemonList, unreachable } from './daemon-list.js';
import { Liveness } from './liveness.js';
import { ReplicaVouches } from './replica-vouches.js';

/** Events of changes a takeover must see that may come outside a turn: each asks for a copy (lazily). */
const CHANGES_OUTSIDE_TURNS = new Set<string>([
  'agent.loaded',
  'agent.config.changed',
  'agent.identity.changed',
  'credential.changed',
  'memory.saved',
  'memory.forgotten',
  'loop.compacted',
  'loop.cleared',
]);

/**
 * How long after its restore an agent's first copy is made, when nothing else asks for one sooner: the store
 * holds the copy it was restored from, and the restores of a failover go first (well inside the stream's
 * duplicate window, so the ends that copy carries are not published twice).
 */
const RESTORED_COPY_DELAY_MS = 60_000;

export class Fleet {
  readonly connection: FleetConnection;
  readonly placement: PlacementKeeper;
  readonly relay: Relay;
  readonly events: FleetEvents;
  readonly marks: DrainMarks;
  /** Messages between the fleet's agents, over JetStream. */
  readonly messages: FleetMessages;
  /** Agent files replicated to the object store (option `replicate`); undefined without. */
  readonly replicator: Replicator | undefined;
  /** The steps of a planned move through the object store (option `replicate`). */
  readonly handoffs: Handoffs;
  private readonly adopter: Adopter | undefined;
  /** This daemon's side of a death told by NATS before the TTL (liveness.ts); undefined with `cutOffSeconds` 0. */
  private readonly liveness: Liveness | undefined;
  /** The replicas being restored here, vouched for to the kernel (replica-vouches.ts); undefined without. */
  readonly vouches: ReplicaVouches | undefined;
  private readonly members: Members;
  /** Agents being restored from their replica here (adopt.ts). */
  private readonly restoring = new Set<string>();
  private readonly ttlMs: number;
  private stopped = false;

  constructor(
    private readonly ctx: Pick<
      ExtensionContext,
      'env' | 'logger' | 'agents' | 'requests' | 'bus' | 'daemonIdentity' | 'settings' | 'inbox'
    >,
    readonly settings: FleetSettings,
    private readonly options: FleetOptions,
  ) {
    this.ttlMs = options.ttlSeconds * 1000;
    this.connection = new FleetConnection(
      settings,
      ctx.env,
      ctx.logger,
      settings.daemonName,
      this.ttlMs,
      options.replicas,
    );
    this.marks = new DrainMarks(this.connection, settings.daemonName);
    this.placement = new PlacementKeeper(this.connection, settings.daemonName, this.ttlMs, ctx.logger, this.marks);
    this.liveness =
      options.cutOffSeconds > 0
        ? new Liveness(
            this.connection,
            settings.name,
            settings.daemonName,
            this.placement.run,
            Math.round(options.cutOffSeconds * 1000),
            (why) => this.placement.cutAll(why),
          )
        : undefined;
    this.placement.liveness = this.liveness;
    this.relay = new Relay(
      ctx,
      this.connection,
      settings.name,
      settings.daemonName,
      this.placement.run,
      this.ttlMs,
      options.requestTimeoutMs,
      ctx.logger,
      new Signer(ctx.daemonIdentity, settings.daemonName, () => ctx.settings.current().fleet?.daemonDids ?? []),
    );
    this.events = new FleetEvents(
      this.connection,
      settings.name,
      settings.daemonName,
      this.placement.run,
      ctx.logger,
      async (reference) => {
        const holder = await this.relay.holderOf(reference).catch(() => undefined);
        return holder && holder.run !== this.placement.run ? holder.agentId : undefined;
      },
    );
    const snapshots = ctx.agents.snapshots;
    this.replicator =
      options.replicate && snapshots
        ? new Replicator(
            this.connection,
            snapshots,
            (agentId) => ctx.agents.find(agentId)?.id === agentId,
            `agt_fleet_${settings.name}_agents`,
            settings.name,
            settings.daemonName,
            options.replicas,
            ctx.logger,
            (agentId) => this.events.pendingEnds(agentId),
          )
        : undefined;
    this.vouches = this.replicator ? new ReplicaVouches() : undefined;
    ctx.bus.subscribe((event) => this.events.publish(event, this.replicate(event)));
    this.handoffs = new Handoffs(ctx, this.placement, this.replicator, this.events, settings.daemonName);
    this.messages = new FleetMessages(
      ctx,
      this.connection,
      new AgentDirectory(this.connection, settings.name, settings.daemonName, options.replicas, ctx.logger),
      settings.name,
      options.replicas,
      ctx.logger,
      (agentId) => this.replicator?.request(agentId) ?? Promise.resolve(),
    );
    ctx.bus.subscribe((event) => {
      if (event.event_type === 'agent.config.changed' && event.agent_id) this.messages.configChanged(event.agent_id);
    });
    this.members = new Members(
      this.connection,
      settings.name,
      settings.daemonName,
      this.ttlMs,
      options.replicas,
      () => ({
        replication: this.replication(),
      }),
    );
    this.adopter = options.adopt
      ? new Adopter(
          ctx,
          this.connection,
          this.relay,
          this.ttlMs,
          ctx.logger,
          settings.daemonName,
          this.members,
          this.replicator,
          (end) => this.events.publishCarried(end),
          settings.name,
          this.vouches,
          (agentId, now) => {
            if (now) this.restoring.add(agentId);
            else this.restoring.delete(agentId);
          },
        )
      : undefined;
  }

  /**
   * Asks for a replica of the agent's file after the events that change what a takeover must see: a turn
   * started (work accepted without a chat) or ended, and the changes of {@link CHANGES_OUTSIDE_TURNS}. The returned promise (for a turn's
   * start and end) holds the event back from the fleet stream until a replica holding it is stored: the
   * stream never shows a turn, or an end, that the daemon taking the agent over would not know.
   */
  private replicate(event: UmbilicalEvent): Promise<void> | undefined {
    const replicator = this.replicator;
    const agentId = event.agent_id;
    if (!replicator || !agentId) return undefined;
    if (event.event_type === 'agent.unloaded') {
      replicator.forget(agentId);
      return undefined;
    }
    const ended = turnIdsEndedBy(event);
    if (ended.length > 0) return replicator.request(agentId, ended);
    if (event.event_type === 'turn.started')
      return replicator.request(agentId, [(event.payload as { turn_id: string }).turn_id], true);
    if (event.event_type === 'agent.loaded' && this.restoring.has(agentId)) {
      setTimeout(() => void replicator.request(agentId, [], true), RESTORED_COPY_DELAY_MS).unref();
      return undefined;
    }
    if (CHANGES_OUTSIDE_TURNS.has(event.event_type)) void replicator.request(agentId, [], true);
    return undefined;
  }

  /** Connects in the background, then answers forwarded requests (retried until it can, while running). */
  connect(): void {
    void this.connection
      .get()
      .catch((error: unknown) => this.ctx.logger.warn({ err: error }, 'fleet: NATS not reachable yet; still trying'));
    const listen = (attempt: number): void => {
      if (this.stopped) return;
      this.relay.start().catch((error: unknown) => {
        if (attempt === 0) this.ctx.logger.warn({ err: error }, 'fleet: forwarded requests cannot be answered yet');
        setTimeout(() => listen(attempt + 1), Math.min(5_000, 250 * 2 ** attempt)).unref();
      });
    };
    listen(0);
    this.members.start();
    this.adopter?.start();
  }

  problem(): string | null {
    if (this.connection.connected) return null;
    return `NATS (settings fleet.servers) is not reachable${this.connection.lastError ? `: ${this.connection.lastError}` : ''}; agents cannot be placed`;
  }

  async status() {
    const drained = await this.marks.shown();
    return {
      configured: true,
      fleet: this.settings.name,
      daemon: this.settings.daemonName,
      did: this.ctx.daemonIdentity?.did ?? null,
      connected: this.connection.connected,
      problem: this.connection.lastError,
      ttlSeconds: this.options.ttlSeconds,
      draining: drained !== null,
      drainTo: drained?.to ?? [],
      agents: this.placement.heldAgents().map(publicRecord),
      replication: this.replicator
        ? { enabled: true as const, ...this.replicator.status() }
        : { enabled: false as const },
    };
  }

  /** This daemon's replication as the members record and `GET /fleet/daemons` give it. */
  private replication() {
    return this.replicator ? { enabled: true, lagMs: this.replicator.status().lagMs } : { enabled: false };
  }

  /** Every daemon of the fleet: alive or not, drained or not, its agents and replication lag. */
  async daemons() {
    const [members, marks] = await Promise.all([this.members.records().catch(unreachable), this.marks.all()]);
    // The placements as the watch keeps them: a console asks every few seconds, and a read of the bucket is one
    // request per agent of the fleet.
    const placements = this.relay.placed();
    return daemonList(this.settings.name, {
      self: { name: this.settings.daemonName, replication: this.replication() },
      members,
      marks,
      placements,
    });
  }

  /** Every live record of the placement bucket (a fenced one is nobody's: takeover.ts). */
  async placements() {
    return (await this.records()).filter((record) => !record.fenced).map(publicRecord);
  }

  /** Every record of the placement bucket, read now. */
  async records(): Promise<PlacementRecord[]> {
    const { placements } = await this.connection.get();
    const keys: string[] = [];
    for await (const key of await placements.keys()) keys.push(key);
    const records: PlacementRecord[] = [];
    for (const key of keys) {
      const entry = await placements.get(key);
      const record = entry && entry.operation === 'PUT' ? parseRecord(entry.string()) : undefined;
      if (record) records.push(record);
    }
    return records;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.adopter?.stop();
    this.liveness?.stop();
    this.replicator?.stop();
    // The kernel unloads every agent before extensions stop, which releases their placements; whatever
    // is still held (a load that raced the shutdown) is given up here.
    this.relay.stop();
    this.messages.close();
    this.placement.dropAll();
    await Promise.all([this.placement.settled(), this.events.stop(2_000), this.members.stop()]);
    await this.connection.close();
  }
}

function publicRecord(record: PlacementRecord) {
  return {
    agentId: record.agentId,
    name: record.name,
    handle: record.handle,
    daemon: record.daemon,
    since: record.since,
  };
}
