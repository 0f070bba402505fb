/**
 * A fake Anthropic Messages API: `POST /v1/messages` as a JSON message or, with `stream: true`, the SSE
 * event sequence (`message_start` with usage incl. cache tokens, `content_block_start/delta/stop` for
 * thinking, text and `tool_use` with `input_json_delta` fragments, `ping`, `message_delta` with the stop
 * reason and output tokens, `message_stop`), and `GET /v1/models`. `baseUrl` is the origin (the client
 * appends `/v1/messages`).
 */
import type { ServerResponse } from 'node:http';
import {
  EXHAUSTED,
  nextReply,
  pieces,
  sleep,
  type FakeReply,
  type FakeScript,
  type FakeUsage,
  type RecordedRequest,
} from './script.js';
import { open, sendJson, startFakeServer, startSse, type FakeServer } from './server.js';

export { reply, type FakeReply, type FakeScript, type RecordedRequest } from './script.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export interface FakeAnthropicOptions {
  models?: string[] | null;
  /** When set, `GET /v1/models` fails with this status. */
  modelsStatus?: number;
  /** When set, a request whose `x-api-key` differs gets a 401 `authentication_error`. */
  expectKey?: string;
  fallback?: FakeReply;
}

export interface FakeAnthropic extends FakeServer {
  baseUrl: string;
  messageRequests(): RecordedRequest[];
}

type Message = Extract<FakeReply, { type: 'message' }>;

/** Anthropic's `input_tokens` excludes cache reads and writes, which come as their own fields. */
function usageOf(usage: FakeUsage | undefined) {
  const u = { input: 12, output: 5, cacheRead: 0, cacheWrite: 0, ...usage };
  return {
    input_tokens: u.input - u.cacheRead - u.cacheWrite,
    cache_creation_input_tokens: u.cacheWrite,
    cache_read_input_tokens: u.cacheRead,
    output_tokens: u.output,
  };
}

const stopOf = (reply: Message) => reply.stopReason ?? (reply.toolCalls?.length ? 'tool_use' : 'end_turn');

function blocksOf(reply: Message) {
  const blocks: Array<Record<string, unknown>> = [];
  if (reply.thinking) blocks.push({ type: 'thinking', thinking: reply.thinking, signature: 'fake-signature' });
  if (reply.text) blocks.push({ type: 'text', text: reply.text });
  for (const [i, call] of (reply.toolCalls ?? []).entries()) {
    blocks.push({ type: 'tool_use', id: call.id ?? `toolu_${i + 1}`, name: call.name, input: call.args });
  }
  return blocks;
}

let counter = 0;

