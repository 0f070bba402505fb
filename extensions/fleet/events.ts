/**
 * One event stream for the fleet (docs/fleet.md, "Events"). Every event of this daemon's bus is published,
 * in order, to the fleet's JetStream stream under a message id made of the daemon, its run, the agent and
 * the event's sequence, so a publish retried after a lost acknowledgement is stored once. The event scope
 * `fleet` (`GET /events?scope=fleet` on any daemon) reads that stream from a stream sequence on: a client
 * resumes with the last sequence it saw on any daemon of the fleet, also after the daemon it was connected
 * to died, and across the loss of the NATS node that serves the reader's consumer (stream-reader.ts).
 */
import {
  type EventScope,
  type Logger,
  type OpenScope,
  type ScopedEvent,
  type ScopeStart,
  turnIdsEndedBy,
  type UmbilicalEvent,
} from '@agt/contracts';
import type { FleetConnection } from './connection.js';
import { fleetUnreachable } from './errors.js';
import { readStream } from './stream-reader.js';

/** Events waiting to be published while NATS is out of reach; older ones are dropped past this (counted). */
export const MAX_QUEUED_EVENTS = 10_000;
const RETRY_MS = 500;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class FleetEvents implements EventScope {
  readonly name = 'fleet';
  private readonly queue: Array<{ id: string; data: Uint8Array; ready?: Promise<void> }> = [];
  private pumping = false;
  /** The decoded form of queued entries, for {@link pendingEnds}. */
  private readonly texts = new WeakMap<Uint8Array, string>();
  private stopped = false;
  /** Events dropped because the queue was full (NATS unreachable for long). */
  dropped = 0;

  constructor(
    private readonly connection: FleetConnection,
    private readonly fleet: string,
    private readonly daemon: string,
    private readonly run: string,
    private readonly logger: Logger,
    /** The id of an agent another daemon of the fleet runs, by id, handle or name (the relay's lookup). */
    private readonly elsewhere: (reference: string) => Promise<string | undefined> = async () => undefined,
  ) {}

  resolveAgent(reference: string): Promise<string | undefined> {
    return this.elsewhere(reference);
  }

  private get subject(): string {
    return `agt.fleet.${this.fleet}.events.${this.daemon}`;
  }

  /**
   * Queues one event of this daemon's bus for the fleet stream. `ready`: published only once it settles (a
   * turn's end waits for the replica that holds it, docs/fleet.md "Replication"). A turn's end goes under a
   * message id made of the agent and the turn id it ends, so the same turn ended again on another daemon
   * (the one that took the agent over, from a replica made before the end) is dropped by the stream.
   */
  publish(event: UmbilicalEvent, ready?: Promise<void>): void {
    if (this.stopped) return;
    const ended = turnIdsEndedBy(event);
    const id =
      ended.length > 0 && event.agent_id
        ? `end.${event.agent_id}.${ended[0]}`
        : `${this.daemon}.${this.run}.${event.agent_id ?? '-'}.${event.seq}`;
    const text = JSON.stringify({ daemon: this.daemon, event });
    const data = encoder.encode(text);
    if (ended.length > 0) this.texts.set(data, text);
    this.queue.push({ id, data, ...(ready ? { ready } : {}) });
    if (this.queue.length > MAX_QUEUED_EVENTS) {
      this.queue.shift();
      this.dropped += 1;
    }
    if (!this.pumping) void this.pump();
  }

  /**
   * The ends of the agent's turns not yet stored in the stream (message id and data): a replica made now
   * carries them, so the daemon that takes the agent over from it publishes them (docs/fleet.md, Replication).
   */
  pendingEnds(agentId: string): Array<{ id: string; data: string }> {
    const prefix = `end.${agentId}.`;
    return this.queue
      .filter((entry) => entry.id.startsWith(prefix))
      .map((entry) => ({ id: entry.id, data: this.texts.get(entry.data) ?? decoder.decode(entry.data) }));
  }

  /** Publishes an entry another daemon queued and could not send (a turn's end carried by a replica). */
  publishCarried(entry: { id: string; data: string }): void {
    if (this.stopped || !entry.id.startsWith('end.')) return;
    this.queue.push({ id: entry.id, data: encoder.encode(entry.data) });
    if (!this.pumping) void this.pump();
  }

  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      while (this.queue.length > 0 && !this.stopped) {
        const head = this.queue[0]!;
        try {
          if (head.ready) await head.ready;
          const { js } = await this.connection.get();
          await js.publish(this.subject, head.data, { msgID: head.id });
          if (this.queue[0] === head) this.queue.shift();
        } catch (error) {
          this.logger.debug({ err: error }, 'fleet: an event could not be published yet; retrying');
          await new Promise((resolve) => setTimeout(resolve, RETRY_MS).unref());
        }
      }
    } finally {
      this.pumping = false;
    }
  }

  async open(start: ScopeStart, send: (event: ScopedEvent) => void, end: (reason: string) => void): Promise<OpenScope> {
    const { nc, js, eventStream } = await this.connection.get();
    const deliver = (seq: number, data: Uint8Array) => {
      let parsed: { daemon?: unknown; event?: UmbilicalEvent };
      try {
        parsed = JSON.parse(decoder.decode(data)) as typeof parsed;
      } catch {
        return;
      }
      if (parsed.event && typeof parsed.daemon === 'string')
        send({ cursor: seq, event: parsed.event, daemon: parsed.daemon });
    };
    try {
      return await readStream(nc, js, eventStream, start.after, deliver, end, this.logger);
    } catch (error) {
      throw fleetUnreachable(error instanceof Error ? error.message : String(error));
    }
  }

  /** Sends what is queued (at most `ms`), then stops publishing. */
  async stop(ms: number): Promise<void> {
    const until = Date.now() + ms;
    while (this.queue.length > 0 && this.pumping && Date.now() < until)
      await new Promise((resolve) => setTimeout(resolve, 20));
    this.stopped = true;
  }
}
