/**
 * The scripted replies a fake vendor server gives, shared by the OpenAI-style and the Anthropic fakes.
 * A script is a queue (one reply per model call, in order) or a function of the recorded request.
 * Each fake renders a reply in its own real wire format (JSON body, or SSE stream when the request
 * asked for `stream: true`).
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';

export interface FakeToolCall {
  /** Defaults to `call_<n>` (OpenAI) or `toolu_<n>` (Anthropic). */
  id?: string;
  name: string;
  /** An object is JSON-encoded; a string is sent as is (to script invalid arguments). */
  args: Record<string, unknown> | string;
}

export interface FakeUsage {
  /** All input tokens, cached ones included (the contract's `input`); each fake reports it the vendor's way. */
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
  /** OpenRouter's reported cost in USD (sent only when set). */
  cost?: number;
}

export type FakeReply =
  | {
      type: 'message';
      text?: string;
      toolCalls?: FakeToolCall[];
      /** Anthropic only: a thinking block sent before the text. */
      thinking?: string;
      usage?: FakeUsage;
      /** Vendor stop reason; default derived (`stop`/`tool_calls`, `end_turn`/`tool_use`). */
      stopReason?: string;
      /** Wait before answering (headers included). */
      delayMs?: number;
      /** Wait between streamed chunks. */
      chunkDelayMs?: number;
    }
  | { type: 'error'; status: number; message?: string; headers?: Record<string, string>; delayMs?: number }
  /** Streams: headers and a first chunk, then silence. JSON: no answer at all. Ends when the client leaves. */
  | { type: 'stall' }
  /** Part of the reply, then the socket is destroyed. */
  | { type: 'cut' }
  /** Streams: ends cleanly but without the final events (`finish_reason`/`[DONE]`, `message_stop`). */
  | { type: 'truncated' }
  /** Invalid JSON: in an SSE data line, or as the JSON body. */
  | { type: 'malformed' }
  | { type: 'custom'; handle(request: RecordedRequest, res: ServerResponse): void | Promise<void> };

/** Shorthands for scripts: `[reply.rateLimited(1), reply.text('hi')]`. */
export const reply = {
  text: (text: string, extra: Partial<Extract<FakeReply, { type: 'message' }>> = {}): FakeReply => ({
    type: 'message',
    text,
    ...extra,
  }),
  toolCalls: (toolCalls: FakeToolCall[], extra: Partial<Extract<FakeReply, { type: 'message' }>> = {}): FakeReply => ({
    type: 'message',
    toolCalls,
    ...extra,
  }),
  error: (
    status: number,
    extra: { message?: string; headers?: Record<string, string>; delayMs?: number } = {},
  ): FakeReply => ({
    type: 'error',
    status,
    ...extra,
  }),
  /** 429 with `Retry-After` (seconds as a number, or any header text such as an HTTP date). */
  rateLimited: (retryAfter: number | string): FakeReply => ({
    type: 'error',
    status: 429,
    message: 'rate limited',
    headers: { 'retry-after': String(retryAfter) },
  }),
  stall: (): FakeReply => ({ type: 'stall' }),
  cut: (): FakeReply => ({ type: 'cut' }),
  truncated: (): FakeReply => ({ type: 'truncated' }),
  malformed: (): FakeReply => ({ type: 'malformed' }),
};

export interface RecordedRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body, or undefined. */
  body: any;
  /** `Date.now()` when the request arrived. */
  at: number;
  /** True once the client closed the connection before the reply was complete (an abort). */
  clientAborted: boolean;
  /** Resolves when the reply finished or the connection closed, whichever comes first. */
  done: Promise<void>;
  /** The raw request, for custom handlers. */
  raw: IncomingMessage;
}

export type FakeScript = FakeReply[] | ((request: RecordedRequest, index: number) => FakeReply | Promise<FakeReply>);

/** Takes the next reply of a script; a drained queue gives `fallback`. */
export function nextReply(
  script: FakeScript,
  request: RecordedRequest,
  index: number,
  fallback: FakeReply,
): Promise<FakeReply> {
  if (typeof script === 'function') return Promise.resolve(script(request, index));
  return Promise.resolve(script.shift() ?? fallback);
}

/** The reply given when a queue is drained: a loud 500 so a test cannot pass on an unplanned call. */
export const EXHAUSTED: FakeReply = { type: 'error', status: 500, message: 'fake server: script exhausted' };

export const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** Splits text into small pieces so streams carry several deltas. */
export function pieces(text: string, size = 4): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}
