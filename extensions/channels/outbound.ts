/**
 * The channels' outbound transport (`contracts/points.ts`): an outbox row addressed `<type>:<chat id>`
 * goes out through the sending agent's adapter of that type, cut to the platform's text limit, each
 * chunk retried with backoff while the adapter reconnects or the network fails, after the platform's
 * own wait when it answers with a rate limit, and not at all when it refuses for good.
 */
import type { OutboundEnvelope } from '@agt/contracts';
import { AdapterSendError, type AdapterOutbound } from './adapter.js';
import { backoffDelay, sleep } from './backoff.js';
import type { AdapterInstance } from './instance.js';
import { splitText } from './text-split.js';

export interface ThreadIds {
  threadId?: string;
  replyToId?: string;
  /** The replied-to message's chat address (`telegram:<chat id>`): used when the envelope names none. */
  chat?: string;
}

export interface OutboundDeps {
  types(): string[];
  instance(agentId: string, type: string): AdapterInstance | undefined;
  /** Thread and reply ids of the message answered (the parent inbox row, or ids the agent passed in `data`). */
  threadOf(envelope: OutboundEnvelope): Promise<ThreadIds>;
  sendAttempts: number;
  retryBaseMs: number;
  retryMaxMs: number;
  maxRetryAfterMs: number;
  /** Aborted when the extension stops: waiting sends reject at once. */
  signal: AbortSignal;
}

/** How the kernel's outbox learns of each failed try (present in kernels that count attempts). */
interface Report {
  attemptFailed?(statusCode: number | null, error: string): void;
}

class DeliveryError extends Error {
  constructor(
    message: string,
    readonly statusCode?: number,
  ) {
    super(message);
  }
}

const text = (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 300);

export function channelsTransport(deps: OutboundDeps) {
  return {
    get schemes(): readonly string[] {
      return deps.types().map((type) => `${type}:`);
    },
    async send(envelope: OutboundEnvelope, report?: Report): Promise<{ statusCode?: number } | void> {
      const colon = envelope.address.indexOf(':');
      const type = envelope.address.slice(0, colon).toLowerCase();
      const instance = deps.instance(envelope.agentId, type);
      if (!instance) throw new DeliveryError(`the agent has no enabled ${type} adapter`);
      const thread = await deps.threadOf(envelope);
      let chatId = envelope.address.slice(colon + 1);
      if (chatId === '' && thread.chat?.toLowerCase().startsWith(`${type}:`))
        chatId = thread.chat.slice(type.length + 1);
      if (chatId === '')
        throw new DeliveryError(
          `no chat id in "${envelope.address}" (use ${type}:<chat id>, or data.parent_id of the inbox message answered)`,
        );
      const chunks = splitText(envelope.text, instance.kind.limits.maxTextLength);
      for (const [chunk, part] of chunks.entries()) {
        await sendChunk(deps, instance, report, {
          chatId,
          text: part,
          outboxId: envelope.messageId,
          chunk,
          ...(thread.threadId ? { threadId: thread.threadId } : {}),
          ...(chunk === 0 && thread.replyToId ? { replyToId: thread.replyToId } : {}),
        });
      }
    },
  };
}

async function sendChunk(
  deps: OutboundDeps,
  instance: AdapterInstance,
  report: Report | undefined,
  message: AdapterOutbound,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    if (deps.signal.aborted || instance.stopped)
      throw new DeliveryError(`the ${instance.type} adapter stopped before the message went out`);
    const adapter = instance.connectedAdapter();
    let failure: { wait: number; error: string; statusCode: number | null };
    if (!adapter) {
      failure = {
        wait: -1,
        error: `the ${instance.type} adapter is ${instance.status}${instance.error ? ` (${instance.error})` : ''}`,
        statusCode: null,
      };
    } else {
      try {
        await adapter.send(message);
        return;
      } catch (error) {
        if (error instanceof AdapterSendError) {
          if (error.permanent)
            throw new DeliveryError(`${instance.type} refused the message: ${text(error)}`, error.statusCode);
          if (error.retryAfterMs !== undefined && error.retryAfterMs > deps.maxRetryAfterMs) {
            throw new DeliveryError(
              `${instance.type} asked to wait ${Math.ceil(error.retryAfterMs / 1000)} s (rate limit), longer than allowed`,
              error.statusCode,
            );
          }
          failure = { wait: error.retryAfterMs ?? -1, error: text(error), statusCode: error.statusCode ?? null };
        } else failure = { wait: -1, error: text(error), statusCode: null };
      }
    }
    if (attempt >= deps.sendAttempts)
      throw new DeliveryError(`gave up after ${attempt} tries: ${failure.error}`, failure.statusCode ?? undefined);
    report?.attemptFailed?.(failure.statusCode, failure.error);
    const wait = failure.wait >= 0 ? failure.wait : backoffDelay(attempt - 1, deps.retryBaseMs, deps.retryMaxMs);
    if (!adapter) await Promise.race([instance.whenChanged(wait), sleep(wait, deps.signal)]).catch(() => undefined);
    else await sleep(wait, deps.signal).catch(() => undefined);
  }
}
