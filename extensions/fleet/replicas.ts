/**
 * Agent files replicated to the fleet's JetStream object store (docs/fleet.md, "Replication"), so that a
 * daemon without the dead daemon's file system can take its agents over. After every change worth keeping
 * (a chat accepted, a turn started or ended) the agent's file is copied consistently by the kernel
 * (`ctx.agents.snapshots`) and stored as the object named by the agent's key, with metadata saying its
 * schema version, the last turn id it holds and its SHA-256. Uploads are coalesced per agent: at most one
 * in flight, and requests made meanwhile are served by the next, which copies the latest state; a copy equal
 * to the last one stored is not sent again. Each request resolves once a copy made after it is stored, which
 * is what the kernel waits for before it answers a chat, and what the fleet stream waits for before it
 * publishes a turn's end. The file's sealed credentials travel and rest sealed, as they are in the file.
 */
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import type { AgentReplication, AgentSnapshots, Logger } from '@agt/contracts';
import type { ObjectStore } from '@nats-io/obj';
import type { FleetConnection } from './connection.js';
import { placementKey } from './keys.js';

/** Between attempts of an upload that failed (NATS out of reach): the next attempt copies the file anew. */
const RETRY_MS = 500;

interface Waiter {
  generation: number;
  resolve: () => void;
}

interface AgentReplica {
  /** Requests made (each bumps it) and the generation the last stored copy serves. */
  wanted: number;
  stored: number;
  running: boolean;
  waiters: Waiter[];
  /** `performance.now()` of the oldest request not served yet, or null when none waits. */
  pendingSince: number | null;
  turnId: string | null;
  sha256: string | null;
  bytes: number;
  storedAt: number | null;
}

/** What each stored copy cost, for `GET /fleet` and the bench. */
export interface ReplicationTotals {
  uploads: number;
  /** Copies equal to the stored one, not sent. */
  unchanged: number;
  bytes: number;
  /** Time spent copying the file (the kernel's snapshot) and storing it, summed over uploads. */
  snapshotMs: number;
  uploadMs: number;
  failures: number;
}

export class Replicator implements AgentReplication {
  private readonly agents = new Map<string, AgentReplica>();
  private store: Promise<ObjectStore> | undefined;
  private stopped = false;
  readonly totals: ReplicationTotals = {
    uploads: 0,
    unchanged: 0,
    bytes: 0,
    snapshotMs: 0,
    uploadMs: 0,
    failures: 0,
  };

  constructor(
    private readonly connection: FleetConnection,
    private readonly snapshots: AgentSnapshots,
    readonly isLoaded: (agentId: string) => boolean,
    readonly bucket: string,
    private readonly daemon: string,
    private readonly replicas: number,
    private readonly logger: Logger,
  ) {}

  /** The object store, made if missing (on first use). */
  objects(): Promise<ObjectStore> {
    this.store ??= (async () => {
      const { nc } = await this.connection.get();
      const { Objm } = await import('@nats-io/obj');
      return new Objm(nc).create(this.bucket, { replicas: this.replicas });
    })().catch((error: unknown) => {
      this.store = undefined;
      throw error;
    });
    return this.store;
  }

  accepted(agentId: string, turnId: string): Promise<void> {
    return this.request(agentId, turnId);
  }

  /**
   * Asks for a copy of the agent's file made after now; resolves once it is stored, or once the agent is no
   * longer loaded here (nothing more to copy) or the extension stops.
   */
  request(agentId: string, turnId?: string): Promise<void> {
    if (this.stopped || !this.isLoaded(agentId)) return Promise.resolve();
    let state = this.agents.get(agentId);
    if (!state) {
      state = {
        wanted: 0,
        stored: 0,
        running: false,
        waiters: [],
        pendingSince: null,
        turnId: null,
        sha256: null,
        bytes: 0,
        storedAt: null,
      };
      this.agents.set(agentId, state);
    }
    state.wanted += 1;
    if (turnId) state.turnId = turnId;
    state.pendingSince ??= performance.now();
    const generation = state.wanted;
    const done = new Promise<void>((resolve) => state.waiters.push({ generation, resolve }));
    if (!state.running) void this.drain(agentId, state);
    return done;
  }

  /** The agent is gone from this daemon: whatever waits is let go (its file is as it is). */
  forget(agentId: string): void {
    const state = this.agents.get(agentId);
    if (!state) return;
    this.agents.delete(agentId);
    for (const waiter of state.waiters.splice(0)) waiter.resolve();
  }

  private async drain(agentId: string, state: AgentReplica): Promise<void> {
    state.running = true;
    try {
      while (state.stored < state.wanted && !this.stopped && this.agents.get(agentId) === state) {
        const generation = state.wanted;
        const turnId = state.turnId;
        if (!this.isLoaded(agentId)) break;
        try {
          await this.upload(agentId, state, turnId);
        } catch (error) {
          this.totals.failures += 1;
          this.logger.debug({ err: error, agentId }, 'fleet: an agent file could not be replicated yet; retrying');
          await new Promise((resolve) => setTimeout(resolve, RETRY_MS).unref());
          continue;
        }
        state.stored = generation;
        state.storedAt = Date.now();
        if (state.stored === state.wanted) state.pendingSince = null;
        const ready = state.waiters.filter((waiter) => waiter.generation <= generation);
        state.waiters = state.waiters.filter((waiter) => waiter.generation > generation);
        for (const waiter of ready) waiter.resolve();
      }
    } finally {
      state.running = false;
      if (this.stopped || this.agents.get(agentId) !== state || !this.isLoaded(agentId)) this.forget(agentId);
    }
  }

  private async upload(agentId: string, state: AgentReplica, turnId: string | null): Promise<void> {
    const store = await this.objects();
    const began = performance.now();
    await this.snapshots.snapshot(agentId, async (copy) => {
      const copied = performance.now();
      this.totals.snapshotMs += copied - began;
      if (copy.sha256 === state.sha256) {
        this.totals.unchanged += 1;
        return;
      }
      await store.put(
        {
          name: placementKey(agentId),
          metadata: {
            agentId,
            schemaVersion: String(copy.schemaVersion),
            turnId: turnId ?? '',
            sha256: copy.sha256,
            bytes: String(copy.bytes),
            daemon: this.daemon,
            at: String(Date.now()),
          },
        },
        Readable.toWeb(createReadStream(copy.path)) as ReadableStream<Uint8Array>,
      );
      this.totals.uploadMs += performance.now() - copied;
      this.totals.uploads += 1;
      this.totals.bytes += copy.bytes;
      state.sha256 = copy.sha256;
      state.bytes = copy.bytes;
    });
  }

  /** Per agent: the last turn id its stored copy holds, when, and how long its oldest unserved request waits. */
  status() {
    const now = performance.now();
    const agents = [...this.agents.entries()].map(([agentId, state]) => ({
      agentId,
      turnId: state.turnId,
      storedAt: state.storedAt,
      bytes: state.bytes,
      lagMs: state.pendingSince === null ? 0 : Math.round(now - state.pendingSince),
    }));
    return {
      bucket: this.bucket,
      lagMs: agents.reduce((most, agent) => Math.max(most, agent.lagMs), 0),
      agents,
      ...this.totals,
      snapshotMs: Math.round(this.totals.snapshotMs),
      uploadMs: Math.round(this.totals.uploadMs),
    };
  }

  stop(): void {
    this.stopped = true;
    for (const agentId of [...this.agents.keys()]) this.forget(agentId);
  }
}
