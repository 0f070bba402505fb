/**
 * One runtime per agent across the fleet (docs/fleet.md, "Placement"). The placement bucket holds one record
 * per running agent: which daemon (and which run of it) holds it. A daemon takes a record only with a
 * compare-and-set (create when absent, update at the revision it holds) and renews it with a heartbeat; the
 * bucket's TTL removes a record its holder stopped renewing. The holder gives an agent up (the kernel stops
 * it at once) when its last renewal that succeeded was sent longer ago than {@link STOP_FRACTION} of the
 * TTL: since a record expires a TTL after the server stored it, which is after the holder sent it, the holder
 * has stopped before any other daemon can create the record again, also when NATS is out of its reach.
 */
import { randomUUID } from 'node:crypto';
import type { AgentPlacement, Logger, PlacementRequest } from '@agt/contracts';
import type { FleetConnection } from './connection.js';
import type { DrainMarks } from './drain-marks.js';
import { daemonDraining, fleetUnreachable, heldElsewhere } from './errors.js';
import { placementKey } from './keys.js';
import type { Liveness } from './liveness.js';

/** The share of the TTL after which a holder that could not renew stops the agent. */
export const STOP_FRACTION = 0.7;
/** JetStream's "wrong last sequence": the record is not at the revision we hold. */
const WRONG_SEQUENCE = 10071;

/** What a placement record says (the bucket's value, JSON). */
export interface PlacementRecord {
  agentId: string;
  name: string;
  handle: string | null;
  /** The file's real path on the holder's machine (a planned move loads it from there on another daemon). */
  filePath: string;
  daemon: string;
  /** This run of the daemon: a restarted daemon does not take over its earlier run's records. */
  run: string;
  since: number;
  /**
   * The holder stops all its agents once NATS has not answered it for this long (liveness.ts): a daemon that
   * NATS says is gone for longer may take them over before the TTL. Absent: only the TTL says.
   */
  cutOffMs?: number;
  /**
   * Set by another daemon once NATS said the holder's run was gone past its cut-off (takeover.ts): the holder
   * stopped, and any daemon may claim the record (a compare-and-set at its revision).
   */
  fenced?: boolean;
}

interface Held {
  key: string;
  record: PlacementRecord;
  revision: number;
  /** `performance.now()` when the last renewal that succeeded was sent. */
  renewedSentAt: number;
  beating: boolean;
  lost: () => void;
}

const isWrongSequence = (error: unknown) =>
  (error as { code?: unknown })?.code === WRONG_SEQUENCE ||
  /wrong last sequence/i.test(error instanceof Error ? error.message : '');

export class PlacementKeeper implements AgentPlacement {
  readonly run = randomUUID();
  private readonly held = new Map<string, Held>();
  private timer: NodeJS.Timeout | undefined;
  /** Deletes on their way: the extension's stop waits for them before it closes the connection. */
  private readonly releasing = new Set<Promise<void>>();
  /** Agents this run gave back: a drained daemon still takes them back (a move that fails restores them). */
  private readonly gaveBack = new Set<string>();
  /** Agents being handed off (handoff.ts): their unload keeps the record, renewed, until {@link handedOff}. */
  private readonly handingOff = new Set<string>();
  /** Set by the fleet (option `cutOffSeconds` above 0): the holder's side of a death told by NATS before the TTL. */
  liveness: Liveness | undefined;

  constructor(
    private readonly connection: FleetConnection,
    private readonly daemon: string,
    private readonly ttlMs: number,
    private readonly logger: Logger,
    private readonly marks: DrainMarks,
  ) {}

  /** The agents this daemon holds now. */
  heldAgents(): PlacementRecord[] {
    return [...this.held.values()].map((entry) => entry.record);
  }

  async claim(request: PlacementRequest, lost: () => void): Promise<void> {
    const { placements } = await this.connection.get();
    if (!this.gaveBack.has(request.agentId)) {
      const drained = await this.marks.current();
      if (drained) throw daemonDraining(request.agentId, this.daemon, drained.to);
    }
    // Listening on its subject before any record says it holds an agent (liveness.ts).
    await this.liveness?.ready().catch((failure: unknown) => {
      throw fleetUnreachable(message(failure));
    });
    const key = placementKey(request.agentId);
    const record: PlacementRecord = {
      agentId: request.agentId,
      name: request.name,
      handle: request.handle,
      filePath: request.filePath,
      daemon: this.daemon,
      run: this.run,
      since: Date.now(),
      ...(this.liveness ? { cutOffMs: this.liveness.cutOffMs } : {}),
    };
    const sentAt = performance.now();
    const sent = this.liveness?.sent();
    let revision: number;
    try {
      revision = await placements.create(key, JSON.stringify(record));
      if (sent) this.liveness?.answered(sent);
    } catch (error) {
      if (!isWrongSequence(error)) throw fleetUnreachable(message(error));
      const entry = await placements.get(key).catch((failure: unknown) => {
        throw fleetUnreachable(message(failure));
      });
      const holder = entry && entry.operation === 'PUT' ? parseRecord(entry.string()) : undefined;
      if (holder?.fenced) {
        // Its holder stopped (takeover.ts): taken at the revision read, so one daemon wins it.
        try {
          const sent = this.liveness?.sent();
          revision = await placements.update(key, JSON.stringify(record), entry!.revision);
          if (sent) this.liveness?.answered(sent);
        } catch (again) {
          if (isWrongSequence(again)) throw heldElsewhere(request.agentId, 'another daemon');
          throw fleetUnreachable(message(again));
        }
      } else if (holder && holder.run === this.run) {
        // Already ours (a load that raced itself, or the agent loaded back by a handoff that failed): keep
        // the record as it is.
        const mine = this.held.get(request.agentId);
        if (mine) {
          if (this.handingOff.has(request.agentId)) mine.lost = lost;
          return;
        }
        revision = entry!.revision;
      } else if (holder) {
        throw heldElsewhere(
          request.agentId,
          holder.daemon === this.daemon ? `${holder.daemon} (an earlier run)` : holder.daemon,
        );
      } else {
        // Deleted or expired between our create and get: one more try, then it is someone else's.
        try {
          revision = await placements.create(key, JSON.stringify(record));
        } catch (again) {
          if (isWrongSequence(again)) throw heldElsewhere(request.agentId, 'another daemon');
          throw fleetUnreachable(message(again));
        }
      }
    }
    this.held.set(request.agentId, { key, record, revision, renewedSentAt: sentAt, beating: false, lost });
    this.schedule();
  }

