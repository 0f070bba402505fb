/**
 * Messages between the fleet's agents over JetStream (docs/fleet.md, "Messages"). The sending side is a
 * message carrier (contracts/message-carriers.ts): an outbox row whose receiver is an agent of the fleet
 * (by DID, `mesh:<handle>`, or a reply to a mesh message from one) is signed with the sender's key and
 * published to the work-queue stream `agt_fleet_<name>_messages`, on the receiver's own subject, under its
 * message id; the row is delivered once the stream stored it. The receiving side is an inbox source: while
 * an agent is loaded here, its durable consumer is read, and each message is acknowledged only after the
 * agent's inbox holds it (committed to its file), so one that finds its agent down or moving waits in the
 * stream for whichever daemon loads the agent next. Every other message goes on to the mesh's transport.
 */
import { createHash } from 'node:crypto';
import type {
  AgentView,
  Deliver,
  Detach,
  ExtensionContext,
  Logger,
  MessageCarrier,
  OutboundEnvelope,
  OutboundReport,
  OutboundResult,
} from '@agt/contracts';
import { parentIdOf } from '@agt/contracts';
import type { JsMsg } from '@nats-io/jetstream';
import type { AgentDirectory, FleetAgent } from './agent-directory.js';
import type { FleetConnection } from './connection.js';
import { placementKey } from './keys.js';
import { type FleetEnvelope, fleetMessageId, openEnvelope, signedBytes, withSignature } from './message-envelope.js';

/** How long the stream keeps a message no daemon took (its receiver never loaded again). */
export const MESSAGES_MAX_AGE_MS = 7 * 24 * 3600_000;
/** Within this window JetStream stores a message republished under the same id once. */
export const MESSAGES_DUPLICATE_WINDOW_MS = 10 * 60_000;
/** A message taken but not acknowledged within this comes again (the receiving daemon died meanwhile). */
const ACK_WAIT_MS = 30_000;
const FETCH_EXPIRES_MS = 5_000;
const RETRY_MS = [250, 500, 1_000, 2_000, 5_000];
/** How long the carrier waits for the directory before it leaves a message to the mesh. */
const DIRECTORY_WAIT_MS = 3_000;

const record = (value: unknown): Record<string, unknown> =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
const short = (value: unknown, max: number) =>
  typeof value === 'string' && value.length > 0 && value.length <= max ? value : undefined;
const pause = (attempt: number) =>
  new Promise((resolve) => setTimeout(resolve, RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)]).unref());

interface Route {
  receiver: FleetAgent;
  parent?: { id: string; thread_id?: string };
}

export class FleetMessages implements MessageCarrier {
  private stream: Promise<string> | undefined;
  private closed = false;
  /** The agents whose messages this daemon reads now (loaded here). */
  private readonly reading = new Set<string>();

  constructor(
    private readonly ctx: Pick<ExtensionContext, 'agents' | 'inbox'>,
    private readonly connection: FleetConnection,
    private readonly directory: AgentDirectory,
    private readonly fleet: string,
    private readonly replicas: number,
    private readonly logger: Logger,
    /** Resolves once what the agent's inbox holds now is safe beyond this daemon (a stored replica). */
    private readonly kept: (agentId: string) => Promise<void> = async () => {},
  ) {}

  private subject(agentId: string): string {
    return `agt.fleet.${this.fleet}.messages.${placementKey(agentId)}`;
  }

  /** The stream, made if missing (once per extension run; again after a failure). */
  private ensureStream(): Promise<string> {
    this.stream ??= (async () => {
      const [{ nc }, { jetstreamManager, RetentionPolicy }, { nanos }] = await Promise.all([
        this.connection.get(),
        import('@nats-io/jetstream'),
        import('@nats-io/transport-node'),
      ]);
      const name = `agt_fleet_${this.fleet}_messages`;
      const jsm = await jetstreamManager(nc);
      const exists = () =>
        jsm.streams.info(name).then(
          () => true,
          () => false,
        );
      if (!(await exists()))
        await jsm.streams
          .add({
            name,
            subjects: [`agt.fleet.${this.fleet}.messages.>`],
            retention: RetentionPolicy.Workqueue,
            max_age: nanos(MESSAGES_MAX_AGE_MS),
            duplicate_window: nanos(MESSAGES_DUPLICATE_WINDOW_MS),
            num_replicas: this.replicas,
          })
          .catch(async (error: unknown) => {
            // Another daemon made it meanwhile.
            if (!(await exists())) throw error;
          });
      return name;
    })().catch((error: unknown) => {
      this.stream = undefined;
      throw error;
    });
    return this.stream;
  }

