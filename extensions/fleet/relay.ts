/**
 * Any daemon answers for any agent (docs/fleet.md, "Forwarding"). Each daemon answers requests for the agents
 * it runs on its own subject (`agt.fleet.<fleet>.daemon.<name>`, NATS request/reply); a daemon asked about an
 * agent it does not run looks the holder up in the placement bucket and sends the request there, and its
 * client gets the holder's answer as it is (status, content type, body). Only holders of the fleet's NATS
 * credentials reach these subjects.
 */
import type {
  AgentForwarder,
  ExtensionContext,
  Logger,
  RelayedAnswer,
  RelayedRequest,
  RemoteAgent,
} from '@agt/contracts';
import { AgtError } from '@agt/contracts';
import type { Subscription } from '@nats-io/transport-node';
import type { FleetConnection } from './connection.js';
import { fleetUnreachable } from './errors.js';
import { daemonSubject, placementKey } from './keys.js';
import { watchBucket } from './kv-watch.js';
import { type PlacementRecord, parseRecord } from './placement.js';
import type { Sealed, Signer } from './signing.js';
import type { StreamReader } from './stream-reader.js';

/** What travels on a daemon's subject. */
interface RelayMessage {
  /** The agent's id (the sender resolved names and handles); absent for a request to the daemon itself. */
  agentId?: string;
  request: RelayedRequest;
}