  async release(agentId: string): Promise<void> {
    const entry = this.held.get(agentId);
    if (!entry) return;
    if (this.handingOff.has(agentId)) {
      this.gaveBack.add(agentId);
      return;
    }
    this.held.delete(agentId);
    this.gaveBack.add(agentId);
    if (this.held.size === 0) this.unschedule();
    // Deleted only at the revision we hold: a record another daemon took since is left alone. A delete
    // that fails leaves the record to expire.
    const work = (async () => {
      const link = await this.connection.get(1_000).catch(() => undefined);
      await link?.placements.delete(entry.key, { previousSeq: entry.revision }).catch(() => {});
    })();
    this.releasing.add(work);
    await work.finally(() => this.releasing.delete(work));
  }

  /**
   * A planned move is about to unload the agent: its record stays this daemon's (and renewed) through the
   * unload, so no daemon claims the agent before its final copy is stored; {@link handedOff} ends that.
   */
  keepThroughUnload(agentId: string): void {
    if (this.held.has(agentId)) this.handingOff.add(agentId);
  }

  /**
   * The handoff is over: `release` gives the record back now (the final copy is stored, or the agent could not
   * be loaded back); without it the record stays held (the agent was loaded here again and claimed it).
   */
  async handedOff(agentId: string, release: boolean): Promise<void> {
    if (!this.handingOff.delete(agentId)) return;
    if (release) await this.release(agentId);
  }

  /** Resolves once the releases under way have been sent (or failed). */
  async settled(): Promise<void> {
    await Promise.all([...this.releasing]);
  }

  /** Stops every agent this daemon holds: NATS has not answered for the cut-off (liveness.ts). */
  cutAll(why: string): void {
    for (const [agentId, entry] of [...this.held]) this.drop(agentId, entry, why);
  }

  /** Gives every agent up at once (the extension stops): the kernel unloads them. */
  dropAll(): void {
    const all = [...this.held.values()];
    this.held.clear();
    this.unschedule();
    for (const entry of all) entry.lost();
  }

  private schedule(): void {
    if (this.timer) return;
    // Checked ten times per TTL (at most every second): a renewal every quarter of the TTL, and the stop
    // deadline noticed within a tenth of it.
    const every = Math.max(100, Math.min(1_000, Math.floor(this.ttlMs / 10)));
    this.timer = setInterval(() => this.tick(), every);
    this.timer.unref();
  }

  private unschedule(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private tick(): void {
    const now = performance.now();
    for (const [agentId, entry] of this.held) {
      if (now - entry.renewedSentAt >= this.ttlMs * STOP_FRACTION) {
        this.drop(agentId, entry, 'not renewed in time');
        continue;
      }
      if (!entry.beating && now - entry.renewedSentAt >= this.ttlMs / 4) void this.renew(agentId, entry);
    }
  }

  private async renew(agentId: string, entry: Held): Promise<void> {
    entry.beating = true;
    const sentAt = performance.now();
    try {
      const { placements } = await this.connection.get(Math.max(100, this.ttlMs / 4));
      const sent = this.liveness?.sent();
      const revision = await placements.update(entry.key, JSON.stringify(entry.record), entry.revision, this.ttlMs / 4);
      if (sent) this.liveness?.answered(sent);
      if (this.held.get(agentId) !== entry) return;
      entry.revision = revision;
      entry.renewedSentAt = sentAt;
    } catch (error) {
      // Another daemon holds the record now: give it up at once. Anything else (NATS out of reach) is
      // retried at the next tick until the stop deadline.
      if (isWrongSequence(error) && this.held.get(agentId) === entry)
        this.drop(agentId, entry, 'taken by another daemon');
    } finally {
      entry.beating = false;
    }
  }

  private drop(agentId: string, entry: Held, why: string): void {
    this.held.delete(agentId);
    if (this.held.size === 0) this.unschedule();
    this.logger.warn({ agentId, why }, 'fleet: placement lost; the agent stops here');
    entry.lost();
  }
}

export function parseRecord(text: string): PlacementRecord | undefined {
  try {
    const value = JSON.parse(text) as Partial<PlacementRecord>;
    if (typeof value.agentId !== 'string' || typeof value.daemon !== 'string' || typeof value.run !== 'string')
      return undefined;
    return {
      agentId: value.agentId,
      name: typeof value.name === 'string' ? value.name : value.agentId,
      handle: typeof value.handle === 'string' ? value.handle : null,
      filePath: typeof value.filePath === 'string' ? value.filePath : '',
      daemon: value.daemon,
      run: value.run,
      since: typeof value.since === 'number' ? value.since : 0,
      ...(typeof value.cutOffMs === 'number' && value.cutOffMs > 0 ? { cutOffMs: value.cutOffMs } : {}),
      ...(value.fenced === true ? { fenced: true } : {}),
    };
  } catch {
    return undefined;
  }
}

function message(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 300);
}
