/**
 * The daemons of the fleet that are alive now, for sharing out a dead daemon's agents (adopt.ts): each daemon
 * puts its name in the bucket `agt_fleet_<name>_members` every quarter of the TTL, and the bucket's TTL drops
 * a daemon that stopped. A daemon running no agent has no placement record, so this is the only place the
 * others see it.
 */
import type { KV } from '@nats-io/kv';
import type { FleetConnection } from './connection.js';

export class Members {
  private bucket: Promise<KV> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly connection: FleetConnection,
    private readonly fleet: string,
    private readonly daemon: string,
    private readonly ttlMs: number,
    private readonly replicas: number,
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
        .then((kv) => kv.put(this.daemon, String(Date.now())))
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

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    const kv = await this.bucket?.catch(() => undefined);
    await kv?.delete(this.daemon).catch(() => {});
  }
}
