/**
 * The {@link ModelClient} for one provider target: spacing (`requestDelayMs`), one guarded attempt at a
 * time, classification of failures, retries with exponential backoff and jitter that honour
 * `Retry-After`, usage and cost. Retries happen only before a stream starts (a 429/5xx status or a
 * connection failure): once deltas flowed, a retry would repeat text the caller already received.
 */
import type { Logger } from '@agt/contracts';
import type { ModelClient, ModelRequest, ModelResponse } from '@agt/contracts';
import type { WireAdapter, WireResult } from './adapter.js';
import { anthropicMessages } from './anthropic-wire.js';
import { abortableSleep, CallGuard } from './call-guard.js';
import { classify, type Failure } from './errors.js';
import { embedder } from './embeddings-wire.js';
import { chatCompletions } from './openai-wire.js';
import type { ResolvedOptions } from './options.js';
import { retryDelay } from './retry.js';
import { priceCall } from './pricing.js';
import type { SpacingGates } from './spacing.js';
import type { ProviderKind, ProviderTarget } from './types.js';

export const ADAPTERS: Record<ProviderKind, WireAdapter> = {
  anthropic: anthropicMessages,
  openai: chatCompletions,
  'openai-compatible': chatCompletions,
  openrouter: chatCompletions,
};

/** What every client of the extension shares: options, gates, the set of running attempts. */
export interface ClientRuntime {
  options: ResolvedOptions;
  gates: SpacingGates;
  logger: Logger;
  /** Guards of running attempts, aborted with reason `stopped` when the extension stops. */
  inflight: Set<CallGuard>;
  /** Aborted when the extension stops: also ends backoff and spacing waits. */
  stopSignal: AbortSignal;
}

export { retryDelay } from './retry.js';

export function createModelClient(target: ProviderTarget, runtime: ClientRuntime): ModelClient {
  const adapter = ADAPTERS[target.type];
  return {
    // Anthropic has no embeddings endpoint; every other kind speaks OpenAI's.
    ...(target.type === 'anthropic' ? {} : { embed: embedder(target, runtime) }),
    async complete(request: ModelRequest): Promise<ModelResponse> {
      const body = adapter.buildBody(request, target, runtime.options);
      const stream = typeof request.onDelta === 'function';
      const onDelta = (text: string) => {
        try {
          request.onDelta?.(text);
        } catch (error) {
          runtime.logger.warn({ err: error, provider: target.id }, 'onDelta listener threw; ignored');
        }
      };
      // What ends spacing and backoff waits; built only when a call has to wait (most never do: an
      // `AbortSignal.any` per call was ~1% of a turn's CPU).
      let anySignal: AbortSignal | undefined;
      const waitSignal = () => (anySignal ??= AbortSignal.any([request.signal, runtime.stopSignal]));
      for (let attempt = 0; ; attempt++) {
        const outcome = await attemptOnce(target, runtime, {
          body,
          stream,
          onDelta,
          signal: request.signal,
          waitSignal,
        });
        if (outcome.ok) {
          const { result } = outcome;
          return {
            text: result.text,
            toolCalls: result.toolCalls,
            stopReason: result.stopReason,
            usage: result.usage,
            cost: priceCall(target.type, result.model, result.usage, result.reportedCost, runtime.options.prices),
            provider: target.id,
            model: result.model,
            ...(result.responseId ? { responseId: result.responseId } : {}),
            ...(result.reasoning ? { reasoning: result.reasoning } : {}),
          };
        }
        const { failure } = outcome;
        const delay =
          failure.retryable && attempt < target.maxRetries ? retryDelay(attempt, failure, runtime.options) : null;
        if (delay === null) throw failure.error;
        const status = failure.error.details?.upstreamStatus ?? null;
        runtime.logger.warn(
          { provider: target.id, status, attempt: attempt + 1, delayMs: delay },
          'model call failed; retrying',
        );
        try {
          await abortableSleep(delay, waitSignal());
        } catch {
          throw classify(null, request.signal.aborted ? 'cancelled' : 'stopped', target).error;
        }
      }
    },
  };
}

interface AttemptInput {
  body: Record<string, unknown>;
  stream: boolean;
  onDelta: (text: string) => void;
  signal: AbortSignal;
  waitSignal: () => AbortSignal;
}

type Outcome = { ok: true; result: WireResult } | { ok: false; failure: Failure };

async function attemptOnce(target: ProviderTarget, runtime: ClientRuntime, input: AttemptInput): Promise<Outcome> {
  try {
    if (target.requestDelayMs > 0) await runtime.gates.wait(target.gateKey, target.requestDelayMs, input.waitSignal());
  } catch {
    return { ok: false, failure: classify(null, input.signal.aborted ? 'cancelled' : 'stopped', target) };
  }
  // JSON calls send nothing until the whole answer is ready: only the total timeout applies to them.
  const guard = new CallGuard(input.signal, {
    timeoutMs: target.timeoutMs,
    idleTimeoutMs: input.stream ? target.idleTimeoutMs : 0,
  });
  runtime.inflight.add(guard);
  if (runtime.stopSignal.aborted) guard.abort('stopped');
  try {
    const result = await ADAPTERS[target.type].send({
      target,
      body: input.body,
      stream: input.stream,
      guard,
      onDelta: input.onDelta,
    });
    return { ok: true, result };
  } catch (error) {
    return { ok: false, failure: classify(error, guard.reason, target) };
  } finally {
    guard.dispose();
    runtime.inflight.delete(guard);
  }
}
