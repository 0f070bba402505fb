/**
 * Taking a dead daemon's agents before the TTL (docs/fleet.md, "Failover"), from what NATS tells (liveness.ts).
 * Each daemon asks every run of another daemon that holds records, every {@link PROBE_MS}, whether it still
 * listens on its subject. Once a run has answered "no responders" to every ask for longer than the cut-off its
 * records promise plus {@link TAKEOVER_MARGIN_MS}, its holder stopped all its agents, dead or cut off; the
 * daemon then fences each of its records: a compare-and-set at the revision it read that marks the record
 * `fenced` and keeps it otherwise. The holder can renew a fenced record no more (its revision changed), any
 * daemon may claim it (a compare-and-set again: one wins), and the adoption goes on as after the TTL. The
 * other daemons still see the records (a delete would drop them from their directories), so the agents still
 * spread over all of them.
 */
import type { KV, KvEntry } from '@nats-io/kv';
import type { FleetConnection } from './connection.js';
import { probeAlive } from './liveness.js';
import { type PlacementRecord, parseRecord } from './placement.js';

/** Between the asks of a run. */
export const PROBE_MS = 250;
/** Beyond the holder's cut-off: its timers' lateness, clocks that run at slightly different rates. */
export const TAKEOVER_MARGIN_MS = 1_000;
const PROBE_TIMEOUT_MS = 1_000;

/** The runs of other daemons NATS says are gone, since the first answer that said so. */
export class GoneRuns {
  private readonly since = new Map<string, number>();

  constructor(
    private readonly connection: FleetConnection,
    private readonly fleet: string,
  ) {}

  /** Asks each run (`run` → its daemon's name) once; any answer but "no responders" clears it. */
  async probe(runs: ReadonlyMap<string, string>): Promise<void> {
    const { nc } = await this.connection.get(1_000);
    await Promise.all(
      [...runs].map(async ([run, daemon]) => {
        const answer = await probeAlive(nc, this.fleet, daemon, run, PROBE_TIMEOUT_MS);
        // When the answer came, not when the ask went: the holder's connection was gone by then.
        if (answer === 'gone') {
          if (!this.since.has(run)) this.since.set(run, performance.now());
        } else this.since.delete(run);
      }),
    );
    for (const run of [...this.since.keys()]) if (!runs.has(run)) this.since.delete(run);
  }

  /** True when every ask of `run` has said "gone" for longer than `cutOffMs` and the margin. */
  past(run: string, cutOffMs: number): boolean {
    const since = this.since.get(run);
    return since !== undefined && performance.now() - since >= cutOffMs + TAKEOVER_MARGIN_MS;
  }
}

/** The record held: written (`PUT`), and not fenced. */
export function heldRecord(entry: KvEntry | null): PlacementRecord | undefined {
  if (entry?.operation !== 'PUT') return undefined;
  const record = parseRecord(entry.string());
  return record && !record.fenced ? record : undefined;
}

/**
 * Fences `key` if it is still `record`'s run's, at the revision read now: true when it is fenced (by this
 * daemon or another), false when it is held (renewed by its run, or claimed by another) or gone.
 */
export async function fence(placements: KV, key: string, record: PlacementRecord): Promise<boolean> {
  const entry = await placements.get(key);
  if (entry?.operation !== 'PUT') return false;
  const current = parseRecord(entry.string());
  if (!current || current.run !== record.run) return false;
  if (current.fenced) return true;
  try {
    await placements.update(key, JSON.stringify({ ...current, fenced: true }), entry.revision);
    return true;
  } catch {
    // Written meanwhile: the next look decides.
    return false;
  }
}
