/**
 * Anthropic Messages (`POST {baseUrl}/v1/messages`): the contract's messages and tools to content
 * blocks, and answers (JSON or the SSE event stream) back to a {@link WireResult}.
 *
 * Mapping: tool results travel as `tool_result` blocks in a user message (consecutive ones merged, as
 * the API wants all results of one assistant turn together), with a tool's images as image blocks inside
 * its result; `max_tokens` is required, so the
 * manifest's `defaultMaxTokens` fills in; `reasoning` becomes `thinking: {type: 'enabled',
 * budget_tokens}`, with `max_tokens` raised above the budget and `temperature` dropped (the API refuses
 * both otherwise), and earlier thinking blocks are sent back with their assistant messages.
 *
 * The call itself goes through wire-http.ts (node:http, no SDK); the SDK's types (a devDependency, erased
 * at build) describe the wire.
 */
import type { Message, RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages';
import type { ModelMessage, ModelRequest, ReasoningBlock, StopReason, ToolCall } from '@agt/contracts';
import { num, parseArgs, throwIfGuardFired, type WireAdapter, type WireCall, type WireResult } from './adapter.js';
import { upstreamError } from './errors.js';
import type { ResolvedOptions } from './options.js';
import { applyParams, budgetOf, compact, readReasoning } from './params.js';
import type { ProviderTarget } from './types.js';
import { postEvents, postJson, WireStreamError, type WirePost } from './wire-http.js';

type Block = Record<string, unknown>;

export function toAnthropicMessages(
  messages: ModelMessage[],
  withReasoning: boolean,
): Array<{ role: string; content: Block[] }> {
  const out: Array<{ role: string; content: Block[] }> = [];
  const push = (role: 'user' | 'assistant', blocks: Block[]) => {
    if (!blocks.length) return;
    const last = out.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const message of messages) {
    if (message.role === 'user') push('user', message.content ? [{ type: 'text', text: message.content }] : []);
    else if (message.role === 'assistant') {
      push('assistant', [
        ...(withReasoning ? (message.reasoning ?? []) : []),
        ...(message.content ? [{ type: 'text', text: message.content }] : []),
        ...(message.toolCalls ?? []).map((call) => ({
          type: 'tool_use',
          id: call.id,
          name: call.name,
          input: call.args ?? {},
        })),
      ]);
    } else {
      // Images travel inside the tool result as image blocks after its text.
      const content = message.images?.length
        ? [
            { type: 'text', text: message.content },
            ...message.images.map((image) => ({
              type: 'image',
              source: { type: 'base64', media_type: image.mimeType, data: image.data },
            })),
          ]
        : message.content;
      push('user', [
        {
          type: 'tool_result',
          tool_use_id: message.toolCallId,
          content,
          ...(message.isError ? { is_error: true } : {}),
        },
      ]);
    }
  }
  return out;
}

function buildBody(request: ModelRequest, target: ProviderTarget, options: ResolvedOptions): Record<string, unknown> {
  const { model } = request;
  const intent = readReasoning(model.reasoning);
  let maxTokens = model.max_tokens ?? options.defaultMaxTokens;
  const body = compact({
    model: model.model_id || target.defaultModel,
    max_tokens: maxTokens,
    system: request.system || undefined,
    messages: toAnthropicMessages(request.messages, intent !== null),
    tools: request.tools.length
      ? request.tools.map((tool) => ({
          name: tool.name,
          description: tool.description,
          input_schema: { type: 'object', ...tool.inputSchema },
        }))
      : undefined,
    temperature: model.temperature,
    top_p: model.top_p,
  });
  if (intent) {
    const budget = budgetOf(intent);
    if (maxTokens <= budget) maxTokens += budget;
    body.max_tokens = maxTokens;
    body.thinking = { type: 'enabled', budget_tokens: budget };
    delete body.temperature;
  }
  return applyParams(body, target.params, model.params, model.provider_params);
}

export function mapStop(reason: string | null | undefined, hasToolCalls: boolean): StopReason {
  if (reason === 'tool_use' || (hasToolCalls && !reason)) return 'tool_use';
  if (reason === 'end_turn' || reason === 'stop_sequence') return 'end';
  if (reason === 'max_tokens') return 'max_tokens';
  return 'other';
}

/** Anthropic's `input_tokens` exclude cache reads and writes; the contract's `input` includes them. */
export function usageOf(raw: Record<string, unknown>) {
  const cacheRead = num(raw.cache_read_input_tokens);
  const cacheWrite = num(raw.cache_creation_input_tokens);
  return {
    input: num(raw.input_tokens) + cacheRead + cacheWrite,
    output: num(raw.output_tokens),
    cacheRead,
    cacheWrite,
  };
}

interface OpenBlock {
  type: string;
  text?: string;
  thinking?: string;
  signature?: string;
  data?: string;
  id?: string;
  name?: string;
  input?: unknown;
  json: string;
}

/** Assembles the event stream: blocks by index, deltas, usage from `message_start` and `message_delta`. */
export class MessageStreamState {
  readonly blocks: OpenBlock[] = [];
  readonly usage: Record<string, unknown> = {};
  stop: string | null = null;
  finished = false;
  model: string | undefined;
  id: string | undefined;

  add(event: RawMessageStreamEvent, onDelta: (text: string) => void): void {
    const e = event as { type: string; index?: number; [key: string]: any };
    switch (e.type) {
      case 'message_start':
        this.model = e.message?.model;
        this.id = e.message?.id;
        Object.assign(this.usage, e.message?.usage);
        break;
      case 'content_block_start':
        this.blocks[e.index!] = { ...e.content_block, json: '' };
        break;
      case 'content_block_delta': {
        const block = (this.blocks[e.index!] ??= { type: 'text', json: '' });
        const delta = e.delta ?? {};
        if (delta.type === 'text_delta' && delta.text) {
          block.text = (block.text ?? '') + delta.text;
          onDelta(delta.text);
        } else if (delta.type === 'input_json_delta') block.json += delta.partial_json ?? '';
        else if (delta.type === 'thinking_delta') block.thinking = (block.thinking ?? '') + (delta.thinking ?? '');
        else if (delta.type === 'signature_delta') block.signature = delta.signature;
        break;
      }
      case 'message_delta':
        this.stop = e.delta?.stop_reason ?? this.stop;
        for (const [key, value] of Object.entries(e.usage ?? {}))
          if (typeof value === 'number') this.usage[key] = value;
        break;
      case 'message_stop':
        this.finished = true;
        break;
    }
  }
}

/** Text, tool calls and reasoning out of finished content blocks (streamed or JSON). */
function fromBlocks(target: ProviderTarget, blocks: OpenBlock[]): Pick<WireResult, 'text' | 'toolCalls' | 'reasoning'> {
  const toolCalls: ToolCall[] = [];
  const reasoning: ReasoningBlock[] = [];
  let text = '';
  for (const block of blocks) {
    if (!block) continue;
    if (block.type === 'text') text += block.text ?? '';
    else if (block.type === 'tool_use') {
      const name = block.name ?? '';
      const args = block.json ? parseArgs(target, name, block.json) : ((block.input as Record<string, unknown>) ?? {});
      toolCalls.push({ id: block.id ?? `toolu_${toolCalls.length}`, name, args });
    } else if (block.type === 'thinking')
      reasoning.push({ type: 'thinking', thinking: block.thinking ?? '', signature: block.signature ?? '' });
    else if (block.type === 'redacted_thinking') reasoning.push({ type: 'redacted_thinking', data: block.data ?? '' });
  }
  return { text, toolCalls, ...(reasoning.length ? { reasoning } : {}) };
}

/** The API version every request names: the wire format this file speaks (docs/providers.md). */
export const ANTHROPIC_VERSION = '2023-06-01';

/**
 * A request to the Anthropic API (`path` under its base URL; no body: a `GET`): the key in `x-api-key`
 * (only when set) and `anthropic-version: 2023-06-01`.
 */
export function anthropicRequest(
  target: ProviderTarget,
  path: string,
  guard: WireCall['guard'],
  body?: Record<string, unknown>,
): WirePost {
  return {
    url: `${target.baseUrl.replace(/\/+$/, '')}${path}`,
    headers: { 'anthropic-version': ANTHROPIC_VERSION, ...(target.apiKey ? { 'x-api-key': target.apiKey } : {}) },
    body,
    guard,
    // As the Anthropic SDK hands it over: `APIError.error` is the whole body `{type: 'error', error}`.
    errorOf: (parsed) => parsed,
  };
}

const post = (target: ProviderTarget, body: Record<string, unknown>, guard: WireCall['guard']) =>
  anthropicRequest(target, '/v1/messages', guard, body);

/**
 * The stream's events, as the Anthropic SDK reads them: message and block events are JSON, `ping` and unknown names are
 * skipped.
 */
const STREAM_EVENTS = new Set([
  'message_start',
  'message_delta',
  'message_stop',
  'content_block_start',
  'content_block_delta',
  'content_block_stop',
]);

async function send({ target, body, stream, guard, onDelta }: WireCall): Promise<WireResult> {
  const requested = String(body.model ?? '');
  if (!stream) {
    const message = (await postJson(post(target, body, guard))) as Message;
    throwIfGuardFired(guard);
    if (!message || !Array.isArray(message.content))
      throw upstreamError(target, `provider ${target.id} answered without content blocks`, 200);
    const parts = fromBlocks(
      target,
      message.content.map((block) => ({ ...(block as object), json: '' }) as OpenBlock),
    );
    return {
      ...parts,
      stopReason: mapStop(message.stop_reason, parts.toolCalls.length > 0),
      usage: usageOf(message.usage as unknown as Record<string, unknown>),
      reportedCost: null,
      model: message.model || requested,
      ...(message.id ? { responseId: message.id } : {}),
    };
  }
  const state = new MessageStreamState();
  await postEvents(post(target, { ...body, stream: true }, guard), (event, data) => {
    if (event === 'error') {
      let parsed: unknown = data;
      try {
        parsed = JSON.parse(data);
      } catch {
        // the raw text, as the SDK keeps it
      }
      throw new WireStreamError(parsed);
    }
    if (event !== null && STREAM_EVENTS.has(event)) state.add(JSON.parse(data) as RawMessageStreamEvent, onDelta);
  });
  throwIfGuardFired(guard);
  if (!state.finished)
    throw upstreamError(target, `provider ${target.id} ended the stream before message_stop (truncated stream)`, 200);
  const parts = fromBlocks(target, state.blocks);
  return {
    ...parts,
    stopReason: mapStop(state.stop, parts.toolCalls.length > 0),
    usage: usageOf(state.usage),
    reportedCost: null,
    model: state.model || requested,
    ...(state.id ? { responseId: state.id } : {}),
  };
}

export const anthropicMessages: WireAdapter = { buildBody, send };
