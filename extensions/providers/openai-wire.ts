/**
 * Chat Completions (`openai`, `openai-compatible`, `openrouter`): the contract's messages and tools
 * to the wire format, and answers (JSON or an SSE stream of chunks) back to a {@link WireResult}.
 *
 * Mapping: `max_tokens` is sent as `max_completion_tokens` to OpenAI itself (its reasoning models
 * refuse `max_tokens`) and as `max_tokens` elsewhere; `reasoning` becomes `reasoning_effort`, or
 * OpenRouter's `reasoning: {effort | max_tokens}`. OpenRouter is asked for `usage: {include: true}` so
 * it reports its cost. Streams ask for `stream_options.include_usage` (the usage arrives in a last
 * chunk with no choices).
 *
 * The call itself goes through wire-http.ts (node:http, no SDK); the SDK's types still describe the wire.
 */
import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { ModelMessage, ModelRequest, StopReason, ToolCall } from '@agt/contracts';
import { num, parseArgs, throwIfGuardFired, type WireAdapter, type WireCall, type WireResult } from './adapter.js';
import { upstreamError } from './errors.js';
import { applyParams, compact, effortOf, readReasoning } from './params.js';
import type { ProviderTarget } from './types.js';
import { postEvents, postJson, WireStreamError, type WirePost } from './wire-http.js';

export function toOpenAIMessages(system: string, messages: ModelMessage[]): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  if (system) out.push({ role: 'system', content: system });
  // Chat Completions takes images only in user messages: a round's tool images follow its tool results.
  let pendingImages: Array<Record<string, unknown>> = [];
  const flushImages = () => {
    if (pendingImages.length === 0) return;
    out.push({
      role: 'user',
      content: [{ type: 'text', text: 'Images returned by the tool calls above:' }, ...pendingImages],
    });
    pendingImages = [];
  };
  for (const message of messages) {
    if (message.role !== 'tool') flushImages();
    if (message.role === 'user') out.push({ role: 'user', content: message.content });
    else if (message.role === 'assistant') {
      const calls = message.toolCalls ?? [];
      const wire: Record<string, unknown> = {
        role: 'assistant',
        content: message.content || (calls.length ? null : ''),
      };
      if (calls.length) {
        wire.tool_calls = calls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) },
        }));
      }
      out.push(wire);
    } else {
      // Chat Completions has no error flag on tool results: say it in the text.
      out.push({
        role: 'tool',
        tool_call_id: message.toolCallId,
        content: message.isError ? `Error: ${message.content}` : message.content,
      });
      for (const image of message.images ?? [])
        pendingImages.push({ type: 'image_url', image_url: { url: `data:${image.mimeType};base64,${image.data}` } });
    }
  }
  flushImages();
  return out;
}

function buildBody(request: ModelRequest, target: ProviderTarget): Record<string, unknown> {
  const { model } = request;
  const body = compact({
    model: model.model_id || target.defaultModel,
    messages: toOpenAIMessages(request.system, request.messages),
    tools: request.tools.length
      ? request.tools.map((tool) => ({
          type: 'function',
          function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
        }))
      : undefined,
    temperature: model.temperature,
    top_p: model.top_p,
    [target.type === 'openai' ? 'max_completion_tokens' : 'max_tokens']: model.max_tokens,
  });
  const intent = readReasoning(model.reasoning);
  if (intent && target.type === 'openrouter') {
    body.reasoning =
      intent.budgetTokens && !intent.effort ? { max_tokens: intent.budgetTokens } : { effort: effortOf(intent) };
  } else if (intent) body.reasoning_effort = effortOf(intent);
  if (target.type === 'openrouter') body.usage = { include: true };
  return applyParams(body, target.params, model.params, model.provider_params);
}

export function mapFinish(reason: string | null | undefined, hasToolCalls: boolean): StopReason {
  if (hasToolCalls || reason === 'tool_calls' || reason === 'function_call') return hasToolCalls ? 'tool_use' : 'other';
  if (reason === 'stop') return 'end';
  if (reason === 'length') return 'max_tokens';
  return 'other';
}

/** OpenAI's `prompt_tokens` already include cached ones; OpenRouter adds `cache_write_tokens` and `cost`. */
export function usageOf(usage: Record<string, any> | null | undefined) {
  const details = usage?.prompt_tokens_details ?? {};
  return {
    usage: {
      input: num(usage?.prompt_tokens),
      output: num(usage?.completion_tokens),
      cacheRead: num(details.cached_tokens ?? usage?.prompt_cache_hit_tokens),
      cacheWrite: num(details.cache_write_tokens),
    },
    reportedCost: typeof usage?.cost === 'number' ? usage.cost : null,
  };
}

/** Assembles a streamed answer: text deltas, tool calls from fragments keyed by `index`, finish, usage. */
export class ChatStreamState {
  text = '';
  finish: string | null = null;
  usage: Record<string, any> | null = null;
  model: string | undefined;
  id: string | undefined;
  private readonly calls = new Map<number, { id: string; name: string; args: string }>();
  private lastIndex = -1;