  // --- The sending side -------------------------------------------------------------------------------

  async takes(envelope: OutboundEnvelope): Promise<boolean> {
    if (!(await this.directory.ready(DIRECTORY_WAIT_MS))) return false;
    return (await this.routeOf(envelope)) !== undefined;
  }

  /** The fleet agent `envelope` goes to; undefined when it goes elsewhere. */
  private async routeOf(envelope: OutboundEnvelope): Promise<Route | undefined> {
    const address = envelope.address;
    const parentId = parentIdOf(envelope);
    if (parentId !== undefined && (address.toLowerCase() === 'mesh:' || !envelope.recipient)) {
      const row = await this.ctx.inbox.get(envelope.agentId, parentId).catch(() => undefined);
      const mesh = record(record(row?.data).mesh);
      const from = short(mesh.from, 128);
      const receiver = row?.source === 'mesh' && from ? this.directory.byDid(from) : undefined;
      if (!receiver) return undefined;
      const thread = short(record(mesh.payload).thread_id, 200);
      return { receiver, parent: { id: String(mesh.id), ...(thread ? { thread_id: thread } : {}) } };
    }
    const lower = address.toLowerCase();
    if (lower.startsWith('mesh:')) {
      const reference = address.slice('mesh:'.length);
      const receiver = reference.startsWith('did:')
        ? this.directory.byDid(reference)
        : reference
          ? this.directory.byReference(reference)
          : undefined;
      return receiver && { receiver };
    }
    if (lower.startsWith('did:')) {
      const receiver = this.directory.byDid(address);
      return receiver && { receiver };
    }
    return undefined;
  }

  async send(envelope: OutboundEnvelope, report: OutboundReport): Promise<OutboundResult | void> {
    const identity = this.ctx.agents.keys.identity(envelope.agentId);
    if (!identity) throw new Error(`agent ${envelope.agentId} has no identity to sign with`);
    const route = await this.routeOf(envelope);
    if (!route) throw new Error('the receiver is no longer an agent of the fleet');
    const data = record(envelope.data);
    const subject = short(data.subject, 500);
    const contentType = short(data.content_type, 100);
    const thread = route.parent?.thread_id ?? route.parent?.id ?? short(data.thread_id, 200);
    const unsigned: FleetEnvelope = {
      version: '1.0',
      id: fleetMessageId(identity.did, envelope.messageId, envelope.text),
      timestamp: new Date().toISOString(),
      from: identity.did,
      to: route.receiver.did,
      payload: {
        content: envelope.text,
        sent_at: new Date().toISOString(),
        ...(contentType ? { content_type: contentType } : {}),
        ...(subject ? { subject } : {}),
        ...(route.parent ? { parent_id: route.parent.id } : {}),
        ...(thread ? { thread_id: thread } : {}),
        ...(envelope.traceparent ? { traceparent: envelope.traceparent } : {}),
      },
    };
    const signed = withSignature(unsigned, await this.ctx.agents.keys.sign(envelope.agentId, signedBytes(unsigned)));
    const bytes = new TextEncoder().encode(JSON.stringify(signed));
    for (let attempt = 0; ; attempt += 1) {
      // Never settled: the row stays pending and goes out again under the same id at the next load.
      if (this.closed) return new Promise(() => {});
      try {
        await this.ensureStream();
        const { js } = await this.connection.get();
        await js.publish(this.subject(route.receiver.agentId), bytes, { msgID: signed.id });
        return { statusCode: 202 };
      } catch (error) {
        report.attemptFailed(null, `the fleet's message stream: ${error instanceof Error ? error.message : error}`);
        await pause(attempt);
      }
    }
  }

  // --- The receiving side -----------------------------------------------------------------------------

  /** Reads `agent`'s messages while it is loaded here; the returned function stops that. */
  attach(agent: AgentView, deliver: Deliver): Detach {
    const reading = { stopped: false, stop: () => {} };
    this.reading.add(agent.id);
    void this.read(agent, deliver, reading);
    return () => {
      this.reading.delete(agent.id);
      reading.stopped = true;
      reading.stop();
    };
  }