type RelayReply = { answer: RelayedAnswer } | { notHere: true } | { error: string };

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class Relay implements AgentForwarder {
  private subscription: Subscription | undefined;
  private watch: StreamReader | undefined;
  private stopped = false;
  /** Every record of the placement bucket as last seen (a watch keeps it), by key, with when it came. */
  private readonly directory = new Map<string, { record: PlacementRecord; seenAt: number }>();

  constructor(
    private readonly ctx: Pick<ExtensionContext, 'agents' | 'requests'>,
    private readonly connection: FleetConnection,
    private readonly fleet: string,
    private readonly daemon: string,
    private readonly run: string,
    private readonly ttlMs: number,
    private readonly timeoutMs: number,
    private readonly logger: Logger,
    private readonly signer: Signer,
  ) {}

  /** Answers this daemon's subject and follows the placement bucket; once connected (rejects to be retried). */
  async start(): Promise<void> {
    const { nc, js } = await this.connection.get(Number.POSITIVE_INFINITY);
    const subscription = nc.subscribe(daemonSubject(this.fleet, this.daemon), {
      callback: (error, message) => {
        if (error) return;
        void this.answer(message.data).then(
          (reply) => message.respond(encoder.encode(JSON.stringify(reply))),
          () => message.respond(encoder.encode(JSON.stringify({ error: 'the request failed' }))),
        );
      },
    });
    let watch: StreamReader;
    try {
      // Every revision the bucket holds (each key's last, history being 1), then each one written.
      watch = await watchBucket(
        nc,
        js,
        `agt_fleet_${this.fleet}_placements`,
        0,
        (entry) => {
          const record = entry.operation === 'PUT' ? parseRecord(decoder.decode(entry.value)) : undefined;
          if (record) this.directory.set(entry.key, { record, seenAt: Date.now() });
          else this.directory.delete(entry.key);
        },
        { owner: this.daemon, purpose: 'placements' },
        this.logger,
      );
    } catch (error) {
      subscription.unsubscribe();
      throw error;
    }
    if (this.stopped) {
      subscription.unsubscribe();
      watch.close();
      return;
    }
    this.subscription = subscription;
    this.watch = watch;
  }

  stop(): void {
    this.stopped = true;
    this.subscription?.unsubscribe();
    this.subscription = undefined;
    this.watch?.close();
    this.watch = undefined;
  }

  /** The holder's side: run the request here if the agent runs here. */
  private async answer(data: Uint8Array): Promise<RelayReply> {
    let sealed: Partial<Sealed>;
    try {
      sealed = JSON.parse(decoder.decode(data)) as Partial<Sealed>;
    } catch {
      return { error: 'not a relayed request' };
    }
    const opened = this.signer.open<RelayMessage>(sealed);
    if ('refused' in opened) {
      this.logger.warn({ why: opened.refused }, 'fleet: a forwarded request was refused');
      return { error: `refused: ${opened.refused}` };
    }
    const message = opened.body;
    if (typeof message?.request?.url !== 'string') return { error: 'not a relayed request' };
    if (!this.ctx.requests) return { notHere: true };
    if (typeof message.agentId === 'string' && !this.ctx.agents.find(message.agentId)) return { notHere: true };
    return { answer: await this.ctx.requests.dispatch(message.request) };
  }

  /** The placement of `reference` (an id, handle or name): by id from the bucket, else by the directory. */
  async holderOf(reference: string): Promise<PlacementRecord | undefined> {
    // Asked for every request about an agent not loaded here: NATS out of reach answers 503 soon.
    const { placements } = await this.connection.get(2_000);
    const byId = await placements.get(placementKey(reference)).catch(() => null);
    const record = byId && byId.operation === 'PUT' ? parseRecord(byId.string()) : undefined;
    // A fenced record's holder stopped (takeover.ts): nobody runs the agent until a daemon claims it.
    if (record?.fenced) return undefined;
    if (record && record.agentId === reference) return record;
    const matches = this.live().filter((entry) => entry.handle === reference || entry.name === reference);
    if (matches.length === 0) return undefined;
    if (matches.length > 1)
      throw new AgtError('ambiguous_agent', `"${reference}" names several agents of the fleet`, {
        details: {
          candidates: matches.map((entry) => ({ id: entry.agentId, name: entry.name, daemon: entry.daemon })),
        },
      });
    // Confirmed in the bucket: the directory may be behind.
    const confirmed = await placements.get(placementKey(matches[0]!.agentId)).catch(() => null);
    const held = confirmed && confirmed.operation === 'PUT' ? parseRecord(confirmed.string()) : undefined;
    return held?.fenced ? undefined : held;
  }

  /** Runs `request` on the daemon named `daemon` (this one included) as its owner; 503 when it does not answer. */
  async toDaemon(daemon: string, request: RelayedRequest): Promise<RelayedAnswer> {
    if (daemon === this.daemon) {
      if (!this.ctx.requests) throw fleetUnreachable('this daemon cannot run relayed requests');
      return this.ctx.requests.dispatch(request);
    }
    const reply = await this.send(daemon, { request }, `daemon ${daemon}`);
    if ('answer' in reply) return reply.answer;
    throw fleetUnreachable(`daemon ${daemon} could not run the request`);
  }

  private async send(daemon: string, payload: RelayMessage, who: string): Promise<RelayReply> {
    const { nc } = await this.connection.get();
    try {
      const message = await nc.request(
        daemonSubject(this.fleet, daemon),
        encoder.encode(JSON.stringify(this.signer.seal(payload))),
        {
          timeout: this.timeoutMs,
        },
      );
      return JSON.parse(decoder.decode(message.data)) as RelayReply;
    } catch (error) {
      throw fleetUnreachable(`${who} did not answer (${error instanceof Error ? error.message : String(error)})`);
    }
  }

  async forward(reference: string, request: RelayedRequest): Promise<RelayedAnswer | undefined> {
    const holder = await this.holderOf(reference);
    if (!holder || holder.run === this.run) return undefined;
    const reply = await this.send(
      holder.daemon,
      { agentId: holder.agentId, request },
      `daemon ${holder.daemon}, which runs agent ${holder.agentId},`,
    );
    if ('answer' in reply) return reply.answer;
    if ('notHere' in reply) return undefined;
    throw fleetUnreachable(`daemon ${holder.daemon} could not run the request: ${String(reply.error).slice(0, 200)}`);
  }

  /**
   * Records seen within the TTL: a record whose holder died expires without a notice to watchers, and a live
   * one is renewed (and seen again) every quarter of the TTL.
   */
  /**
   * Records of other daemons not seen renewed for longer than the TTL (their daemon died or was cut off), with
   * their keys: candidates for adoption once the bucket confirms they are gone.
   */
  stale(): Array<{ key: string; record: PlacementRecord }> {
    const now = Date.now();
    return [...this.directory.entries()]
      .filter(([, entry]) => now - entry.seenAt >= this.ttlMs && entry.record.run !== this.run)
      .map(([key, entry]) => ({ key, record: entry.record }));
  }

  /** Every record of another run of a daemon, as last seen (liveness.ts says whether its holder is gone). */
  others(): Array<{ key: string; record: PlacementRecord }> {
    return [...this.directory.entries()]
      .filter(([, entry]) => entry.record.run !== this.run)
      .map(([key, entry]) => ({ key, record: entry.record }));
  }

  /** Drops a record from the directory (it was adopted, or found gone). */
  forget(key: string): void {
    this.directory.delete(key);
  }

  /**
   * Puts back a record whose adoption failed here, stale again in `afterMs`: the next pass after that tries
   * it again, unless the bucket says another daemon holds it by then (or a renewal shows its holder alive).
   */
  retryLater(key: string, record: PlacementRecord, afterMs: number): void {
    if (!this.directory.has(key)) this.directory.set(key, { record, seenAt: Date.now() - this.ttlMs + afterMs });
  }

  /** How many live records each daemon holds (a daemon holding none is absent). */
  counts(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const record of this.live()) counts.set(record.daemon, (counts.get(record.daemon) ?? 0) + 1);
    return counts;
  }

  /** Every placement record renewed within the TTL, as the watch saw it: no read of the bucket. */
  placed(): PlacementRecord[] {
    return this.live();
  }

  private live(): PlacementRecord[] {
    const now = Date.now();
    return [...this.directory.values()]
      .filter((entry) => now - entry.seenAt < this.ttlMs && !entry.record.fenced)
      .map((entry) => entry.record);
  }

  remoteAgents(): RemoteAgent[] {
    return this.live()
      .filter((record) => record.run !== this.run)
      .map((record) => ({ id: record.agentId, name: record.name, handle: record.handle, daemon: record.daemon }));
  }
}
