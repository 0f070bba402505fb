/**
 * `sys_fetch`: a real HTTP request from the daemon's host. http(s) only, a time limit (default 15 s,
 * at most 60 s), a response cap (24 KB of body, the rest is cut: the result must fit a tool result),
 * redirects followed by fetch (at most 20). The result is plain text: a status line, a few headers,
 * `truncated: true|false`, a blank line, then the body.
 * It runs with the daemon's network access: declare it `restricted` to have the owner approve each call.
 * The daemon's own token is never added to requests.
 */
import { Type } from 'typebox';
import { AgtError } from '../../../contracts/errors.js';
import type { ToolDefinition } from '../../../contracts/tools.js';
import { builtin, type RuntimeLookup } from './define.js';

export const FETCH_MAX_BYTES = 24 * 1024;
const SHOWN_HEADERS = ['content-type', 'content-length', 'location', 'last-modified', 'etag'];
const DEFAULT_TIMEOUT_MS = 15_000;
const MAX_TIMEOUT_MS = 60_000;

async function readCapped(response: Response): Promise<{ text: string; truncated: boolean }> {
  if (!response.body) return { text: '', truncated: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
    if (size >= FETCH_MAX_BYTES) {
      truncated = true;
      await reader.cancel().catch(() => {});
      break;
    }
  }
  const bytes = Buffer.concat(chunks).subarray(0, FETCH_MAX_BYTES);
  return { text: bytes.toString('utf8'), truncated };
}

export function fetchTool(lookup: RuntimeLookup): ToolDefinition {
  return builtin(
    {
      name: 'sys_fetch',
      description: 'Make an HTTP(S) request; returns the status, main headers and the body (at most 24 KB).',
      input: Type.Object({
        url: Type.String({ minLength: 1, maxLength: 8000 }),
        method: Type.Optional(Type.Union(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'].map((m) => Type.Literal(m)))),
        headers: Type.Optional(Type.Record(Type.String(), Type.String())),
        body: Type.Optional(Type.String({ maxLength: 1_000_000 })),
        timeout_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_TIMEOUT_MS })),
      }),
      notable: true,
      async run(_runtime, { url, method, headers, body, timeout_ms }, context) {
        let parsed: URL;
        try {
          parsed = new URL(url);
        } catch {
          throw new AgtError('bad_request', `not a URL: ${url}`);
        }
        if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new AgtError('bad_request', 'only http and https URLs');
        const signal = AbortSignal.any([context.signal, AbortSignal.timeout(timeout_ms ?? DEFAULT_TIMEOUT_MS)]);
        let response: Response;
        try {
          response = await fetch(parsed, { method: method ?? 'GET', headers, body, signal, redirect: 'follow' });
        } catch (error) {
          const reason = (error as Error).name === 'TimeoutError' ? `timed out after ${timeout_ms ?? DEFAULT_TIMEOUT_MS} ms` : (error as Error).message;
          throw new AgtError('upstream_error', `fetch ${parsed.origin} failed: ${reason}`);
        }
        const { text, truncated } = await readCapped(response);
        const shown = SHOWN_HEADERS.filter((name) => response.headers.has(name)).map((name) => `${name}: ${response.headers.get(name)}`);
        return [`status: ${response.status}`, ...shown, `truncated: ${truncated}`, '', text].join('\n');
      },
    },
    lookup,
  );
}
