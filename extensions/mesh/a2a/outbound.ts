/**
 * `msg_send` to an A2A agent: the recipient is its agent card URL (`https://…/agent-card.json`,
 * optionally written `a2a:<url>`), or no recipient and `data.parent_id` naming an inbox row an A2A
 * reply made. Delivered like a mesh message: the outbox row goes `pending`, tries that fail on the
 * network (or 404, 408, 425, 429, 5xx) are retried with the mesh's backoff, others fail the row.
 *
 * One try: fetch the card and call its JSON-RPC URL under the sending agent's fetch policy
 * (`ctx.agents.fetch`, the one `sys_fetch` obeys, capped by the owner's ceiling), check the card's
 * signature when it has one (a card whose signature does not verify is refused), send the message with
 * the official SDK's client (v1.0, or v0.3 for a card that offers only that) and the agent's sender
 * proof when the card names a DID, wait for the task to end or ask for input, and put the answer in the
 * sending agent's inbox (`source: "a2a"`, one row per remote task and state). Every try of one row sends
 * the same message id, so a receiver that already has it answers with the same task.
 */
import type { OutboundEnvelope, OutboundReport, OutboundResult, OutboundTransport } from '@agt/contracts';
import { parentIdOf } from '@agt/contracts';
import { parseStrictJson } from '@agt/contracts';
import { isAgtError } from '@agt/contracts';
import type { AgentsService, InboxService } from '@agt/contracts';
import { messageIdFor } from '../envelope.js';
import { DeliveryFailure, deliveryGaveUp, deliveryRefused } from '../errors.js';
import type { MeshOptions } from '../options.js';
import { DID_EXTENSION, verifyA2ACard } from './card.js';
import { senderProof, SENDER_METADATA, TRACE_METADATA } from './sender.js';
import { Naps } from '../naps.js';

export interface A2AOutboundDeps {
  agents: AgentsService;
  inbox: InboxService;
  options: MeshOptions;
  logger: { warn(obj: unknown, msg?: string): void };
}

const CARD_URL = /^https?:\/\/[^\s]+\/(agent-card|agent)\.json$/i;
const RETRY_STATUSES = new Set([404, 408, 425, 429]);
const FINAL = new Set([
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_REJECTED',
  'TASK_STATE_INPUT_REQUIRED',
  'TASK_STATE_AUTH_REQUIRED',
]);
const STATE_NAMES: Record<number, string> = {
  1: 'TASK_STATE_SUBMITTED',
  2: 'TASK_STATE_WORKING',
  3: 'TASK_STATE_COMPLETED',
  4: 'TASK_STATE_FAILED',
  5: 'TASK_STATE_CANCELED',
  6: 'TASK_STATE_INPUT_REQUIRED',
  7: 'TASK_STATE_REJECTED',
  8: 'TASK_STATE_AUTH_REQUIRED',
};

const record = (value: unknown): Record<string, unknown> =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
const text = (value: unknown, max = 500) =>
  typeof value === 'string' && value.length > 0 && value.length <= max ? value : undefined;

/** A try that failed: retried unless `retry` is false. */
class TryFailed extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    readonly retry: boolean,
  ) {
    super(message);
  }
}

export class A2ATransport implements OutboundTransport {
  readonly schemes = ['a2a:', 'http:', 'https:'] as const;
  private readonly naps = new Naps();
  private closed = false;

  constructor(private readonly deps: A2AOutboundDeps) {}

  async send(envelope: OutboundEnvelope, report: OutboundReport): Promise<OutboundResult | void> {
    const identity = this.deps.agents.keys.identity(envelope.agentId);
    if (!identity) throw new DeliveryFailure(`agent ${envelope.agentId} has no identity to sign with`);
    const target = await this.targetOf(envelope);
    const messageId = messageIdFor(identity.did, envelope.messageId, envelope.text);
    for (let attempt = 1; ; attempt++) {
      if (this.closed) return new Promise(() => {});
      try {
        return await this.tryOnce(envelope, identity.did, messageId, target);
      } catch (error) {
        const failed =
          error instanceof TryFailed ? error : new TryFailed((error as Error).message, null, !isAgtError(error));
        if (!failed.retry) throw deliveryRefused(failed.status ?? 0, failed.message);
        if (attempt >= this.deps.options.maxAttempts)
          throw deliveryGaveUp(attempt, failed.message, failed.status ?? undefined);
        report.attemptFailed(failed.status, failed.message);
        const pause = Math.min(this.deps.options.retryMaxMs, this.deps.options.retryBaseMs * 2 ** (attempt - 1));
        await this.sleep(pause * (0.8 + Math.random() * 0.4));
      }
    }
  }

