/**
 * The one transport to the vendors, for model calls and for listing models (admin.ts): a `POST` with a
 * JSON body (or a `GET`) over Node's own HTTP client
 * with a keep-alive pool, the answer read as JSON or as a server-sent-event stream, failures thrown as
 * the few error kinds that `classify` (errors.ts) maps to codes. It replaced the vendor SDKs on the hot
 * path, where the SDK, `fetch`, and the web streams around them took about a quarter of a turn's CPU
 * (the SDK's request building, a `Response` re-wrapped per call to see chunks, a body written as an
 * iterable in separate syscalls); then undici's `request`, whose HTTP parser runs in WebAssembly and
 * whose code the daemon runs for nothing else: over the first 130 calls of a fresh process it took
 * ~2.5 times the CPU of `node:http`, which shares its (native) parser and most of its code with the
 * daemon's own HTTP server (docs/performance.md, "Chat turns (session 5)").
 *
 * What it keeps from the SDK path, on purpose:
 * - one pool of kept-alive connections per scheme for every call (as `fetch`'s global dispatcher had),
 *   idle connections closed after {@link KEEP_ALIVE_IDLE_MS} (undici's default); TLS trust is Node's
 *   (`NODE_EXTRA_CA_CERTS` applies);
 * - the SDKs' error semantics: a non-2xx status is a {@link WireStatusError} with the vendor's body
 *   (OpenAI's `error` object, Anthropic's whole body, as their SDKs hand them over), a failure before the
 *   answer's headers is a {@link WireConnectionError} (retryable), an `error` event in a started stream a
 *   {@link WireStreamError}, a connection lost while the body arrives a {@link WireCutError};
 * - the guard's timers (call-guard.ts): the total one starts as the request goes out, every received
 *   chunk restarts the idle one, and aborting its signal destroys the request's socket.
 * Differences: no socket timeout of its own (the guard's limits are the only ones), and a redirect is
 * not followed: a 3xx is an `upstream_error` naming the status (a key header never travels on to the
 * place a redirect names).
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import type { CallGuard } from './call-guard.js';

/** How long an idle kept-alive connection stays open (undici's default, which the SDK path used). */
export const KEEP_ALIVE_IDLE_MS = 4_000;

let httpPool: HttpAgent | undefined;
let https: { agent: HttpsAgent; request: typeof httpRequest } | undefined;

/** The request function and pool for a URL's scheme; `node:https` is imported at the first https call. */
async function transportFor(url: URL): Promise<{ request: typeof httpRequest; agent: HttpAgent }> {
  if (url.protocol === 'http:')
    return {
      request: httpRequest,
      agent: (httpPool ??= new HttpAgent({ keepAlive: true, timeout: KEEP_ALIVE_IDLE_MS })),
    };
  if (url.protocol !== 'https:') throw new TypeError(`unsupported protocol ${url.protocol}`);
  if (!https) {
    const module = await import('node:https');
    https = {
      agent: new module.Agent({ keepAlive: true, timeout: KEEP_ALIVE_IDLE_MS }),
      request: module.request as typeof httpRequest,
    };
  }
  return https;
}

/** Closes the kept-alive connections (the extension's stop); the next call opens new ones. */
export function closeWireConnections(): void {
  httpPool?.destroy();
  https?.agent.destroy();
  httpPool = undefined;
  https = undefined;
}

export interface HeaderView {
  get(name: string): string | null;
}

/** The SDKs' `APIError` message: the vendor's message, else its body as JSON, else the raw text. */
function apiMessage(status: number | undefined, error: unknown, text: string | undefined): string {
  const inner = (error as { message?: unknown } | undefined)?.message;
  const msg = inner
    ? typeof inner === 'string'
      ? inner
      : JSON.stringify(inner)
    : error
      ? JSON.stringify(error)
      : text;
  if (status && msg) return `${status} ${msg}`;
  if (status) return `${status} status code (no body)`;
  return msg || '(no status code or body)';
}

/** A non-2xx answer. `error` is what the vendor's SDK would expose as `APIError.error`. */
export class WireStatusError extends Error {
  constructor(
    readonly status: number,
    readonly error: unknown,
    text: string | undefined,
    readonly headers: HeaderView,
  ) {
    super(apiMessage(status, error, text));
  }
}

/** An `error` event (or error chunk) inside a stream that had started with a 2xx. */
export class WireStreamError extends Error {
  readonly status = undefined;
  constructor(readonly error: unknown) {
    super(apiMessage(undefined, error, undefined));
  }
}

/** No answer at all: refused, reset, DNS, TLS (the request may not have reached the vendor). */
export class WireConnectionError extends Error {
  constructor(cause: unknown) {
    super('Connection error.', { cause });
  }
}

/** The connection ended while the answer's body was arriving. */
export class WireCutError extends Error {
  constructor(cause: unknown) {
    super('terminated', { cause });
  }
}

export interface WirePost {
  url: string;
  headers: Record<string, string>;
  /** The JSON body of a `POST`; none: a `GET`. */
  body?: Record<string, unknown>;
  guard: CallGuard;
  /** From the parsed error body to what the vendor's SDK exposes as `error` (OpenAI: `body.error`). */
  errorOf(body: unknown): unknown;
}

const headerView = (headers: Record<string, string | string[] | undefined>): HeaderView => ({
  get(name) {
    const value = headers[name.toLowerCase()];
    return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
  },
});

