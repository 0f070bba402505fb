/**
 * `sys_fetch`: a real HTTP request from the daemon's host. http(s) only, a time limit (default 15 s,
 * at most 60 s), a response cap (24 KB of body, the rest is cut: the result must fit a tool result),
 * redirects followed (at most 20). The result is plain text: a status line, a few headers,
 * `truncated: true|false`, a blank line, then the body.
 * It runs with the daemon's network access: declare it `restricted` to have the owner approve each call.
 * The daemon's own token is never added to requests.
 *
 * Addresses only the daemon's host can reach (loopback, private, link-local, ...: fetch-policy.ts) are
 * refused unless the owner lists the host in the agent's `security.fetch_allow_hosts`. The check runs
 * at connection time on the resolved addresses (a custom `lookup`), on every redirect hop, with no
 * connection reuse between requests, so DNS rebinding and redirects cannot get around it.
 */
import { promises as dns, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Readable } from 'node:stream';
import { Type } from 'typebox';
import { AgtError, type ToolDefinition } from '@agt/contracts';
import { builtin, type RuntimeLookup } from './define.js';
import { addressRefused, bodyNotAllowed, fetchFailed, invalidHeader, notAUrl, onlyHttpUrls } from './errors.js';
import { allowListOf, blockedAddressKind, hostAllowed, stripBrackets } from '../../agents/fetch-policy.js';

export const FETCH_MAX_BYTES = 24 * 1024;
export const FETCH_MAX_REDIRECTS = 20;
const SHOWN_HEADERS = ['content-type', 'content-length', 'location', 'last-modified', 'etag'];
const DEFAULT_TIMEOUT_MS = 15_000;
const MAX_TIMEOUT_MS = 60_000;
/** Headers the caller may not set (as in fetch): they belong to the connection, not to the request. */
const FORBIDDEN_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
]);
/** Dropped when a redirect leaves the origin. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie']);

/** Name resolution used by `sys_fetch` (internal: a test may replace `lookup` to play DNS). */
export const fetchDns = {
  lookup: (hostname: string): Promise<LookupAddress[]> => dns.lookup(hostname, { all: true, verbatim: true }),
};

/** The owner's address policy refused a destination. */
export class AddressRefused extends Error {}

const refusal = (host: string, address: string, kind: string) =>
  new AddressRefused(
    `sys_fetch refuses ${host}${address !== host ? ` (resolves to ${address})` : ''}: ${kind} address; the owner can allow the host in the agent's security.fetch_allow_hosts`,
  );

/** A `lookup` that resolves the name and refuses it when any of its addresses is not public. */
function guardedLookup(host: string): LookupFunction {
  return (hostname, options, callback) => {
    fetchDns
      .lookup(hostname)
      .then((addresses) => {
        if (addresses.length === 0)
          throw Object.assign(new Error(`${hostname} did not resolve`), { code: 'ENOTFOUND' });
        for (const entry of addresses) {
          const kind = blockedAddressKind(entry.address);
          if (kind !== null) throw refusal(host, entry.address, kind);
        }
        const family = typeof options.family === 'number' && options.family !== 0 ? options.family : undefined;
        const usable = family ? addresses.filter((entry) => entry.family === family) : addresses;
        if (usable.length === 0)
          throw Object.assign(new Error(`${hostname} has no IPv${family} address`), { code: 'ENOTFOUND' });
        if (options.all) (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, usable);
        else callback(null, usable[0]!.address, usable[0]!.family);
      })
      .catch((error: Error) => callback(error as NodeJS.ErrnoException, '', 0));
  };
}

export interface Hop {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
}

/** One request, no redirects: checks the destination, connects (no pooled sockets), resolves with the response head. */
function send(hop: Hop, allow: readonly string[], signal: AbortSignal): Promise<IncomingMessage> {
  const { url } = hop;
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw onlyHttpUrls();
  const host = stripBrackets(url.hostname);
  const allowed = hostAllowed(url, allow);
  if (!allowed && isIP(host) !== 0) {
    const kind = blockedAddressKind(host);
    if (kind !== null) throw refusal(host, host, kind);
  }
  const headers: OutgoingHttpHeaders = { ...hop.headers };
  if (hop.body !== undefined) headers['content-length'] = Buffer.byteLength(hop.body);
  const options = {
    method: hop.method,
    headers,
    signal,
    // A pooled socket could have been opened for another agent whose allow list differs.
    agent: false as const,
    ...(allowed || isIP(host) !== 0 ? {} : { lookup: guardedLookup(host) }),
  };
  return new Promise<IncomingMessage>((resolve, reject) => {
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, options, resolve);
    req.once('error', reject);
    req.end(hop.body);
  });
}

/**
 * The response body as text, at most `maxBytes` (default {@link FETCH_MAX_BYTES}; decoded when gzip, deflate or br).
 */