  /** The card URL, and the remote task and context a reply continues. */
  private async targetOf(
    envelope: OutboundEnvelope,
  ): Promise<{ cardUrl: string; taskId?: string; contextId?: string }> {
    const data = record(envelope.data);
    const parentId = parentIdOf(envelope);
    const address = envelope.address.replace(/^a2a:/i, '');
    if (parentId !== undefined && !CARD_URL.test(address)) {
      const row = await this.deps.inbox.get(envelope.agentId, parentId);
      const a2a = record(record(row?.data).a2a);
      const cardUrl = text(a2a.card_url, 2000);
      if (row?.source !== 'a2a' || !cardUrl) throw new DeliveryFailure(`no A2A inbox message ${parentId} to reply to`);
      // Only a task that asked for input takes a message; else the reply opens a new task in the same context.
      return {
        cardUrl,
        ...(a2a.state === 'TASK_STATE_INPUT_REQUIRED' ? { taskId: text(a2a.task_id, 200) } : {}),
        contextId: text(a2a.context_id, 200),
      };
    }
    if (!CARD_URL.test(address))
      throw new DeliveryFailure(`not an A2A agent card URL (…/agent-card.json): ${address.slice(0, 200)}`);
    return {
      cardUrl: address,
      ...(text(data.task_id, 200) ? { taskId: text(data.task_id, 200) } : {}),
      ...(text(data.context_id, 200) ? { contextId: text(data.context_id, 200) } : {}),
    };
  }

