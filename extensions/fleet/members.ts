/**
 * The daemons of the fleet that are alive now, for sharing out a dead daemon's agents (adopt.ts) and for
 * `GET /fleet/daemons`: each daemon puts a record under its name in the bucket `agt_fleet_<name>_members`
 * every quarter of the TTL, and the bucket's TTL drops a daemon that stopped. A daemon running no agent has
 * no placement record, so this is the only place the others see it. The record says when it was put and
 * the daemon's replication lag then, which no other daemon could know.
 */
import type { KV } from '@nats-io/kv';
import type { FleetConnection } from './connection.js';

/** What a daemon says of itself with each heartbeat. */
export interface MemberRecord {
  /** When the daemon put it (epoch ms, the daemon's clock). */
  at: number;
  /** Its replication (option `replicate`) then; `lagMs` absent when it does not replicate. */
  replication: { enabled: boolean; lagMs?: number } | null;
}

export class Members {
  private bucket: Promise<KV> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly connection: FleetConnection,
    private readonly fleet: string,
    private readonly daemon: string,
    private readonly ttlMs: number,
    private readonly replicas: number,
    private readonly report: () => Omit<MemberRecord, 'at'> = () => ({ replication: null }),
  ) {}

  private open(): Promise<KV> {
    this.bucket ??= (async () => {
      const { nc } = await this.connection.get();
      const { Kvm } = await import('@nats-io/kv');
      return new Kvm(nc).create(`agt_fleet_${this.fleet}_members`, {
        ttl: this.ttlMs,
        history: 1,
        replicas: this.replicas,
      });
    })().catch((error: unknown) => {
      this.bucket = undefined;
      throw error;
    });
    return this.bucket;
  }

  start(): void {
    const beat = () =>
      void this.open()
        .then((kv) => kv.put(this.daemon, JSON.stringify({ ...this.report(), at: Date.now() })))
        .catch(() => {});
    beat();
    this.timer ??= setInterval(beat, Math.max(250, Math.floor(this.ttlMs / 4)));
    this.timer.unref();
  }

  /** The names of the daemons alive now (this one included). */
  async live(): Promise<string[]> {
    const kv = await this.open();
    const names = new Set([this.daemon]);
    for await (const key of await kv.keys()) names.add(key);
    return [...names];
  }

  /** Every daemon alive now with its last record, read now (this one's may be missing before its first beat). */
  async records(): Promise<Map<string, MemberRecord>> {
    const kv = await this.open();
    const keys: string[] = [];
    for await (const key of await kv.keys()) keys.push(key);
    const records = new Map<string, MemberRecord>();
    for (const key of keys) {
      const entry = await kv.get(key);
      if (entry?.operation === 'PUT') records.set(key, parseMember(entry.string()));
    }
    return records;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    const kv = await this.bucket?.catch(() => undefined);
    await kv?.delete(this.daemon).catch(() => {});
  }
}

/** A record as put by this version, or by an earlier one (the time alone, as text); odd values read as absent. */
export function parseMember(text: string): MemberRecord {
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value === 'number') return { at: whole(value) ?? 0, replication: null };
    const record = (value ?? {}) as Partial<MemberRecord>;
    const lagMs = whole(record.replication?.lagMs);
    const replication =
      record.replication && typeof record.replication.enabled === 'boolean'
        ? { enabled: record.replication.enabled, ...(lagMs === undefined ? {} : { lagMs }) }
        : null;
    return { at: whole(record.at) ?? 0, replication };
  } catch {
    return { at: 0, replication: null };
  }
}

/** A whole number of milliseconds, or undefined for anything else (a JSON `1e400` parses as Infinity). */
const whole = (value: unknown) =>
  typeof value === 'number' && Number.isFinite(value) ? Math.max(0, Math.round(value)) : undefined;