  /** A new handle or name of an agent read here goes into the directory (a bus event of this daemon's). */
  configChanged(agentId: string): void {
    const view = this.reading.has(agentId) ? this.ctx.agents.list().find((agent) => agent.id === agentId) : undefined;
    const did = view && this.ctx.agents.keys.identity(agentId)?.did;
    if (!view || !did) return;
    void this.directory
      .record({ agentId, did, handle: view.handle ?? null, name: view.name })
      .catch((error: unknown) => this.logger.warn({ err: error, agentId }, 'fleet: the agent directory is behind'));
  }

  private async read(agent: AgentView, deliver: Deliver, reading: { stopped: boolean; stop: () => void }) {
    const did = this.ctx.agents.keys.identity(agent.id)?.did;
    if (!did) return;
    const durable = `msg_${createHash('sha256').update(placementKey(agent.id)).digest('hex').slice(0, 32)}`;
    let ready = false;
    for (let attempt = 0; !reading.stopped && !this.closed; ) {
      try {
        const { nc, js } = await this.connection.get();
        if (!ready) {
          await this.directory.record({ agentId: agent.id, did, handle: agent.handle ?? null, name: agent.name });
          const stream = await this.ensureStream();
          const { jetstreamManager, AckPolicy, DeliverPolicy } = await import('@nats-io/jetstream');
          const { nanos } = await import('@nats-io/transport-node');
          await (await jetstreamManager(nc)).consumers.add(stream, {
            durable_name: durable,
            filter_subject: this.subject(agent.id),
            ack_policy: AckPolicy.Explicit,
            ack_wait: nanos(ACK_WAIT_MS),
            deliver_policy: DeliverPolicy.All,
            max_ack_pending: 1,
          });
          ready = true;
        }
        const consumer = await js.consumers.get(await this.ensureStream(), durable);
        const batch = await consumer.fetch({ max_messages: 1, expires: FETCH_EXPIRES_MS });
        reading.stop = () => batch.stop();
        if (reading.stopped) batch.stop();
        for await (const message of batch) await this.receive(agent, did, message, deliver);
        attempt = 0;
      } catch (error) {
        if (reading.stopped || this.closed) break;
        if (attempt === 0) this.logger.warn({ err: error, agentId: agent.id }, 'fleet: messages cannot be read yet');
        await pause(attempt);
        attempt += 1;
      }
    }
  }

  /** One message into the agent's inbox, acknowledged once it is there; refused ones are dropped (logged). */
  private async receive(agent: AgentView, did: string, message: JsMsg, deliver: Deliver): Promise<void> {
    const opened = openEnvelope(message.data);
    const refusal = 'refused' in opened ? opened.refused : this.refusal(agent, did, opened);
    if (refusal !== undefined) {
      this.logger.warn({ agentId: agent.id, why: refusal }, 'fleet: a message for the agent was refused');
      message.term();
      return;
    }
    const envelope = opened as FleetEnvelope;
    const { signature: _signature, ...kept } = envelope;
    try {
      await deliver({
        source: 'mesh',
        sender: envelope.from,
        text: envelope.payload.content,
        data: { mesh: { ...kept, signed: true, via: 'fleet' } },
        externalId: envelope.id,
        ...(envelope.payload.traceparent ? { traceparent: envelope.payload.traceparent } : {}),
      });
    } catch (error) {
      // The agent is unloading: the message waits for whichever daemon loads it next.
      message.nak();
      throw error;
    }
    // Without a shared file system the row must be in a stored copy first: a kill before it would lose it.
    await this.kept(agent.id);
    await message.ackAck();
  }

  /** Why the receiver does not take `envelope` (the mesh's rules for a message from this machine). */
  private refusal(agent: AgentView, did: string, envelope: FleetEnvelope): string | undefined {
    if (envelope.to !== did) return 'it names another receiver';
    const messaging = record(agent.config.messaging);
    if (messaging.visibility === 'off') return 'the agent’s messaging.visibility is off';
    const list = (value: unknown) => (Array.isArray(value) ? value.filter((item) => typeof item === 'string') : []);
    if (list(messaging.block_list).includes(envelope.from)) return 'the sender is on the agent’s block list';
    const allow = list(messaging.allow_list);
    if (allow.length > 0 && !allow.includes(envelope.from)) return 'the sender is not on the agent’s allow list';
    return undefined;
  }

  close(): void {
    this.closed = true;
    this.directory.close();
  }
}
