/**
 * Agent files replicated to the fleet's JetStream (docs/fleet.md, "Replication"), so that a daemon without
 * the dead daemon's file system can take its agents over. After every change worth keeping (a chat accepted,
 * a turn started or ended) the agent's file is copied consistently by the kernel (`ctx.agents.snapshots`) and
 * stored on the agent's subject of the replica stream (replica-log.ts): the pages changed since the copy
 * stored before it, or now and then the whole copy, with a header saying its schema version, the last turn
 * id it holds and its SHA-256. Uploads are coalesced per agent: at most one in flight, and requests made
 * meanwhile are served by the next, which copies the latest state; a copy equal to the last one stored is not
 * sent again. Each request resolves once a copy made after it is stored, which
 * is what the kernel waits for before it answers a chat, and what the fleet stream waits for before it
 * publishes a turn's end. The file's sealed credentials travel and rest sealed, as they are in the file.
 */
import type { AgentPageImage, AgentReplication, AgentSnapshot, AgentSnapshots, Logger } from '@agt/contracts';
import type { ObjectStore } from '@nats-io/obj';
import type { FleetConnection } from './connection.js';
import { ReplicaLog } from './replica-log.js';
import { type ChainState, ReplicaWriter, type StoredCopy } from './replica-writer.js';

/**
 * How long a request nobody waits on (a turn started, an agent loaded) may wait for a copy someone asks for
 * meanwhile: a short turn's end then makes the one copy that serves both.
 */
export const LAZY_MS = 250;
/** Turn ids remembered per agent with the copy asked for at their last change. */
const RECENT_TURNS = 256;
/** Between attempts of an upload that failed (NATS out of reach): the next attempt copies the file anew. */
const RETRY_MS = 500;

interface Waiter {
  generation: number;
  resolve: () => void;
}

interface AgentReplica extends ChainState {
  /** Requests made (each bumps it) and the generation the last stored copy serves. */
  wanted: number;
  stored: number;
  running: boolean;
  /** A lazy request's timer, until the copy it waits for starts. */
  timer: NodeJS.Timeout | undefined;
  waiters: Waiter[];
  /** The generation asked for at the last change of each recent turn (its acceptance, start or end). */
  turns: Map<string, number>;
  /** `performance.now()` of the oldest request not served yet, or null when none waits. */
  pendingSince: number | null;
  turnId: string | null;
  bytes: number;
  storedAt: number | null;
}

/** What each stored copy cost, for `GET /fleet` and the bench. */
export interface ReplicationTotals {
  uploads: number;
  /** Of those, stored as the pages changed since the copy before, and stored whole. */
  deltas: number;
  bases: number;
  /** Copies equal to the stored one, not sent. */
  unchanged: number;
  /** Bytes sent (a delta's pages, a base's whole copy). */
  bytes: number;
  /** Time spent copying the file (the kernel's snapshot) and storing it, summed over uploads. */
  snapshotMs: number;
  uploadMs: number;
  failures: number;
}

function newState(): AgentReplica {
  return {
    wanted: 0,
    stored: 0,
    running: false,
    timer: undefined,
    waiters: [],
    turns: new Map(),
    pendingSince: null,
    turnId: null,
    sha256: null,
    bytes: 0,
    storedAt: null,
    digests: undefined,
    pageSize: 0,
    seq: undefined,
    chainBytes: 0,
  };
}

export class Replicator implements AgentReplication {
  private readonly agents = new Map<string, AgentReplica>();
  /** Each agent's upload run under way (it may outlive {@link forget}: an upload is not cut short). */
  private readonly runs = new Map<string, Promise<void>>();
  private objectStore: Promise<ObjectStore> | undefined;
  /** The stream of the agents' copies (bases and deltas), and what stores them there. */
  readonly log: ReplicaLog;
  private readonly writer: ReplicaWriter;
  private stopped = false;
  readonly totals: ReplicationTotals = {
    uploads: 0,
    deltas: 0,
    bases: 0,
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
    /** The fleet's name (settings `fleet.name`): the replica stream is named by it. */
    fleet: string,
    daemon: string,
    private readonly replicas: number,
    private readonly logger: Logger,
    /** The agent's turn ends not yet on the fleet stream, read just before each copy (FleetEvents). */
    private readonly pendingEnds: (agentId: string) => { id: string; data: string }[] = () => [],
  ) {
    this.log = new ReplicaLog(connection, fleet, replicas);
    this.writer = new ReplicaWriter(this.log, () => this.objects(), daemon, logger);
  }

  /** The object store, made if missing (on first use). */
  objects(): Promise<ObjectStore> {
    this.objectStore ??= (async () => {
      const { nc } = await this.connection.get();
      const { Objm, setSha256Backend } = await import('@nats-io/obj');
      // The object's digest with Node's own SHA-256 rather than the client's JavaScript one (browser-safe, slow).
      setSha256Backend('native');
      return new Objm(nc).create(this.bucket, { replicas: this.replicas });
    })().catch((error: unknown) => {
      this.objectStore = undefined;
      throw error;
    });
    return this.objectStore;
  }

  /**
   * The kernel asks before it tells a client about turn `turnId`: a copy asked for at the turn's last change
   * (its end, seen on the bus before the kernel answers) serves, else a new one.
   */
  replicated(agentId: string, turnId: string): Promise<void> {
    const state = this.agents.get(agentId);
    const generation = state?.turns.get(turnId);
    if (!state || generation === undefined) return this.request(agentId, [turnId]);
    if (generation <= state.stored) return Promise.resolve();
    const done = new Promise<void>((resolve) => state.waiters.push({ generation, resolve }));
    // Someone waits now: a lazy copy starts at once.
    if (!state.running) {
      clearTimeout(state.timer);
      state.timer = undefined;
      void this.drain(agentId, state);
    }
    return done;
  }

