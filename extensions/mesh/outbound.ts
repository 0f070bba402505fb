/**
 * Mesh delivery, the `did:` and `mesh:` outbound transport: `msg_send` to a DID (an agent of this
 * daemon, one a peer lists, one that wrote to us, or `data.inbox_url`), to a local handle
 * (`mesh:<handle>`, delivered in-process through the same checks as HTTP), or a reply by
 * `data.parent_id` (an inbox message that came from the mesh). Each envelope is signed by the sender
 * agent; every try of one outbox row carries the same message id, so a receiver that already accepted
 * it answers without storing it again. Network errors, 404 (agent not loaded yet), 408, 429 and 5xx
 * are retried with exponential backoff; other refusals fail the row at once with their status.
 */
import type { OutboundEnvelope, OutboundReport, OutboundResult, OutboundTransport } from '@agt/contracts';
import { isAgtError } from '@agt/contracts';
import { findMeshAgent, type MeshAgent } from './directory.js';
import { messageIdFor, signEnvelope, type Envelope } from './envelope.js';
import { DeliveryFailure, deliveryGaveUp, deliveryRefused, noParent, noRoute } from './errors.js';
import { acceptEnvelope, checkVisible, type InboundDeps } from './inbound.js';
import type { MeshOptions } from './options.js';
import { Naps } from './naps.js';

export interface OutboundDeps extends InboundDeps {
  options: MeshOptions;
  /** This daemon's mesh base URL while it runs (for `reply_to`). */
  baseUrl(): string | null;
  /** Base URLs of the mesh servers of other daemons (manual peers and mDNS). */
  peers(): string[];
  logger: { warn(obj: unknown, msg?: string): void };
}

type Target = { kind: 'local'; agent: MeshAgent } | { kind: 'remote'; did: string; url: string };