  private async request(
    agentId: string,
    url: string,
    init: { method?: string; headers?: Record<string, string>; body?: string },
  ) {
    const fetch = this.deps.agents.fetch;
    if (!fetch) throw new TryFailed('this daemon offers no fetch for extensions', null, false);
    try {
      return await fetch(agentId, {
        url,
        method: init.method === 'POST' ? 'POST' : 'GET',
        headers: init.headers ?? {},
        body: init.body,
        timeoutMs: 60_000,
        maxBytes: 1024 * 1024,
      });
    } catch (error) {
      // The fetch policy (forbidden) or a bad URL fails the row; a network error or time limit is retried.
      if (isAgtError(error)) throw new TryFailed(error.message, error.statusCode, false);
      throw new TryFailed((error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message, null, true);
    }
  }

  private async tryOnce(
    envelope: OutboundEnvelope,
    did: string,
    messageId: string,
    target: { cardUrl: string; taskId?: string; contextId?: string },
  ): Promise<OutboundResult> {
    const fetched = await this.request(envelope.agentId, target.cardUrl, {
      headers: { 'a2a-version': '1.0', accept: 'application/json' },
    });
    if (fetched.status < 200 || fetched.status > 299)
      throw new TryFailed(
        `the agent card answered ${fetched.status}`,
        fetched.status,
        fetched.status >= 500 || RETRY_STATUSES.has(fetched.status),
      );
    let card: Record<string, unknown>;
    try {
      card = record(parseStrictJson(fetched.text));
    } catch (error) {
      throw new TryFailed(`the agent card is not JSON: ${(error as Error).message}`, fetched.status, false);
    }
    const check = verifyA2ACard(card);
    if (check.status === 'invalid')
      throw new TryFailed(`the agent card's signature does not verify: ${check.why}`, fetched.status, false);
    const receiverDid = check.status === 'valid' ? check.did : undefined;
    const claimed = (
      Array.isArray(record(card.capabilities).extensions) ? (record(card.capabilities).extensions as unknown[]) : []
    )
      .map(record)
      .find((extension) => extension.uri === DID_EXTENSION);

    const { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory } = await import('@a2a-js/sdk/client');
    const fetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
      const answer = await this.request(envelope.agentId, String(input instanceof Request ? input.url : input), {
        method: init?.method,
        headers: Object.fromEntries(new Headers(init?.headers).entries()),
        body: typeof init?.body === 'string' ? init.body : undefined,
      });
      return new Response(answer.status === 204 || answer.status === 304 ? null : answer.text, {
        status: answer.status,
        headers: { 'content-type': answer.headers['content-type'] ?? 'application/json' },
      });
    }) as typeof fetch;
    const factory = new ClientFactory({
      transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: true } })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl, legacyCompat: { enabled: true } }),
    });
    let client: Awaited<ReturnType<typeof factory.createFromAgentCard>>;
    try {
      client = await factory.createFromAgentCard(card as never);
    } catch (error) {
      throw new TryFailed(
        `the agent card offers no JSON-RPC interface this daemon speaks: ${(error as Error).message}`,
        fetched.status,
        false,
      );
    }
    const proof =
      receiverDid && record(claimed?.params).did === receiverDid
        ? {
            [SENDER_METADATA]: await senderProof(this.deps.agents, envelope.agentId, {
              did,
              messageId,
              text: envelope.text,
              to: receiverDid,
            }),
          }
        : undefined;
    const message = {
      messageId,
      contextId: target.contextId ?? '',
      taskId: target.taskId ?? '',
      role: 1,
      parts: [
        {
          content: { $case: 'text' as const, value: envelope.text },
          metadata: undefined,
          filename: '',
          mediaType: 'text/plain',
        },
      ],
      // W3C trace context of the kernel's hand-over (a tracer is on): the receiver's turn joins this trace.
      metadata:
        proof || envelope.traceparent
          ? { ...proof, ...(envelope.traceparent ? { [TRACE_METADATA]: envelope.traceparent } : {}) }
          : undefined,
      extensions: [],
      referenceTaskIds: [],
    };
    let result: unknown;
    try {
      result = await client.sendMessage({
        tenant: '',
        message,
        configuration: {
          acceptedOutputModes: ['text/plain'],
          returnImmediately: false,
          taskPushNotificationConfig: undefined,
          historyLength: undefined,
        },
        metadata: undefined,
      } as never);
    } catch (error) {
      throw asTryFailed(error);
    }
    const deadline = Date.now() + this.deps.options.a2aWaitMs;
    let task = record(result);
    // A task still working after the receiver's blocking wait: asked again until it ends or asks for input.
    for (
      let pause = 500;
      'status' in task && !FINAL.has(stateName(task)) && Date.now() < deadline;
      pause = Math.min(pause * 2, 5_000)
    ) {
      await this.sleep(pause);
      if (this.closed) return new Promise(() => {});
      try {
        task = record(await client.getTask({ tenant: '', id: String(task.id) } as never));
      } catch (error) {
        throw asTryFailed(error);
      }
    }
    await this.deliverReply(envelope, target.cardUrl, receiverDid, messageId, task);
    return { statusCode: 200 };
  }

  /** The answer into the sender's inbox: one row per remote task and state (a retry stores nothing twice). */
  private async deliverReply(
    envelope: OutboundEnvelope,
    cardUrl: string,
    did: string | undefined,
    messageId: string,
    answer: Record<string, unknown>,
  ): Promise<void> {
    const isTask = 'status' in answer;
    const state = isTask ? stateName(answer) : 'MESSAGE';
    if (isTask && !FINAL.has(state))
      throw new TryFailed(`the task was still ${state} after ${this.deps.options.a2aWaitMs} ms`, 200, false);
    const status = record(answer.status);
    const artifacts = Array.isArray(answer.artifacts) ? (answer.artifacts as unknown[]).map(record) : [];
    const reply =
      partsText(isTask ? record(status.message).parts : answer.parts) ||
      artifacts
        .map((artifact) => partsText(artifact.parts))
        .filter(Boolean)
        .join('\n');
    const taskId = isTask ? String(answer.id) : undefined;
    await this.deps.inbox.deliver(envelope.agentId, {
      source: 'a2a',
      sender: did ?? cardUrl,
      text: reply || `(the remote task ended ${state} without text)`,
      data: {
        a2a: {
          card_url: cardUrl,
          task_id: taskId ?? null,
          context_id: String(answer.contextId ?? '') || null,
          state,
          signed: did !== undefined,
          message_id: messageId,
          outbox_id: envelope.messageId,
        },
      },
      externalId: `${taskId ?? messageId}:${state}:${String(status.timestamp ?? '')}`.slice(0, 200),
    });
  }

  private sleep(ms: number): Promise<void> {
    return this.naps.sleep(ms);
  }

  /**
   * Ends every wait; deliveries in progress stop without settling (their rows stay `pending` and resume at the next
   * load).
   */
  close(): void {
    this.closed = true;
    this.naps.wakeAll();
  }
}

function stateName(task: Record<string, unknown>): string {
  const state = record(task.status).state;
  return typeof state === 'number' ? (STATE_NAMES[state] ?? 'UNKNOWN') : String(state ?? 'UNKNOWN');
}

function partsText(parts: unknown): string {
  return (Array.isArray(parts) ? parts : [])
    .map((part) => record(record(part).content))
    .filter((content) => content.$case === 'text')
    .map((content) => String(content.value))
    .join('\n');
}

/** An SDK client error: a JSON-RPC error is the receiver's refusal (not retried); anything else is retried. */
function asTryFailed(error: unknown): TryFailed {
  if (error instanceof TryFailed) return error;
  const message = (error as Error).message ?? String(error);
  const status = /\bStatus: (\d{3})\b|: (\d{3}) /.exec(message);
  const code = status ? Number(status[1] ?? status[2]) : null;
  if (code !== null) return new TryFailed(message.slice(0, 300), code, code >= 500 || RETRY_STATUSES.has(code));
  const jsonRpc = typeof (error as { code?: unknown }).code === 'number' || /JSON-RPC|Code: -3/.test(message);
  return new TryFailed(message.slice(0, 300), null, !jsonRpc);
}
