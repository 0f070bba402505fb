/**
 * A fake OpenAI-style server (also what openai-compatible servers and OpenRouter speak):
 * `POST {base}/chat/completions` as a JSON body or, with `stream: true`, an SSE stream of
 * `chat.completion.chunk` objects (text deltas, tool-call fragments by index, a finish chunk, a usage
 * chunk when `stream_options.include_usage` is set, then `data: [DONE]`), and `GET {base}/models`.
 *
 * Reusable by any test that needs a scriptable model:
 *   const fake = await startFakeOpenAI(t, [reply.text('hello'), reply.toolCalls([{ name: 'say', args: {} }])]);
 *   settings: { providers: [{ id: 'fake', type: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl }] }
 *   fake.chatRequests()[0].body.messages  // what the client sent
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

export interface FakeOpenAIOptions {
  /** Path prefix of the API (default `/v1`); `baseUrl` includes it. */
  basePath?: string;
  /** Model ids `GET /models` lists; `null` makes that route answer 404 (servers without it). */
  models?: string[] | null;
  /** When set, `GET /models` fails with this status. */
  modelsStatus?: number;
  /** When set, a request whose bearer token differs gets a 401 that echoes the token it got (as OpenAI does). */
  expectKey?: string;
  /** Reply when a queue script is drained (default: a 500 naming the exhausted script). */
  fallback?: FakeReply;
}

export interface FakeOpenAI extends FakeServer {
  /** What to configure as the provider's `baseUrl`, e.g. `http://127.0.0.1:PORT/v1`. */
  baseUrl: string;
  /** Only the `POST /chat/completions` requests, in arrival order. */
  chatRequests(): RecordedRequest[];
}

const DEFAULT_USAGE: Required<Omit<FakeUsage, 'cost'>> = { input: 12, output: 5, cacheRead: 0, cacheWrite: 0 };

/** `usage` as OpenAI reports it: `prompt_tokens` already counts cached tokens. */
function usageBody(usage: FakeUsage | undefined) {
  const u = { ...DEFAULT_USAGE, ...usage };
  const details: Record<string, number> = { cached_tokens: u.cacheRead };
  if (u.cacheWrite) details.cache_write_tokens = u.cacheWrite;
  return {
    prompt_tokens: u.input,
    completion_tokens: u.output,
    total_tokens: u.input + u.output,
    prompt_tokens_details: details,
    ...(usage?.cost !== undefined ? { cost: usage.cost } : {}),
  };
}

const toolCallsOf = (reply: Extract<FakeReply, { type: 'message' }>) =>
  (reply.toolCalls ?? []).map((call, i) => ({
    id: call.id ?? `call_${i + 1}`,
    type: 'function' as const,
    function: { name: call.name, arguments: typeof call.args === 'string' ? call.args : JSON.stringify(call.args) },
  }));

const finishOf = (reply: Extract<FakeReply, { type: 'message' }>) =>
  reply.stopReason ?? (reply.toolCalls?.length ? 'tool_calls' : 'stop');

let counter = 0;