/**
 * The most a model's answer may bring, JSON or stream, and the most of an error body read: a provider
 * that keeps sending (a misconfigured endpoint, a proxy's endless page) ends the call with a clear error
 * instead of growing the daemon's memory until the total timer fires.
 */
export const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

export class WireTooLargeError extends Error {
  constructor() {
    super(`the answer passed ${MAX_ANSWER_BYTES / 1024 / 1024} MiB: ended there`);
  }
}

/** The body as text, at most `MAX_ANSWER_BYTES` (a {@link WireTooLargeError} past it). */
async function boundedText(body: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_ANSWER_BYTES) {
      body.destroy();
      throw new WireTooLargeError();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Sends the request; resolves with the body of a 2xx answer, throws the wire errors otherwise. */
async function send(call: WirePost): Promise<IncomingMessage> {
  const { guard } = call;
  const body = call.body === undefined ? undefined : Buffer.from(JSON.stringify(call.body));
  let response: IncomingMessage;
  try {
    const url = new URL(call.url);
    const { request, agent } = await transportFor(url);
    const options: RequestOptions = {
      method: body ? 'POST' : 'GET',
      agent,
      signal: guard.signal,
      headers: body
        ? {
            'content-type': 'application/json',
            accept: 'application/json',
            ...call.headers,
            'content-length': String(body.length),
          }
        : { accept: 'application/json', ...call.headers },
    };
    guard.begin();
    response = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = request(url, options, resolve);
      // Before the answer: the call fails. After it, a lost connection is the answer's own error
      // (`aborted` on its body), so later errors here need no handler of their own.
      req.on('error', reject);
      // No socket timer while the call runs (the guard times it); the pool sets its idle one again.
      req.setTimeout(0);
      // Headers and body leave in one write.
      req.end(body);
    });
  } catch (error) {
    throw guard.reason ? error : new WireConnectionError(error);
  }
  guard.touch();
  const status = response.statusCode ?? 0;
  if (status >= 200 && status < 300) return response;
  const text = await boundedText(response).catch(() => '');
  const parsed = parseOrUndefined(text);
  throw new WireStatusError(
    status,
    parsed === undefined ? undefined : call.errorOf(parsed),
    parsed === undefined ? text : undefined,
    headerView(response.headers),
  );
}

/** A JSON answer, parsed (a `SyntaxError` when it is not JSON); a `GET` when the call has no body. */
export async function postJson(call: WirePost): Promise<unknown> {
  const body = await send(call);
  let text: string;
  try {
    text = await boundedText(body);
  } catch (error) {
    throw call.guard.reason || error instanceof WireTooLargeError ? error : new WireCutError(error);
  }
  return JSON.parse(text);
}

/**
 * A server-sent-event answer: `onEvent(event name or null, data)` for each event, in order, until the
 * stream ends. A throw from `onEvent` ends the call with that error (the socket is dropped).
 */
export async function postEvents(call: WirePost, onEvent: (event: string | null, data: string) => void): Promise<void> {
  const body = await send(call);
  const parser = new SseParser(onEvent);
  await new Promise<void>((resolve, reject) => {
    let size = 0;
    body.setEncoding('utf8');
    body.on('data', (chunk: string) => {
      call.guard.touch();
      try {
        // Characters, not bytes: the bound only has to hold within a small factor.
        size += chunk.length;
        if (size > MAX_ANSWER_BYTES) throw new WireTooLargeError();
        parser.push(chunk);
      } catch (error) {
        body.destroy();
        reject(error);
      }
    });
    body.on('end', () => resolve());
    body.on('error', (error) => reject(call.guard.reason ? error : new WireCutError(error)));
  });
}

/**
 * The event-stream format (WHATWG "server-sent events"): lines end in LF, CRLF or CR; `field: value`
 * lines build an event, a blank line dispatches it, `:` lines are comments. An event is dispatched when
 * it has data or a name (as the SDKs' decoders do); a last event without its blank line is dropped.
 */
export class SseParser {
  private rest = '';
  private skipLf = false;
  private event: string | null = null;
  private data: string[] = [];

  constructor(private readonly onEvent: (event: string | null, data: string) => void) {}

  push(chunk: string): void {
    let text = chunk;
    if (this.skipLf && text.startsWith('\n')) text = text.slice(1);
    this.skipLf = false;
    // Line ends are looked for in the new chunk only, and each kind's next position is kept until it is
    // passed: a long line arriving in many chunks, or many lines in one chunk, stay linear.
    let start = 0;
    let lf = text.indexOf('\n');
    let cr = text.indexOf('\r');
    for (;;) {
      if (lf >= 0 && lf < start) lf = text.indexOf('\n', start);
      if (cr >= 0 && cr < start) cr = text.indexOf('\r', start);
      const end = cr >= 0 && (lf < 0 || cr < lf) ? cr : lf;
      if (end < 0) break;
      const line = this.rest + text.slice(start, end);
      this.rest = '';
      this.line(line);
      // A CR may be the first half of a CRLF split across two chunks: its LF is then skipped.
      if (end === cr && end + 1 === text.length) this.skipLf = true;
      start = end === cr && text[end + 1] === '\n' ? end + 2 : end + 1;
    }
    if (start < text.length) this.rest += text.slice(start);
  }

  private line(line: string): void {
    if (line === '') {
      if (this.event !== null || this.data.length) {
        const event = this.event;
        const data = this.data.join('\n');
        this.event = null;
        this.data = [];
        this.onEvent(event, data);
      }
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
  }
}