const INBOX_URL = /^https?:\/\/[^/?#\s]+\/agents\/[^/?#\s]+\/inbox$/;
const RETRY_STATUSES = new Set([404, 408, 425, 429]);

const record = (value: unknown): Record<string, unknown> =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
/**
 * A lone UTF-16 surrogate (a cut emoji) has no canonical JSON (RFC 8785): it goes out as U+FFFD instead of failing the
 * signature.
 */
const wellFormed = (value: string) => value.replace(/\p{Surrogate}/gu, '\ufffd');
const text = (value: unknown, max = 500) =>
  typeof value === 'string' && value.length > 0 && value.length <= max ? wellFormed(value) : undefined;

export class MeshTransport implements OutboundTransport {
  readonly schemes = ['did:', 'mesh:'] as const;
  /** DID → inbox URL, learned from envelopes that verified and from peers' cards. */
  private readonly known = new Map<string, string>();
  private readonly naps = new Naps();
  private closed = false;

  constructor(private readonly deps: OutboundDeps) {}

  /** Remembers where a DID that wrote to us can be answered. */
  learn(did: string, inboxUrl: string | undefined): void {
    if (!inboxUrl || !INBOX_URL.test(inboxUrl)) return;
    this.known.delete(did);
    this.known.set(did, inboxUrl);
    if (this.known.size > 10_000) this.known.delete(this.known.keys().next().value!);
  }

  async send(envelope: OutboundEnvelope, report: OutboundReport): Promise<OutboundResult | void> {
    const sender = this.deps.agents.list().find((agent) => agent.id === envelope.agentId);
    const identity = this.deps.agents.keys.identity(envelope.agentId);
    if (!sender || !identity) throw new DeliveryFailure(`agent ${envelope.agentId} has no identity to sign with`);
    const data = record(envelope.data);
    let { target, parent, learned } = await this.targetOf(envelope, data);
    const to = target.kind === 'local' ? target.agent.did : target.did;
    if (!to) throw new DeliveryFailure('the recipient agent has no DID');
    const base = this.deps.baseUrl();
    const handle = sender.handle ?? sender.id;
    const payload: Envelope['payload'] = {
      content: wellFormed(envelope.text),
      sent_at: new Date().toISOString(),
      ...(text(data.content_type, 100) ? { content_type: text(data.content_type, 100)! } : {}),
      ...(text(data.subject) ? { subject: text(data.subject)! } : {}),
      ...(parent
        ? { parent_id: parent.id, thread_id: parent.thread_id ?? parent.id }
        : text(data.thread_id, 200)
          ? { thread_id: text(data.thread_id, 200)! }
          : {}),
      // Trace context (docs/observability.md): signed with the rest; receivers of any agt version accept payload
      // fields.
      ...(envelope.traceparent ? { traceparent: envelope.traceparent } : {}),
    };
    const id = messageIdFor(identity.did, envelope.messageId, envelope.text);
    for (let attempt = 1; ; attempt++) {
      if (this.closed) return new Promise(() => {});
      const unsigned: Envelope = {
        version: '1.0',
        id,
        timestamp: new Date().toISOString(),
        from: identity.did,
        to,
        ...(base ? { reply_to: `${base}/agents/${encodeURIComponent(handle)}/inbox` } : {}),
        payload,
      };
      const signed = await signEnvelope(this.deps.agents, envelope.agentId, unsigned);
      const outcome =
        target.kind === 'local' ? await this.deliverLocally(target.agent, signed) : await this.post(target.url, signed);
      if (outcome.ok) return { statusCode: outcome.status };
      if (learned && outcome.status === null && target.kind === 'remote') {
        // Nobody listens where we last found this DID: ask the peers again before the next try.
        this.known.delete(target.did);
        const again = await this.targetOf(envelope, data).catch(() => undefined);
        if (again && again.target.kind === 'remote' && again.target.did === to) ({ target, learned } = again);
      }
      if (!outcome.retry) throw deliveryRefused(outcome.status ?? 0, outcome.why);
      if (attempt >= this.deps.options.maxAttempts)
        throw deliveryGaveUp(attempt, outcome.why, outcome.status ?? undefined);
      report.attemptFailed(outcome.status ?? null, outcome.why);
      const pause = Math.min(this.deps.options.retryMaxMs, this.deps.options.retryBaseMs * 2 ** (attempt - 1));
      await this.sleep(pause * (0.8 + Math.random() * 0.4));
    }
  }

  /** Where the message goes; `learned`: the URL came from what this daemon learned (it may go stale). */
  private async targetOf(
    envelope: OutboundEnvelope,
    data: Record<string, unknown>,
  ): Promise<{ target: Target; parent?: { id: string; thread_id?: string }; learned?: boolean }> {
    const parentId =
      typeof data.parent_id === 'number'
        ? data.parent_id
        : typeof data.parent_id === 'string' && /^\d+$/.test(data.parent_id)
          ? Number(data.parent_id)
          : undefined;
    const address = envelope.address;
    if (parentId !== undefined && (address === 'mesh:' || !envelope.recipient)) {
      const row = await this.deps.inbox.get(envelope.agentId, parentId);
      const mesh = record(record(row?.data).mesh);
      const from = text(mesh.from, 128);
      if (row?.source !== 'mesh' || !from) throw noParent(parentId);
      const parent = {
        id: String(mesh.id),
        ...(text(mesh.payload && record(mesh.payload).thread_id, 200)
          ? { thread_id: String(record(mesh.payload).thread_id) }
          : {}),
      };
      const local = findMeshAgent(this.deps.agents, from);
      if (local) return { target: { kind: 'local', agent: local }, parent };
      const replyTo = text(mesh.reply_to);
      if (!replyTo || !INBOX_URL.test(replyTo)) throw noParent(parentId);
      return { target: { kind: 'remote', did: from, url: replyTo }, parent };
    }
    if (address.toLowerCase().startsWith('mesh:')) {
      const handle = address.slice('mesh:'.length);
      const local = handle ? findMeshAgent(this.deps.agents, handle) : undefined;
      if (local) return { target: { kind: 'local', agent: local } };
      if (!handle.startsWith('did:')) throw noRoute(address);
    }
    const did = address.toLowerCase().startsWith('mesh:') ? address.slice('mesh:'.length) : address;
    const local = findMeshAgent(this.deps.agents, did);
    if (local) return { target: { kind: 'local', agent: local } };
    const given = text(data.inbox_url);
    if (given && INBOX_URL.test(given)) return { target: { kind: 'remote', did, url: given } };
    const url = this.known.get(did) ?? (await this.askPeers(did));
    if (!url) throw noRoute(address);
    return { target: { kind: 'remote', did, url }, learned: true };
  }

  /** Finds `did` in the cards the peers list. */
  private async askPeers(did: string): Promise<string | undefined> {
    for (const peer of this.deps.peers()) {
      try {
        const response = await fetch(`${peer.replace(/\/$/, '')}/agents`, { signal: AbortSignal.timeout(3_000) });
        if (!response.ok) continue;
        const body = record(await response.json());
        for (const card of Array.isArray(body.agents) ? body.agents : []) {
          const inbox = text(record(record(card).endpoints).inbox);
          if (record(card).did === did && inbox && INBOX_URL.test(inbox)) {
            this.learn(did, inbox);
            return inbox;
          }
        }
      } catch {
        // A peer that is down or answers garbage knows nothing.
      }
    }
    return undefined;
  }

  private async deliverLocally(agent: MeshAgent, signed: Envelope): Promise<Outcome> {
    try {
      checkVisible(agent, 'loopback');
      await acceptEnvelope(this.deps, agent, signed);
      return { ok: true, status: 202 };
    } catch (error) {
      const status = isAgtError(error) ? error.statusCode : 500;
      return { ok: false, status, retry: status >= 500 || RETRY_STATUSES.has(status), why: (error as Error).message };
    }
  }

  private async post(url: string, signed: Envelope): Promise<Outcome> {
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(signed),
        redirect: 'error',
        signal: AbortSignal.timeout(this.deps.options.requestTimeoutMs),
      });
      const answer = (await response.text()).slice(0, 300);
      if (response.ok) return { ok: true, status: response.status };
      let why = answer;
      try {
        why = String(record(JSON.parse(answer)).error ?? answer);
      } catch {
        // Not JSON: the text itself.
      }
      return {
        ok: false,
        status: response.status,
        retry: response.status >= 500 || RETRY_STATUSES.has(response.status),
        why,
      };
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      return { ok: false, status: null, retry: true, why: cause ?? (error as Error).message };
    }
  }

  private sleep(ms: number): Promise<void> {
    return this.naps.sleep(ms);
  }

  /**
   * Ends every retry wait; deliveries in progress stop without settling (their rows stay `pending` and resume at the
   * next load).
   */
  close(): void {
    this.closed = true;
    this.naps.wakeAll();
  }
}

type Outcome = { ok: true; status: number } | { ok: false; status: number | null; retry: boolean; why: string };