const event = (res: ServerResponse, type: string, data: unknown) => {
  if (open(res)) res.write(`event: ${type}\ndata: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
};

function messageStart(model: string, usage: ReturnType<typeof usageOf>) {
  return {
    type: 'message_start',
    message: {
      id: `msg_fake_${counter}`,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...usage, output_tokens: 1 },
    },
  };
}

async function streamReply(request: RecordedRequest, res: ServerResponse, reply: FakeReply): Promise<void> {
  const model = String(request.body?.model ?? 'claude-fake');
  const usage = usageOf(reply.type === 'message' ? reply.usage : undefined);
  startSse(res);
  event(res, 'message_start', messageStart(model, usage));
  if (reply.type === 'stall') return;
  const textStart = { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } };
  const partial = { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'partial' } };
  if (reply.type === 'cut' || reply.type === 'truncated') {
    event(res, 'content_block_start', textStart);
    event(res, 'content_block_delta', partial);
    if (reply.type === 'cut') setTimeout(() => res.socket?.destroy(), 10);
    else res.end();
    return;
  }
  if (reply.type === 'malformed') {
    event(res, 'content_block_start', textStart);
    event(res, 'content_block_delta', '{"type":"content_block_delta","index":0,"delta":{"type":"text_del');
    event(res, 'message_stop', { type: 'message_stop' });
    res.end();
    return;
  }
  if (reply.type !== 'message') throw new Error(`unexpected reply ${reply.type}`);
  const pause = () => (reply.chunkDelayMs ? sleep(reply.chunkDelayMs) : undefined);
  event(res, 'ping', { type: 'ping' });
  for (const [index, block] of blocksOf(reply).entries()) {
    await pause();
    if (block.type === 'thinking') {
      event(res, 'content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'thinking', thinking: '' },
      });
      for (const piece of pieces(String(block.thinking))) {
        event(res, 'content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'thinking_delta', thinking: piece },
        });
      }
      event(res, 'content_block_delta', {
        type: 'content_block_delta',
        index,
        delta: { type: 'signature_delta', signature: block.signature },
      });
    } else if (block.type === 'text') {
      event(res, 'content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'text', text: '' },
      });
      for (const piece of pieces(String(block.text))) {
        await pause();
        event(res, 'content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'text_delta', text: piece },
        });
      }
    } else {
      event(res, 'content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
      });
      const json = typeof block.input === 'string' ? block.input : JSON.stringify(block.input);
      for (const piece of pieces(json, 7)) {
        event(res, 'content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: piece },
        });
      }
    }
    event(res, 'content_block_stop', { type: 'content_block_stop', index });
  }
  event(res, 'message_delta', {
    type: 'message_delta',
    delta: { stop_reason: stopOf(reply), stop_sequence: null },
    usage: { output_tokens: usage.output_tokens },
  });
  event(res, 'message_stop', { type: 'message_stop' });
  res.end();
}

function jsonReply(request: RecordedRequest, res: ServerResponse, reply: FakeReply): void {
  if (reply.type === 'stall') return;
  if (reply.type === 'cut') {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
    res.write('{"id":"msg_cut","type":"message","content":[');
    setTimeout(() => res.socket?.destroy(), 10);
    return;
  }
  if (reply.type === 'malformed' || reply.type === 'truncated') {
    const text = '{"id":"msg_bad","type":"message","content":[{"type":"text",';
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
    return;
  }
  if (reply.type !== 'message') throw new Error(`unexpected reply ${reply.type}`);
  const content = blocksOf(reply).map((block) =>
    block.type === 'tool_use' && typeof block.input === 'string' ? { ...block, input: JSON.parse(block.input) } : block,
  );
  sendJson(res, 200, {
    id: `msg_fake_${counter}`,
    type: 'message',
    role: 'assistant',
    model: String(request.body?.model ?? 'claude-fake'),
    content,
    stop_reason: stopOf(reply),
    stop_sequence: null,
    usage: usageOf(reply.usage),
  });
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};

export async function startFakeAnthropic(
  t: Teardown,
  script: FakeScript = [],
  options: FakeAnthropicOptions = {},
): Promise<FakeAnthropic> {
  const models = options.models === undefined ? ['claude-fake-1', 'claude-fake-2'] : options.models;
  let index = 0;
  const server = await startFakeServer(t, async (request, res) => {
    const fail = (status: number, message: string, headers?: Record<string, string>) =>
      sendJson(
        res,
        status,
        { type: 'error', error: { type: ERROR_TYPES[status] ?? 'api_error', message } },
        { 'request-id': 'req_fake', ...headers },
      );
    if (options.expectKey !== undefined && request.headers['x-api-key'] !== options.expectKey) {
      return fail(401, 'invalid x-api-key');
    }
    if (request.method === 'GET' && request.path === '/v1/models') {
      if (models === null) return fail(404, 'not found');
      if (options.modelsStatus) return fail(options.modelsStatus, `fake models error ${options.modelsStatus}`);
      const data = models.map((id) => ({
        type: 'model',
        id,
        display_name: id.toUpperCase(),
        created_at: '2025-01-01T00:00:00Z',
      }));
      return sendJson(res, 200, { data, has_more: false, first_id: models[0] ?? null, last_id: models.at(-1) ?? null });
    }
    if (request.method !== 'POST' || request.path !== '/v1/messages')
      return fail(404, `no route ${request.method} ${request.path}`);
    counter++;
    const reply = await nextReply(script, request, index++, options.fallback ?? EXHAUSTED);
    if ('delayMs' in reply && reply.delayMs) await sleep(reply.delayMs);
    if (!open(res)) return;
    if (reply.type === 'custom') return reply.handle(request, res);
    if (reply.type === 'error') return fail(reply.status, reply.message ?? `fake error ${reply.status}`, reply.headers);
    if (request.body?.stream) return streamReply(request, res, reply);
    return jsonReply(request, res, reply);
  });
  return {
    ...server,
    baseUrl: server.origin,
    messageRequests: () => server.requests.filter((r) => r.method === 'POST' && r.path === '/v1/messages'),
  };
}