export async function readCapped(
  response: IncomingMessage,
  maxBytes = FETCH_MAX_BYTES,
): Promise<{ text: string; truncated: boolean }> {
  const encoding = String(response.headers['content-encoding'] ?? '')
    .trim()
    .toLowerCase();
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? createGunzip()
      : encoding === 'deflate'
        ? createInflate()
        : encoding === 'br'
          ? createBrotliDecompress()
          : null;
  const stream: Readable = decoder ? response.pipe(decoder) : response;
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  try {
    for await (const chunk of stream) {
      chunks.push(chunk as Buffer);
      size += (chunk as Buffer).byteLength;
      if (size >= maxBytes) {
        truncated = size > maxBytes || !response.complete;
        break;
      }
    }
  } finally {
    response.destroy();
    decoder?.destroy();
  }
  return { text: Buffer.concat(chunks).subarray(0, maxBytes).toString('utf8'), truncated };
}

/** Follows redirects (each hop re-checked), answering the final response. */
export async function fetchFollowing(
  first: Hop,
  allow: readonly string[],
  signal: AbortSignal,
): Promise<IncomingMessage> {
  let hop = first;
  for (let redirects = 0; ; redirects++) {
    const response = await send(hop, allow, signal);
    const status = response.statusCode ?? 0;
    const location = response.headers.location;
    if (![301, 302, 303, 307, 308].includes(status) || !location) return response;
    response.resume();
    response.destroy();
    if (redirects >= FETCH_MAX_REDIRECTS) throw new Error(`more than ${FETCH_MAX_REDIRECTS} redirects`);
    let next: URL;
    try {
      next = new URL(location, hop.url);
    } catch {
      throw new Error(`redirect to an invalid location: ${location.slice(0, 200)}`);
    }
    if (next.protocol !== 'http:' && next.protocol !== 'https:') throw new Error(`redirect to a ${next.protocol} URL`);
    // As fetch does: 303 becomes GET (except HEAD), and so do 301/302 after a POST; 307/308 keep all.
    const toGet =
      (status === 303 && hop.method !== 'HEAD') || ((status === 301 || status === 302) && hop.method === 'POST');
    const headers = Object.fromEntries(
      Object.entries(hop.headers).filter(([name]) => {
        const lower = name.toLowerCase();
        if (next.origin !== hop.url.origin && CREDENTIAL_HEADERS.has(lower)) return false;
        return !(toGet && (lower === 'content-type' || lower.startsWith('content-')));
      }),
    );
    hop = { url: next, method: toGet ? 'GET' : hop.method, headers, body: toGet ? undefined : hop.body };
  }
}

export function fetchTool(lookup: RuntimeLookup): ToolDefinition {
  return builtin(
    {
      name: 'sys_fetch',
      description: 'Make an HTTP(S) request; returns the status, main headers and the body (at most 24 KB).',
      input: Type.Object({
        url: Type.String({ minLength: 1, maxLength: 8000 }),
        method: Type.Optional(
          Type.Union(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'].map((m) => Type.Literal(m))),
        ),
        headers: Type.Optional(Type.Record(Type.String(), Type.String())),
        body: Type.Optional(Type.String({ maxLength: 1_000_000 })),
        timeout_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_TIMEOUT_MS })),
      }),
      notable: true,
      async run(runtime, { url, method, headers, body, timeout_ms }, context) {
        let parsed: URL;
        try {
          parsed = new URL(url);
        } catch {
          throw notAUrl(url);
        }
        if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw onlyHttpUrls();
        const verb: string = method ?? 'GET';
        if (body !== undefined && (verb === 'GET' || verb === 'HEAD')) throw bodyNotAllowed(verb);
        const outgoing: Record<string, string> = {};
        for (const [name, value] of Object.entries(headers ?? {})) {
          if (FORBIDDEN_HEADERS.has(name.toLowerCase())) continue;
          if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || /[\r\n\0]/.test(value)) throw invalidHeader(name);
          outgoing[name] = value;
        }
        const allow = allowListOf(runtime.agent.config.security);
        const timeout = timeout_ms ?? DEFAULT_TIMEOUT_MS;
        const signal = AbortSignal.any([context.signal, AbortSignal.timeout(timeout)]);
        const failed = (error: unknown): never => {
          if (error instanceof AgtError) throw error;
          if (error instanceof AddressRefused) throw addressRefused(error.message);
          const timedOut = signal.aborted && (signal.reason as Error | undefined)?.name === 'TimeoutError';
          const reason = timedOut ? `timed out after ${timeout} ms` : (error as Error).message;
          throw fetchFailed(parsed.origin, reason);
        };
        let response: IncomingMessage;
        try {
          response = await fetchFollowing({ url: parsed, method: verb, headers: outgoing, body }, allow, signal);
        } catch (error) {
          return failed(error);
        }
        let content: { text: string; truncated: boolean };
        try {
          content = verb === 'HEAD' ? { text: '', truncated: false } : await readCapped(response);
        } catch (error) {
          return failed(error);
        } finally {
          response.destroy();
        }
        const shown = SHOWN_HEADERS.filter((name) => response.headers[name] !== undefined).map(
          (name) => `${name}: ${[response.headers[name]].flat().join(', ')}`,
        );
        return [`status: ${response.statusCode}`, ...shown, `truncated: ${content.truncated}`, '', content.text].join(
          '\n',
        );
      },
    },
    lookup,
  );
}
