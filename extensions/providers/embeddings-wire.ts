/**
 * Embeddings over OpenAI's wire format (`POST {baseUrl}/embeddings`; OpenAI, OpenRouter, Ollama,
 * llama.cpp, vLLM and other compatible servers): the kernel's memory asks for them through
 * `ModelClient.embed`. Anthropic has no embeddings endpoint, so its clients have no `embed`.
 *
 * One guarded attempt at a time, the same spacing, retries and error classes as chat calls
 * (model-client.ts). An answer whose vectors do not match the inputs in number is an `upstream_error`.
 */
import type { EmbeddingRequest, EmbeddingResponse } from '@agt/contracts';
import { num } from './adapter.js';
import { abortableSleep, CallGuard } from './call-guard.js';
import { classify, upstreamError } from './errors.js';
import type { ResolvedOptions } from './options.js';
import { retryDelay } from './retry.js';
import type { ProviderTarget } from './types.js';
import type { SpacingGates } from './spacing.js';
import { postJson } from './wire-http.js';

/** What embedding calls share with chat calls (model-client.ts's `ClientRuntime`). */
interface EmbedRuntime {
  options: ResolvedOptions;
  gates: SpacingGates;
  inflight: Set<CallGuard>;
  stopSignal: AbortSignal;
}

interface EmbeddingsAnswer {
  data?: Array<{ index?: number; embedding?: unknown }>;
  model?: string;
  usage?: { prompt_tokens?: number; total_tokens?: number };
}

function vectorsOf(target: ProviderTarget, answer: EmbeddingsAnswer, count: number): number[][] {
  const data = Array.isArray(answer?.data) ? answer.data : [];
  if (data.length !== count)
    throw upstreamError(target, `provider ${target.id} answered ${data.length} embeddings for ${count} inputs`, 200);
  const ordered = [...data].sort((a, b) => num(a.index) - num(b.index));
  return ordered.map((item) => {
    const vector = item.embedding;
    if (
      !Array.isArray(vector) ||
      vector.length === 0 ||
      !vector.every((x) => typeof x === 'number' && Number.isFinite(x))
    ) {
      throw upstreamError(
        target,
        `provider ${target.id} answered an embedding that is not a list of numbers (base64 is not asked for)`,
        200,
      );
    }
    return vector as number[];
  });
}

/** `embed` for one OpenAI-format provider target. */
export function embedder(target: ProviderTarget, runtime: EmbedRuntime) {
  return async (request: EmbeddingRequest): Promise<EmbeddingResponse> => {
    const body: Record<string, unknown> = {
      model: request.model || target.defaultModel,
      input: request.input,
      encoding_format: 'float',
    };
    if (request.dimensions !== undefined) body.dimensions = request.dimensions;
    const url = `${target.baseUrl.replace(/\/+$/, '')}/embeddings`;
    const headers: Record<string, string> = target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {};
    for (let attempt = 0; ; attempt++) {
      if (target.requestDelayMs > 0)
        await runtime.gates.wait(
          target.gateKey,
          target.requestDelayMs,
          AbortSignal.any([request.signal, runtime.stopSignal]),
        );
      const guard = new CallGuard(request.signal, { timeoutMs: target.timeoutMs, idleTimeoutMs: 0 });
      runtime.inflight.add(guard);
      if (runtime.stopSignal.aborted) guard.abort('stopped');
      let failure: ReturnType<typeof classify>;
      try {
        const answer = (await postJson({
          url,
          headers,
          body,
          guard,
          errorOf: (parsed) => (parsed as { error?: unknown } | null)?.error,
        })) as EmbeddingsAnswer;
        const usage = answer?.usage ?? {};
        return {
          vectors: vectorsOf(target, answer, request.input.length),
          inputTokens: num(usage.prompt_tokens ?? usage.total_tokens),
          model: answer?.model || String(body.model),
        };
      } catch (error) {
        if ((error as { code?: unknown })?.code === 'upstream_error') throw error;
        failure = classify(error, guard.reason, target);
      } finally {
        guard.dispose();
        runtime.inflight.delete(guard);
      }
      const delay =
        failure.retryable && attempt < target.maxRetries ? retryDelay(attempt, failure, runtime.options) : null;
      if (delay === null) throw failure.error;
      try {
        await abortableSleep(delay, AbortSignal.any([request.signal, runtime.stopSignal]));
      } catch {
        throw classify(null, request.signal.aborted ? 'cancelled' : 'stopped', target).error;
      }
    }
  };
}
