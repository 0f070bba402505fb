/**
 * What one wire format (Chat Completions, Anthropic Messages) must provide to the model client:
 * a pure body builder, and `send`, one attempt over an SDK, streaming or JSON.
 */
import type { UsageCounts } from '@agt/contracts';
import type { ModelRequest, ReasoningBlock, StopReason, ToolCall } from '@agt/contracts';
import type { CallGuard } from './call-guard.js';
import { upstreamError } from './errors.js';
import type { ResolvedOptions } from './options.js';
import type { ProviderTarget } from './types.js';

export interface WireCall {
  target: ProviderTarget;
  body: Record<string, unknown>;
  /** Stream (SSE) when true, one JSON answer otherwise. */
  stream: boolean;
  guard: CallGuard;
  /** Never throws (wrapped by the client). */
  onDelta: (text: string) => void;
}

export interface WireResult {
  text: string;
  toolCalls: ToolCall[];
  stopReason: StopReason;
  usage: UsageCounts;
  /** A cost the vendor reported itself (OpenRouter), else null. */
  reportedCost: number | null;
  /** The model id the vendor says answered (falls back to the requested one). */
  model: string;
  /** The vendor's id of this completion (`chatcmpl-…`, `msg_…`), when it sent one. */
  responseId?: string;
  reasoning?: ReasoningBlock[];
}

export interface WireAdapter {
  /** The request body without the transport flags. Pure; may throw `bad_request`. */
  buildBody(request: ModelRequest, target: ProviderTarget, options: ResolvedOptions): Record<string, unknown>;
  /** One attempt. Rejects with whatever failed; the client classifies it. */
  send(call: WireCall): Promise<WireResult>;
}

/** Tool-call arguments: JSON object text (empty means `{}`); anything else is an `upstream_error`. */
export function parseArgs(target: ProviderTarget, name: string, text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw upstreamError(
      target,
      `provider ${target.id} sent tool call ${name} with arguments that are not valid JSON`,
      200,
      { tool: name },
    );
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw upstreamError(
      target,
      `provider ${target.id} sent tool call ${name} with arguments that are not a JSON object`,
      200,
      { tool: name },
    );
  }
  return value as Record<string, unknown>;
}

/** After an SDK stream ends: it ends silently when our guard aborted it, so surface the guard's reason. */
export function throwIfGuardFired(guard: CallGuard): void {
  if (guard.reason) throw new Error(`model call ${guard.reason}`);
}

export const ZERO_USAGE: UsageCounts = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };

export const num = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
