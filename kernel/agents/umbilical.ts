/**
 * The per-agent replay window (`GET /agents/{id}/umbilical/events`): opt-in per agent through
 * `umbilical.log.enabled`, in memory only, bounded to {@link UMBILICAL_CAPACITY} events per agent, fed
 * from the bus. A payload whose JSON exceeds {@link UMBILICAL_PAYLOAD_LIMIT} bytes is replaced by
 * `{_truncated: true, preview}`.
 */
import type { UmbilicalEvent } from '@agt/contracts';

export const UMBILICAL_CAPACITY = 2_000;
export const UMBILICAL_PAYLOAD_LIMIT = 4 * 1024;
const PREVIEW_CHARS = 512;
export const UMBILICAL_DEFAULT_LIMIT = 500;
export const UMBILICAL_MAX_LIMIT = 2_000;

export interface WindowEvent {
  seq: number;
  event_type: string;
  timestamp: number;
  source: string;
  payload: unknown;
  truncated: boolean;
}

export interface WindowPage {
  events: WindowEvent[];
  last_seq: number | null;
  log_enabled: boolean;
  oldest_seq?: number;
}

function entry(event: UmbilicalEvent): WindowEvent {
  const json = JSON.stringify(event.payload ?? null);
  const truncated = Buffer.byteLength(json, 'utf8') > UMBILICAL_PAYLOAD_LIMIT;
  return {
    seq: event.seq,
    event_type: event.event_type,
    timestamp: event.timestamp,
    source: event.source,
    payload: truncated ? { _truncated: true, preview: json.slice(0, PREVIEW_CHARS) } : event.payload,
    truncated,
  };
}

export class UmbilicalWindow {
  private readonly rings = new Map<string, WindowEvent[]>();

  constructor(private readonly capacity = UMBILICAL_CAPACITY) {}

  /** Starts recording an agent (keeps what it has when already on). */
  enable(agentId: string): void {
    if (!this.rings.has(agentId)) this.rings.set(agentId, []);
  }

  /** Stops recording and forgets the agent's events. */
  disable(agentId: string): void {
    this.rings.delete(agentId);
  }

  isEnabled(agentId: string): boolean {
    return this.rings.has(agentId);
  }

  /** Bus listener: records events of enabled agents. */
  record(event: UmbilicalEvent): void {
    if (event.agent_id === null) return;
    const ring = this.rings.get(event.agent_id);
    if (!ring) return;
    ring.push(entry(event));
    if (ring.length > this.capacity) ring.splice(0, ring.length - this.capacity);
  }

  /**
   * Retention (settings `storage.retention.umbilical`, docs/backups.md): drops events older than
   * `maxAgeMs` and all but the newest `maxRows` of every agent's window. Returns how many went.
   */
  prune(maxAgeMs: number | undefined, maxRows: number | undefined, now = Date.now()): number {
    let removed = 0;
    for (const ring of this.rings.values()) {
      let drop = maxRows !== undefined ? Math.max(0, ring.length - maxRows) : 0;
      if (maxAgeMs !== undefined) while (drop < ring.length && ring[drop]!.timestamp < now - maxAgeMs) drop++;
      if (drop > 0) ring.splice(0, drop);
      removed += drop;
    }
    return removed;
  }

  /**
   * Events with seq strictly greater than `sinceSeq` (all when absent), oldest first, at most `limit`.
   * `last_seq` is the highest seq returned, else the `sinceSeq` passed (null when none was passed).
   * `oldest_seq` is present when the window holds events; `sinceSeq < oldest_seq - 1` tells the client
   * that events it has not seen were already evicted.
   */
  read(agentId: string, sinceSeq: number | undefined, limit: number): WindowPage {
    const ring = this.rings.get(agentId);
    if (!ring) return { events: [], last_seq: sinceSeq ?? null, log_enabled: false };
    const start = sinceSeq === undefined ? 0 : firstAfter(ring, sinceSeq);
    const events = ring.slice(start, start + limit);
    const last = events.at(-1)?.seq ?? sinceSeq ?? null;
    return { events, last_seq: last, log_enabled: true, ...(ring.length ? { oldest_seq: ring[0]!.seq } : {}) };
  }
}

/** Index of the first event with seq > `seq` (seqs increase along the ring). */
function firstAfter(ring: WindowEvent[], seq: number): number {
  let low = 0;
  let high = ring.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (ring[mid]!.seq > seq) high = mid;
    else low = mid + 1;
  }
  return low;
}