function chunk(model: string, delta: unknown, finish: string | null = null) {
  return {
    id: `chatcmpl-fake-${counter}`,
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}

const write = (res: ServerResponse, data: unknown) => {
  if (open(res)) res.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
};

async function streamReply(request: RecordedRequest, res: ServerResponse, reply: FakeReply): Promise<void> {
  const model = String(request.body?.model ?? 'fake-model');
  startSse(res);
  write(res, chunk(model, { role: 'assistant', content: '' }));
  if (reply.type === 'stall') return; // silence until the client gives up
  if (reply.type === 'cut') {
    write(res, chunk(model, { content: 'partial' }));
    setTimeout(() => res.socket?.destroy(), 10);
    return;
  }
  if (reply.type === 'truncated') {
    write(res, chunk(model, { content: 'partial' }));
    res.end();
    return;
  }
  if (reply.type === 'malformed') {
    write(res, '{"id":"chatcmpl-bad","choices":[{"delta":{"content":"x"');
    write(res, '[DONE]');
    res.end();
    return;
  }
  if (reply.type !== 'message') throw new Error(`unexpected reply ${reply.type}`);
  const pause = () => (reply.chunkDelayMs ? sleep(reply.chunkDelayMs) : undefined);
  for (const piece of pieces(reply.text ?? '')) {
    await pause();
    write(res, chunk(model, { content: piece }));
  }
  const calls = toolCallsOf(reply);
  for (const [index, call] of calls.entries()) {
    await pause();
    write(
      res,
      chunk(model, {
        tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }],
      }),
    );
    for (const piece of pieces(call.function.arguments, 7)) {
      write(res, chunk(model, { tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  }
  write(res, chunk(model, {}, finishOf(reply)));
  if (request.body?.stream_options?.include_usage) {
    write(res, {
      id: `chatcmpl-fake-${counter}`,
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model,
      choices: [],
      usage: usageBody(reply.usage),
    });
  }
  write(res, '[DONE]');
  res.end();
}

function jsonReply(request: RecordedRequest, res: ServerResponse, reply: FakeReply): void {
  if (reply.type === 'stall') return;
  if (reply.type === 'cut') {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
    res.write('{"id":"chatcmpl-cut","choices":[');
    setTimeout(() => res.socket?.destroy(), 10);
    return;
  }
  if (reply.type === 'malformed' || reply.type === 'truncated') {
    const text = '{"id":"chatcmpl-bad","choices":[{"message":';
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
    return;
  }
  if (reply.type !== 'message') throw new Error(`unexpected reply ${reply.type}`);
  const calls = toolCallsOf(reply);
  sendJson(res, 200, {
    id: `chatcmpl-fake-${counter}`,
    object: 'chat.completion',
    created: 1_700_000_000,
    model: String(request.body?.model ?? 'fake-model'),
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: reply.text ?? null, ...(calls.length ? { tool_calls: calls } : {}) },
        finish_reason: finishOf(reply),
      },
    ],
    usage: usageBody(reply.usage),
  });
}

export async function startFakeOpenAI(
  t: Teardown,
  script: FakeScript = [],
  options: FakeOpenAIOptions = {},
): Promise<FakeOpenAI> {
  const base = options.basePath ?? '/v1';
  const models = options.models === undefined ? ['fake-model', 'fake-model-large'] : options.models;
  let index = 0;
  const server = await startFakeServer(t, async (request, res) => {
    if (options.expectKey !== undefined) {
      const given = String(request.headers.authorization ?? '').replace(/^Bearer /, '');
      if (given !== options.expectKey) {
        return sendJson(res, 401, {
          error: {
            message: `Incorrect API key provided: ${given}.`,
            type: 'invalid_request_error',
            code: 'invalid_api_key',
          },
        });
      }
    }
    if (request.method === 'GET' && request.path === `${base}/models`) {
      if (models === null) return sendJson(res, 404, { error: { message: 'not found' } });
      if (options.modelsStatus)
        return sendJson(res, options.modelsStatus, { error: { message: `fake models error ${options.modelsStatus}` } });
      return sendJson(res, 200, {
        object: 'list',
        data: models.map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'fake' })),
      });
    }
    if (request.method !== 'POST' || request.path !== `${base}/chat/completions`) {
      return sendJson(res, 404, { error: { message: `no route ${request.method} ${request.path}` } });
    }
    counter++;
    const reply = await nextReply(script, request, index++, options.fallback ?? EXHAUSTED);
    if ('delayMs' in reply && reply.delayMs) await sleep(reply.delayMs);
    if (!open(res)) return;
    if (reply.type === 'custom') return reply.handle(request, res);
    if (reply.type === 'error') {
      const status = reply.status;
      const type = status === 429 ? 'rate_limit_exceeded' : status >= 500 ? 'server_error' : 'invalid_request_error';
      return sendJson(
        res,
        status,
        { error: { message: reply.message ?? `fake error ${status}`, type, code: null } },
        reply.headers,
      );
    }
    if (request.body?.stream) return streamReply(request, res, reply);
    return jsonReply(request, res, reply);
  });
  return {
    ...server,
    baseUrl: server.origin + base,
    chatRequests: () => server.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/chat/completions')),
  };
}
