/**
 * Provider administration calls behind the routes: list a provider's models (`GET {baseUrl}/models`
 * for Chat Completions kinds, `GET {baseUrl}/v1/models` for Anthropic) and check a provider with a real
 * call. No retries here: a check reports what the provider answers right now, within `checkTimeoutMs`.
 * Over the same transport as model calls (wire-http.ts), with the same headers and error kinds.
 */
import type { AgtError } from '@agt/contracts';
import { anthropicRequest } from './anthropic-wire.js';
import { CallGuard } from './call-guard.js';
import { classify } from './errors.js';
import { createModelClient, type ClientRuntime } from './model-client.js';
import { openaiRequest } from './openai-wire.js';
import type { CheckResult } from './registry.js';
import type { ProviderTarget } from './types.js';
import { postJson } from './wire-http.js';

export interface ModelInfo {
  id: string;
  name?: string;
  ownedBy?: string;
  created?: number;
}

const MAX_MODELS = 1000;

/** The entries of a models page (`{data: [...]}` for both vendors) that carry an id; none when it has no list. */
function modelsOf(page: unknown): Array<Record<string, unknown>> {
  const data = (page as { data?: unknown } | null)?.data;
  return Array.isArray(data) ? data.filter((m): m is Record<string, unknown> => typeof m?.id === 'string') : [];
}

export async function listModels(target: ProviderTarget, runtime: ClientRuntime): Promise<ModelInfo[]> {
  const limits = { timeoutMs: runtime.options.checkTimeoutMs, idleTimeoutMs: 0 };
  const guard = new CallGuard(runtime.stopSignal, limits);
  runtime.inflight.add(guard);
  try {
    if (target.type === 'anthropic') {
      // One page of up to MAX_MODELS (the API's largest), newest first.
      const page = await postJson(anthropicRequest(target, `/v1/models?limit=${MAX_MODELS}`, guard));
      return modelsOf(page).map((m) => ({
        id: String(m.id),
        ...(typeof m.display_name === 'string' ? { name: m.display_name } : {}),
        ...(typeof m.created_at === 'string' && Date.parse(m.created_at) ? { created: Date.parse(m.created_at) } : {}),
      }));
    }
    const page = await postJson(openaiRequest(target, '/models', guard));
    return modelsOf(page)
      .slice(0, MAX_MODELS)
      .map((m) => ({
        id: String(m.id),
        ...(typeof m.owned_by === 'string' && m.owned_by ? { ownedBy: m.owned_by } : {}),
        ...(typeof m.created === 'number' ? { created: m.created * 1000 } : {}),
      }));
  } catch (error) {
    const reason = guard.reason === 'cancelled' ? 'stopped' : guard.reason;
    throw classify(error, reason, { ...target, timeoutMs: limits.timeoutMs }).error;
  } finally {
    guard.dispose();
    runtime.inflight.delete(guard);
  }
}

const statusOf = (error: AgtError): number | null => {
  const status = error.details?.upstreamStatus;
  return typeof status === 'number' ? status : null;
};

/**
 * A real call: the models list; where the server has none (404/405) and a `defaultModel` is known, a
 * one-token completion instead. Never throws: the outcome is the result.
 */
export async function checkProvider(target: ProviderTarget, runtime: ClientRuntime): Promise<CheckResult> {
  const started = performance.now();
  const done = (result: Omit<CheckResult, 'latencyMs' | 'checkedAt'>): CheckResult => ({
    ...result,
    latencyMs: Math.round(performance.now() - started),
    checkedAt: Date.now(),
  });
  try {
    await listModels(target, runtime);
    return done({ ok: true, status: 200, method: 'models' });
  } catch (error) {
    const failure = error as AgtError;
    const status = statusOf(failure);
    if (!((status === 404 || status === 405) && target.defaultModel)) {
      return done({ ok: false, status, method: 'models', error: failure.message });
    }
  }
  const quick: ProviderTarget = {
    ...target,
    maxRetries: 0,
    requestDelayMs: 0,
    timeoutMs: runtime.options.checkTimeoutMs,
  };
  try {
    await createModelClient(quick, runtime).complete({
      agentId: '',
      model: { provider: target.id, model_id: target.defaultModel!, max_tokens: 1 },
      system: '',
      messages: [{ role: 'user', content: 'ping' }],
      tools: [],
      signal: runtime.stopSignal,
    });
    return done({ ok: true, status: 200, method: 'completion' });
  } catch (error) {
    const failure = error as AgtError;
    return done({ ok: false, status: statusOf(failure), method: 'completion', error: failure.message });
  }
}
