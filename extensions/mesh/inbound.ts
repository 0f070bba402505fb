/**
 * Accepting one envelope for one agent, the same way for `POST /agents/{handle}/inbox` and for
 * in-process delivery between agents of this daemon: recipient, block and allow lists (DIDs), the
 * signature against the sender DID's key (unsigned only where the agent allows it), the per-sender
 * and whole-inbox rate limits, then one `agt_inbox` row per envelope id (a replay is answered, not stored again) and
 * the agent's `on_inbox` trigger (the kernel runs it).
 */
import type { AgentsService, InboxService } from '@agt/contracts';
import type { MeshAgent } from './directory.js';
import { checkSignature, type Envelope } from './envelope.js';
import {
  agentOff,
  badSender,
  staleMessage,
  badSignature,
  outOfScope,
  rateLimited,
  senderBlocked,
  unsigned,
  wrongRecipient,
} from './errors.js';
import { isEd25519Did } from '@agt/contracts';
import { assertJsonDepth } from '@agt/contracts';
import type { RateLimiter } from './rate-limit.js';
import { inScope, visibilityOf, type Scope } from './scope.js';

export interface InboundDeps {
  agents: AgentsService;
  inbox: InboxService;
  limiter: RateLimiter;
  /** Told the sender DID and its `reply_to` of every envelope that verified (the outbound directory). */
  learn?(did: string, replyTo: string | undefined): void;
}

const didList = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];

/** Visibility of `agent` for a requester of `scope`: 503 `off`, 403 out of scope. */
export function checkVisible(agent: MeshAgent, scope: Scope): void {
  const visibility = visibilityOf(agent.view);
  if (visibility === 'off') throw agentOff(agent.handle);
  if (!inScope(visibility, scope)) throw outOfScope(scope, visibility);
}

export interface Accepted {
  messageId: string;
  inboxId: number;
  duplicate: boolean;
}

/**
 * How far a signed `timestamp` may lie in the past or future. Senders sign every try afresh, so only a
 * captured copy grows old; with the per-id rows this bounds replays even after an inbox is cleared.
 */
export const MAX_MESSAGE_AGE_MS = 60 * 60 * 1000;
export const MAX_CLOCK_SKEW_MS = 10 * 60 * 1000;

/**
 * The limiter key of `did` writing to agent `agentId`; its group (the agent's whole inbox) is {@link inboxOfSenderKey}.
 */
export const senderKey = (did: string, agentId: string) => `${did}\n${agentId}`;
export const inboxOfSenderKey = (key: string) => key.slice(key.lastIndexOf('\n') + 1);

export async function acceptEnvelope(deps: InboundDeps, agent: MeshAgent, envelope: Envelope): Promise<Accepted> {
  // Before anything walks it (the signature's canonical JSON, the inbox row): also for in-process delivery.
  assertJsonDepth(envelope, 'envelope');
  if (!agent.did || envelope.to !== agent.did) throw wrongRecipient();
  const at = Date.parse(envelope.timestamp);
  const now = Date.now();
  if (!Number.isFinite(at) || at < now - MAX_MESSAGE_AGE_MS || at > now + MAX_CLOCK_SKEW_MS) throw staleMessage();
  if (!isEd25519Did(envelope.from)) throw badSender();
  const messaging = (agent.view.config.messaging ?? {}) as Record<string, unknown>;
  if (didList(messaging.block_list).includes(envelope.from)) throw senderBlocked(envelope.from);
  const allow = didList(messaging.allow_list);
  if (allow.length > 0 && !allow.includes(envelope.from)) throw senderBlocked(envelope.from);
  const check = checkSignature(envelope);
  if (check === 'invalid') throw badSignature();
  if (check === 'missing' && messaging.allow_unsigned !== true) throw unsigned();
  // Counted after the signature: a forger cannot spend a real sender's allowance (nor the inbox's).
  const wait = deps.limiter.take(senderKey(envelope.from, agent.view.id));
  if (wait > 0) throw rateLimited(wait);
  const { signature: _signature, ...data } = envelope;
  const delivered = await deps.inbox.deliver(agent.view.id, {
    source: 'mesh',
    sender: envelope.from,
    text: envelope.payload.content,
    data: { mesh: { ...data, signed: check === 'valid' } },
    externalId: envelope.id,
    ...traceOf(envelope),
  });
  if (check === 'valid') deps.learn?.(envelope.from, envelope.reply_to);
  return { messageId: envelope.id, inboxId: delivered.messageId, duplicate: delivered.duplicate === true };
}

/** The sender's trace context (`payload.traceparent`), handed to the kernel, which checks its form. */
function traceOf(envelope: Envelope): { traceparent?: string } {
  const value = (envelope.payload as Record<string, unknown>).traceparent;
  return typeof value === 'string' && value.length <= 100 ? { traceparent: value } : {};
}
