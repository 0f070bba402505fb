/**
 * Drained daemons (docs/fleet.md, "Planned moves"): `POST /fleet/drain` marks the daemon in the bucket
 * `agt_fleet_<name>_daemons` before it moves its agents away, and the marked daemon refuses new placements
 * until `POST /fleet/undrain` removes the mark. The mark lives in NATS, not in the daemon, so any daemon can
 * set it and it outlasts the drained daemon's restart.
 */
import type { FleetConnection } from './connection.js';
import { fleetUnreachable } from './errors.js';

export interface DrainMark {
  /** The daemons the drain named: they can take the agents this one refuses. */
  to: string[];
  since: number;
}

export class DrainMarks {
  /** This daemon's mark as last read, for `GET /fleet` while NATS is out of reach. */
  private own: DrainMark | null = null;

  constructor(
    private readonly connection: FleetConnection,
    private readonly daemon: string,
  ) {}

  async mark(daemon: string, to: readonly string[]): Promise<void> {
    const { daemons } = await this.connection.get();
    const mark: DrainMark = { to: [...to], since: Date.now() };
    await daemons.put(daemon, JSON.stringify(mark)).catch(unreachable);
    if (daemon === this.daemon) this.own = mark;
  }

  /** Removes the mark; false when there was none. */
  async unmark(daemon: string): Promise<boolean> {
    const { daemons } = await this.connection.get();
    const entry = await daemons.get(daemon).catch(unreachable);
    if (entry?.operation !== 'PUT') return false;
    await daemons.delete(daemon).catch(unreachable);
    if (daemon === this.daemon) this.own = null;
    return true;
  }

  /** Every drained daemon's mark, read now; rejects 503 when NATS cannot be reached. */
  async all(): Promise<Map<string, DrainMark>> {
    const { daemons } = await this.connection.get();
    const marks = new Map<string, DrainMark>();
    try {
      const keys: string[] = [];
      for await (const key of await daemons.keys()) keys.push(key);
      for (const key of keys) {
        const entry = await daemons.get(key);
        if (entry?.operation === 'PUT') marks.set(key, parse(entry.string()));
      }
    } catch (error) {
      unreachable(error);
    }
    return marks;
  }

  /** This daemon's mark, read now (a claim decides on it); rejects 503 when NATS cannot be reached. */
  async current(wait?: number): Promise<DrainMark | null> {
    const { daemons } = await this.connection.get(wait);
    const entry = await daemons.get(this.daemon).catch(unreachable);
    this.own = entry && entry.operation === 'PUT' ? parse(entry.string()) : null;
    return this.own;
  }

  /** This daemon's mark read now, or as last read when NATS does not answer within a second. */
  async shown(): Promise<DrainMark | null> {
    return this.current(1_000).catch(() => this.own);
  }
}

function unreachable(error: unknown): never {
  throw fleetUnreachable(error instanceof Error ? error.message : String(error));
}

function parse(text: string): DrainMark {
  try {
    const value = JSON.parse(text) as Partial<DrainMark>;
    return {
      to: Array.isArray(value.to) ? value.to.filter((name) => typeof name === 'string') : [],
      since: typeof value.since === 'number' ? value.since : 0,
    };
  } catch {
    // A mark that does not parse still marks the daemon drained.
    return { to: [], since: 0 };
  }
}
