/**
 * Where agent files' replicas are written (docs/fleet.md, "Replication"): the JetStream stream
 * `agt_fleet_<name>_replicas`, one subject per agent. Each agent's subject holds a base (a whole copy, or a
 * pointer to a whole copy in the object store when it exceeds one message), published with `Nats-Rollup:
 * sub` so the server drops everything before it on that subject at once, then the deltas made after it,
 * each published only if the subject's last message is still the one it was computed against. One stored
 * copy thus costs one publish and one acknowledgement, of the pages that changed.
 */
import type { JetStreamManager } from '@nats-io/jetstream';
import type { FleetConnection } from './connection.js';
import { placementKey } from './keys.js';

/** What a replica message says of the copy it makes (the header `Agt-Replica`, JSON). */
export interface ReplicaHeader {
  /** `base`: the message holds the whole copy; `object`: the object store does; `delta`: changed pages. */
  kind: 'base' | 'object' | 'delta';
  agentId: string;
  schemaVersion: number;
  /** The last turn id the copy holds. */
  turnId: string;
  /** SHA-256 of the whole copy, and of the one a delta applies to. */
  sha256: string;
  prev?: string;
  bytes: number;
  pageSize: number;
  daemon: string;
  at: number;
  /** An `object` base's copy in the object store. */
  object?: string;
  /** Turn ends not yet on the fleet stream when the copy was made (FleetEvents.pendingEnds). */
  ends: Array<{ id: string; data: string }>;
}

export interface ReplicaEntry {
  seq: number;
  header: ReplicaHeader;
  data: Uint8Array;
}

/** Room kept under the server's message limit (`max_payload`) for the header names and the NATS headers. */
const HEADER_ROOM = 4 * 1024;

export class ReplicaLog {
  private ready: Promise<{ jsm: JetStreamManager; maxPayload: number }> | undefined;
  readonly stream: string;

  constructor(
    private readonly connection: FleetConnection,
    private readonly fleet: string,
    private readonly replicas: number,
  ) {
    this.stream = `agt_fleet_${fleet}_replicas`;
  }

  subject(agentId: string): string {
    return `agt.fleet.${this.fleet}.replicas.${placementKey(agentId)}`;
  }

  /** The stream, made if missing (once per run; again after a failure); and the largest message body. */
  private ensure(): Promise<{ jsm: JetStreamManager; maxPayload: number }> {
    this.ready ??= (async () => {
      const [{ nc }, { jetstreamManager }] = await Promise.all([this.connection.get(), import('@nats-io/jetstream')]);
      const jsm = await jetstreamManager(nc);
      const exists = () =>
        jsm.streams.info(this.stream).then(
          () => true,
          () => false,
        );
      if (!(await exists()))
        await jsm.streams
          .add({
            name: this.stream,
            subjects: [`agt.fleet.${this.fleet}.replicas.>`],
            allow_rollup_hdrs: true,
            num_replicas: this.replicas,
          })
          .catch(async (error: unknown) => {
            // Another daemon made it meanwhile.
            if (!(await exists())) throw error;
          });
      return { jsm, maxPayload: Math.max(0, (nc.info?.max_payload ?? 1024 * 1024) - HEADER_ROOM) };
    })().catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }

  /** The largest body a replica message with `header` takes (the header counts toward NATS's limit). */
  async maxBody(header: ReplicaHeader): Promise<number> {
    const room = (await this.ensure()).maxPayload - Buffer.byteLength(JSON.stringify(header));
    return Math.max(0, room);
  }

  /**
   * Stores one replica message; resolves its stream sequence. A base rolls the subject up; a delta is
   * refused unless the subject's last message is `after` (so it never applies to another copy).
   */
  async append(header: ReplicaHeader, data: Uint8Array, after?: number): Promise<number> {
    await this.ensure();
    const { js } = await this.connection.get();
    const { headers } = await import('@nats-io/transport-node');
    const h = headers();
    h.set('Agt-Replica', JSON.stringify(header));
    if (header.kind !== 'delta') h.set('Nats-Rollup', 'sub');
    const ack = await js.publish(this.subject(header.agentId), data, {
      headers: h,
      ...(header.kind === 'delta' && after !== undefined ? { expect: { lastSubjectSequence: after } } : {}),
    });
    return ack.seq;
  }

  /** The agent's messages in order (a base, then its deltas); empty when there are none. */
  async read(agentId: string): Promise<ReplicaEntry[]> {
    const { jsm } = await this.ensure();
    const subject = this.subject(agentId);
    const entries: ReplicaEntry[] = [];
    for (let seq = 0; ; ) {
      // The first message of the subject at or after `seq` (the server's subject index finds it).
      const message = await jsm.streams.getMessage(this.stream, { seq, next_by_subj: subject } as never);
      if (!message) return entries;
      const text = message.header.get('Agt-Replica');
      const header = text ? (JSON.parse(text) as ReplicaHeader) : undefined;
      if (header) entries.push({ seq: message.seq, header, data: message.data });
      seq = message.seq + 1;
    }
  }
}
