/**
 * The HTTP server's request limits and the answer to errors raised before routing (node's
 * `clientError`: a header block over the limit, a malformed request line, a request that took too
 * long to arrive). Such answers carry `{error, code}` like every other error and close the connection.
 *
 * Limits (docs/security.md): request headers at most 16 KB (431 `headers_too_large`); the header
 * block must arrive within 10 s and the whole request (body included) within 60 s (408
 * `request_timeout`); an idle keep-alive connection is closed after 5 s; a connection with no traffic at
 * all for 180 s is cut (longer than the slowest route, compaction's 120 s model call). An established
 * `GET /events` stream is exempt: it is a complete request, and its socket's idle timeout is turned off.
 * JSON bodies are capped at 1 MB (`bodyLimit` in app.ts). Servers that extensions open get the same
 * limits through `ctx.serverGuards` (server-guards.ts).
 */
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

export interface RequestLimits {
  /** Largest request header block, in bytes (node's `maxHeaderSize`). */
  maxHeaderBytes: number;
  /** The header block must be complete this long after the request started (node's `headersTimeout`). */
  headersTimeoutMs: number;
  /** The whole request, body included, must arrive within this (node's `requestTimeout`). */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
  /** A socket with no traffic in either direction for this long is closed (SSE streams turn it off). */
  idleSocketTimeoutMs: number;
  /** How often node checks the header and request deadlines. */
  checkIntervalMs: number;
}

/**
 * The values the daemon uses. Internal: a test may lower them before it boots a daemon in process
 * (the server reads them when it is built).
 */
export const REQUEST_LIMITS: RequestLimits = {
  maxHeaderBytes: 16 * 1024,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  keepAliveTimeoutMs: 5_000,
  idleSocketTimeoutMs: 180_000,
  checkIntervalMs: 1_000,
};

/** The fastify server options that apply {@link REQUEST_LIMITS}. */
export function serverLimitOptions(limits: RequestLimits = REQUEST_LIMITS) {
  return {
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionTimeout: limits.idleSocketTimeoutMs,
    http: {
      maxHeaderSize: limits.maxHeaderBytes,
      headersTimeout: limits.headersTimeoutMs,
      connectionsCheckingInterval: limits.checkIntervalMs,
    },
    clientErrorHandler: (error: NodeJS.ErrnoException, socket: Duplex) => answerClientError(error, socket, limits),
  };
}

/** What a `clientError` becomes: status and code. */
export function classifyClientError(
  error: NodeJS.ErrnoException,
  limits: RequestLimits = REQUEST_LIMITS,
): { status: number; code: string; message: string } {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        code: 'headers_too_large',
        message: `request headers exceed ${Math.round(limits.maxHeaderBytes / 1024)} KB`,
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, code: 'request_timeout', message: 'the request did not arrive in time' };
    default:
      return {
        status: 400,
        code: 'bad_request',
        message: `malformed HTTP request${error.code ? ` (${error.code})` : ''}`,
      };
  }
}

/** fastify's `clientErrorHandler`: a raw JSON answer on the socket, then the connection closes. */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex, limits: RequestLimits): void {
  // A reset connection has nobody to answer; a response already under way cannot be replaced.
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (error.code === 'ECONNRESET' || socket.destroyed || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const { status, code, message } = classifyClientError(error, limits);
  const body = JSON.stringify({ error: message, code });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
  // A peer that never closes its side does not keep the socket.
  setTimeout(() => socket.destroy(), 1_000).unref();
}