  /**
   * Asks for a copy of the agent's file made after now; resolves once it is stored, or once the agent is no
   * longer loaded here (nothing more to copy) or the extension stops. `lazy`: the copy may start up to
   * {@link LAZY_MS} later, unless another request starts one sooner.
   */
  request(agentId: string, turnIds: readonly string[] = [], lazy = false): Promise<void> {
    if (this.stopped || !this.isLoaded(agentId)) return Promise.resolve();
    let state = this.agents.get(agentId);
    if (!state) {
      state = newState();
      this.agents.set(agentId, state);
    }
    state.wanted += 1;
    const generation = state.wanted;
    for (const turnId of turnIds) {
      state.turnId = turnId;
      state.turns.delete(turnId);
      state.turns.set(turnId, generation);
    }
    // Recent turns only: a client asks about a turn right after its change.
    for (const turnId of state.turns.keys()) {
      if (state.turns.size <= RECENT_TURNS) break;
      state.turns.delete(turnId);
    }
    state.pendingSince ??= performance.now();
    const done = new Promise<void>((resolve) => state.waiters.push({ generation, resolve }));
    if (state.running) return done;
    if (lazy) {
      state.timer ??= setTimeout(() => {
        state.timer = undefined;
        if (!state.running) void this.drain(agentId, state);
      }, LAZY_MS).unref();
      return done;
    }
    clearTimeout(state.timer);
    state.timer = undefined;
    void this.drain(agentId, state);
    return done;
  }

  /** The agent is gone from this daemon: whatever waits is let go (its file is as it is). */
  forget(agentId: string): void {
    const state = this.agents.get(agentId);
    if (!state) return;
    this.agents.delete(agentId);
    clearTimeout(state.timer);
    for (const waiter of state.waiters.splice(0)) waiter.resolve();
  }

  /**
   * Resolves once no upload of the agent's file is under way here: a planned move stores the closed file
   * after, so no older copy lands over it.
   */
  async idle(agentId: string): Promise<void> {
    while (this.runs.has(agentId)) await this.runs.get(agentId);
  }

  private async drain(agentId: string, state: AgentReplica): Promise<void> {
    state.running = true;
    let ended!: () => void;
    const run = new Promise<void>((resolve) => (ended = resolve));
    this.runs.set(agentId, run);
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
      if (this.runs.get(agentId) === run) this.runs.delete(agentId);
      ended();
      if (this.stopped || this.agents.get(agentId) !== state || !this.isLoaded(agentId)) this.forget(agentId);
    }
  }

  private async upload(agentId: string, state: AgentReplica, turnId: string | null): Promise<void> {
    const began = performance.now();
    // Read in the same tick as the copy (a small file is copied before anything yields): every end the copy
    // holds is either on the fleet stream already or in this list, which travels with it.
    const ends = this.pendingEnds(agentId);
    const image = this.snapshots.pages?.(agentId);
    if (image) {
      await this.send(state, began, { ...image, bytes: image.data.length }, turnId, ends);
      return;
    }
    await this.snapshots.snapshot(agentId, (copy) => this.send(state, began, copy, turnId, ends));
  }

  /** Stores one copy (unless it equals the stored one and carries no end), and counts what it cost. */
  private async send(
    state: AgentReplica,
    began: number,
    copy: (AgentPageImage & { bytes: number }) | AgentSnapshot,
    turnId: string | null,
    ends: Array<{ id: string; data: string }>,
  ): Promise<void> {
    const copied = performance.now();
    this.totals.snapshotMs += copied - began;
    if (copy.sha256 === state.sha256 && ends.length === 0) {
      this.totals.unchanged += 1;
      return;
    }
    const header = this.writer.header(copy, turnId, ends);
    let stored: StoredCopy;
    try {
      stored =
        'data' in copy ? await this.writer.pages(state, copy, header) : await this.writer.file(state, copy, header);
    } catch (error) {
      // Whether it was stored is unknown: the next copy is a base, which needs nothing before it.
      state.digests = undefined;
      state.seq = undefined;
      throw error;
    }
    this.totals.uploadMs += performance.now() - copied;
    this.count(stored);
    state.sha256 = copy.sha256;
    state.bytes = copy.bytes;
  }

  /**
   * Stores a whole copy made elsewhere (a planned move's closed file, at `copy.path`) as the agent's newest
   * base, which drops the copies before it; the agent is no longer loaded here, so nothing follows it.
   */
  async storeClosed(
    copy: Pick<AgentSnapshot, 'agentId' | 'path' | 'sha256' | 'bytes' | 'schemaVersion'>,
    turnId: string | null,
    ends: Array<{ id: string; data: string }>,
  ): Promise<void> {
    const chain = this.agents.get(copy.agentId) ?? newState();
    const stored = await this.writer.file(chain, copy, this.writer.header(copy, turnId, ends));
    this.count(stored);
  }

  private count(stored: StoredCopy): void {
    this.totals.uploads += 1;
    this.totals.bytes += stored.bytes;
    if (stored.delta) this.totals.deltas += 1;
    else this.totals.bases += 1;
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
      stream: this.log.stream,
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