  add(chunk: ChatCompletionChunk, onDelta: (text: string) => void): void {
    if (chunk.model) this.model = chunk.model;
    if (chunk.id) this.id ??= chunk.id;
    if (chunk.usage) this.usage = chunk.usage as Record<string, any>;
    const choice = chunk.choices?.[0];
    if (!choice) return;
    const delta = choice.delta ?? {};
    if (typeof delta.content === 'string' && delta.content) {
      this.text += delta.content;
      onDelta(delta.content);
    }
    for (const fragment of delta.tool_calls ?? []) {
      // Some compatible servers omit `index`; a new id then starts a new call.
      let index = typeof fragment.index === 'number' ? fragment.index : this.lastIndex;
      if (
        typeof fragment.index !== 'number' &&
        (index < 0 || (fragment.id && this.calls.get(index)?.id !== fragment.id))
      )
        index = this.calls.size;
      this.lastIndex = index;
      const call = this.calls.get(index) ?? { id: '', name: '', args: '' };
      this.calls.set(index, call);
      if (fragment.id) call.id = fragment.id;
      const name = fragment.function?.name;
      if (name && call.name !== name) call.name += name;
      if (fragment.function?.arguments) call.args += fragment.function.arguments;
    }
    if (choice.finish_reason) this.finish = choice.finish_reason;
  }

  toolCalls(target: ProviderTarget): ToolCall[] {
    return [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, call]) => ({
        id: call.id || `call_${index}`,
        name: call.name,
        args: parseArgs(target, call.name, call.args),
      }));
  }
}

/**
 * A request to a Chat Completions server (`path` under its base URL; no body: a `GET`). `Authorization`
 * is sent only when a key is set (a local server has none).
 */
export function openaiRequest(
  target: ProviderTarget,
  path: string,
  guard: WireCall['guard'],
  body?: Record<string, unknown>,
): WirePost {
  return {
    url: `${target.baseUrl.replace(/\/+$/, '')}${path}`,
    headers: target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {},
    body,
    guard,
    // As the OpenAI SDK hands it over: `APIError.error` is the body's `error` object.
    errorOf: (parsed) => (parsed as { error?: unknown } | null)?.error,
  };
}

const post = (target: ProviderTarget, body: Record<string, unknown>, guard: WireCall['guard']) =>
  openaiRequest(target, '/chat/completions', guard, body);

async function send({ target, body, stream, guard, onDelta }: WireCall): Promise<WireResult> {
  const requested = String(body.model ?? '');
  if (!stream) {
    const completion = (await postJson(post(target, body, guard))) as ChatCompletion;
    throwIfGuardFired(guard);
    const choice = completion?.choices?.[0];
    if (!choice) throw upstreamError(target, `provider ${target.id} answered without any choice`, 200);
    const text = choice.message?.content ?? '';
    const toolCalls = (choice.message?.tool_calls ?? []).map((call, index) => {
      const fn = (call as { function?: { name?: string; arguments?: string } }).function ?? {};
      return {
        id: call.id || `call_${index}`,
        name: fn.name ?? '',
        args: parseArgs(target, fn.name ?? '', fn.arguments ?? ''),
      };
    });
    return {
      text,
      toolCalls,
      stopReason: mapFinish(choice.finish_reason, toolCalls.length > 0),
      ...usageOf(completion.usage as Record<string, any>),
      model: completion.model || requested,
      ...(completion.id ? { responseId: completion.id } : {}),
    };
  }
  const state = new ChatStreamState();
  let done = false;
  await postEvents(
    post(target, { ...body, stream: true, stream_options: { include_usage: true } }, guard),
    (event, data) => {
      // As the OpenAI SDK reads the stream: `[DONE]` ends it, every other event is a JSON chunk, and a
      // chunk carrying `error` is the vendor failing mid-stream (Assistants' `thread.*` events never come here).
      if (done || event?.startsWith('thread.')) return;
      if (data.startsWith('[DONE]')) {
        done = true;
        return;
      }
      const chunk = JSON.parse(data) as ChatCompletionChunk & { error?: unknown };
      if (chunk?.error) throw new WireStreamError(chunk.error);
      state.add(chunk, onDelta);
    },
  );
  throwIfGuardFired(guard);
  if (state.finish === null) {
    throw upstreamError(
      target,
      `provider ${target.id} ended the stream before a finish_reason (truncated stream)`,
      200,
    );
  }
  const toolCalls = state.toolCalls(target);
  return {
    text: state.text,
    toolCalls,
    stopReason: mapFinish(state.finish, toolCalls.length > 0),
    ...usageOf(state.usage),
    model: state.model || requested,
    ...(state.id ? { responseId: state.id } : {}),
  };
}

export const chatCompletions: WireAdapter = { buildBody, send };
