/**
 * Which agents belong to the fleet, by id, DID and handle (docs/fleet.md, "Messages"): the bucket
 * `agt_fleet_<name>_agents` keeps one record per agent that ever ran on a daemon of the fleet, written when
 * it loads, without TTL, so a message to an agent whose daemon is down still goes to the fleet's message
 * stream and waits there. Every daemon keeps the bucket in memory (read once, then watched) so the message
 * carrier decides without a round trip.
 */
import type { Logger } from '@agt/contracts';
import type { KV } from '@nats-io/kv';
import type { FleetConnection } from './connection.js';
import { placementKey } from './keys.js';
import { watchBucket } from './kv-watch.js';
import type { StreamReader } from './stream-reader.js';

export interface FleetAgent {
  agentId: string;
  did: string;
  handle: string | null;
  name: string;
}

const decoder = new TextDecoder();

function parse(bytes: Uint8Array): FleetAgent | undefined {
  try {
    const value = JSON.parse(decoder.decode(bytes)) as Partial<FleetAgent>;
    if (typeof value.agentId !== 'string' || typeof value.did !== 'string' || typeof value.name !== 'string')
      return undefined;
    return { agentId: value.agentId, did: value.did, handle: value.handle ?? null, name: value.name };
  } catch {
    return undefined;
  }
}

export class AgentDirectory {
  private readonly agents = new Map<string, FleetAgent>();
  private loading: Promise<KV> | undefined;
  private watch: StreamReader | undefined;
  private closed = false;

  constructor(
    private readonly connection: FleetConnection,
    private readonly fleet: string,
    private readonly daemon: string,
    private readonly replicas: number,
    private readonly logger: Logger,
  ) {}

  /** The bucket, read into memory and watched from then on (once; retried after a failure). */
  private bucket(wait?: number): Promise<KV> {
    this.loading ??= this.load(wait).catch((error: unknown) => {
      this.loading = undefined;
      throw error;
    });
    return this.loading;
  }

  private async load(wait?: number): Promise<KV> {
    const { nc, js } = await this.connection.get(wait);
    const { Kvm } = await import('@nats-io/kv');
    const bucket = `agt_fleet_${this.fleet}_agents`;
    const kv = await new Kvm(nc).create(bucket, { history: 1, replicas: this.replicas });
    // The watch first (from the bucket's last revision now), so a record written while the bucket is read is
    // not missed.
    const watch = await watchBucket(
      nc,
      js,
      bucket,
      null,
      (entry) => {
        const agent = entry.operation === 'PUT' ? parse(entry.value) : undefined;
        if (agent) this.agents.set(agent.agentId, agent);
      },
      { owner: this.daemon, purpose: 'agents' },
      this.logger,
    );
    if (this.closed) watch.close();
    else this.watch = watch;
    try {
      const keys: string[] = [];
      for await (const key of await kv.keys()) keys.push(key);
      for (const key of keys) {
        const entry = await kv.get(key);
        const agent = entry && entry.operation === 'PUT' ? parse(entry.value) : undefined;
        if (agent && !this.agents.has(agent.agentId)) this.agents.set(agent.agentId, agent);
      }
    } catch (error) {
      // Loaded again from the start on the next use.
      watch.close();
      if (this.watch === watch) this.watch = undefined;
      throw error;
    }
    return kv;
  }

  /** Stops the watch (the fleet stops). */
  close(): void {
    this.closed = true;
    this.watch?.close();
    this.watch = undefined;
  }

  /** Records an agent that runs here now (its DID, handle and name as they are at this load). */
  async record(agent: FleetAgent): Promise<void> {
    const kv = await this.bucket();
    await kv.put(placementKey(agent.agentId), JSON.stringify(agent));
    this.agents.set(agent.agentId, agent);
  }

  /** Resolves once the directory is in memory; false when NATS did not answer within `wait` ms. */
  async ready(wait: number): Promise<boolean> {
    return this.bucket(wait).then(
      () => true,
      () => false,
    );
  }

  byDid(did: string): FleetAgent | undefined {
    for (const agent of this.agents.values()) if (agent.did === did) return agent;
    return undefined;
  }

  /** The one agent with this handle, else the one with this id; undefined when none (or several) match. */
  byReference(reference: string): FleetAgent | undefined {
    const handled = [...this.agents.values()].filter((agent) => agent.handle === reference);
    if (handled.length === 1) return handled[0];
    if (handled.length > 1) return undefined;
    return this.agents.get(reference);
  }
}
