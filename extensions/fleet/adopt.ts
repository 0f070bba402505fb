/**
 * Failover (docs/fleet.md, "Failover"): when a daemon dies its placements expire, and the other daemons adopt
 * its agents, each restored from its replica in the object store when the fleet replicates agent files
 * (restore.ts), else loaded from the path it ran from (a shared file system). Every daemon looks at the
 * records it has not seen renewed for a TTL; the bucket decides (a record still there is left alone), and
 * the claim's compare-and-set lets one daemon win each agent. A daemon waits longer the more agents it runs
 * before it tries, so the agents spread over the survivors.
 */
import { createHash } from 'node:crypto';
import type { ExtensionContext, Logger } from '@agt/contracts';
import type { FleetConnection } from './connection.js';
import type { PlacementKeeper } from './placement.js';
import type { Relay } from './relay.js';
import type { Replicator } from './replicas.js';
import { type CarriedEnd, restoreReplica } from './restore.js';

/** Added per agent this daemon runs to its wait before adopting one: the least busy daemon tries first. */
const WAIT_PER_AGENT_MS = 150;

export class Adopter {
  private timer: NodeJS.Timeout | undefined;
  private busy = false;

  constructor(
    private readonly ctx: Pick<ExtensionContext, 'requests' | 'settings'>,
    private readonly connection: FleetConnection,
    private readonly relay: Relay,
    private readonly placement: PlacementKeeper,
    private readonly ttlMs: number,
    private readonly logger: Logger,
    private readonly daemon: string,
    private readonly replicator?: Replicator,
    private readonly carried: (end: CarriedEnd) => void = () => {},
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.pass(), Math.max(250, Math.floor(this.ttlMs / 4)));
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Loads the agent from the path it ran from (a shared file system); the answer's status. */
  private async loadFromPath(filePath: string): Promise<number> {
    if (!filePath || !this.ctx.requests) return 404;
    const body = Buffer.from(JSON.stringify({ filePath })).toString('base64');
    const answer = await this.ctx.requests.dispatch({
      method: 'POST',
      url: '/agents/load',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body,
    });
    return answer.statusCode;
  }

  private async pass(): Promise<void> {
    if (this.busy || !this.ctx.requests) return;
    const candidates = this.relay.stale();
    if (candidates.length === 0) return;
    this.busy = true;
    try {
      const { placements } = await this.connection.get(1_000);
      for (const { key, record } of spreadOrder(candidates, this.daemon)) {
        const entry = await placements.get(key).catch(() => undefined);
        if (entry === undefined) return; // NATS out of reach: decide nothing now.
        if (entry && entry.operation === 'PUT') continue; // still held (the watch lags, or it was renewed)
        this.relay.forget(key);
        await new Promise((resolve) =>
          setTimeout(resolve, this.placement.heldAgents().length * WAIT_PER_AGENT_MS).unref(),
        );
        // Another daemon may have taken it while this one waited: then nothing is downloaded.
        const again = await placements.get(key).catch(() => undefined);
        if (again === undefined || (again && again.operation === 'PUT')) continue;
        const began = Date.now();
        const restored = this.replicator
          ? await restoreReplica(
              this.replicator,
              this.ctx.requests,
              this.ctx.settings.dataDir,
              record.agentId,
              (ends) => {
                for (const end of ends) this.carried(end);
              },
            )
          : undefined;
        const status = restored ? restored.status : await this.loadFromPath(record.filePath);
        if (status === 200)
          this.logger.info(
            {
              agentId: record.agentId,
              from: record.daemon,
              ms: Date.now() - began,
              ...(restored ? { replica: { turnId: restored.turnId, bytes: restored.bytes } } : {}),
            },
            `fleet: adopted agent ${record.name} after daemon ${record.daemon} stopped renewing it${restored ? ' (from its replica)' : ''}`,
          );
        else
          this.logger.info(
            { agentId: record.agentId, status, code: restored?.code },
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

/**
 * The candidates in an order of this daemon's own (a hash of the daemon's name and the agent's key): the
 * survivors start on different agents rather than all racing for the first, which spreads them.
 */
function spreadOrder<T extends { key: string }>(candidates: readonly T[], daemon: string): T[] {
  const rank = (key: string) => createHash('sha256').update(`${daemon}\0${key}`).digest().readUInt32BE(0);
  return [...candidates].sort((a, b) => rank(a.key) - rank(b.key));
}
