/**
 * Failover on a shared file system (docs/fleet.md, "Failover"): when a daemon dies its placements expire,
 * and the other daemons adopt its agents, loading each from the path it ran from. Every daemon looks at the
 * records it has not seen renewed for a TTL; the bucket decides (a record still there is left alone), and
 * the claim's compare-and-set lets one daemon win each agent. A daemon waits longer the more agents it runs
 * before it tries, so the agents spread over the survivors.
 */
import type { ExtensionContext, Logger } from '@agt/contracts';
import type { FleetConnection } from './connection.js';
import type { PlacementKeeper } from './placement.js';
import type { Relay } from './relay.js';

/** Added per agent this daemon runs to its wait before adopting one: the least busy daemon tries first. */
const WAIT_PER_AGENT_MS = 150;

export class Adopter {
  private timer: NodeJS.Timeout | undefined;
  private busy = false;

  constructor(
    private readonly ctx: Pick<ExtensionContext, 'requests'>,
    private readonly connection: FleetConnection,
    private readonly relay: Relay,
    private readonly placement: PlacementKeeper,
    private readonly ttlMs: number,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.pass(), Math.max(250, Math.floor(this.ttlMs / 4)));
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async pass(): Promise<void> {
    if (this.busy || !this.ctx.requests) return;
    const candidates = this.relay.stale();
    if (candidates.length === 0) return;
    this.busy = true;
    try {
      const { placements } = await this.connection.get(1_000);
      for (const { key, record } of candidates) {
        const entry = await placements.get(key).catch(() => undefined);
        if (entry === undefined) return; // NATS out of reach: decide nothing now.
        if (entry && entry.operation === 'PUT') continue; // still held (the watch lags, or it was renewed)
        this.relay.forget(key);
        if (!record.filePath) continue;
        await new Promise((resolve) =>
          setTimeout(resolve, this.placement.heldAgents().length * WAIT_PER_AGENT_MS).unref(),
        );
        const body = Buffer.from(JSON.stringify({ filePath: record.filePath })).toString('base64');
        const answer = await this.ctx.requests.dispatch({
          method: 'POST',
          url: '/agents/load',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body,
        });
        if (answer.statusCode === 200)
          this.logger.info(
            { agentId: record.agentId, from: record.daemon },
            `fleet: adopted agent ${record.name} after daemon ${record.daemon} stopped renewing it`,
          );
        else
          this.logger.info(
            { agentId: record.agentId, status: answer.statusCode },
            'fleet: an agent of a stopped daemon was not adopted here (another daemon did, or its file is out of reach)',
          );
      }
    } catch (error) {
      this.logger.debug({ err: error }, 'fleet: adoption pass failed');
    } finally {
      this.busy = false;
    }
  }
}
