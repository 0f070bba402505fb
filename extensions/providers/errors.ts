/**
 * Turning whatever a model call threw (a wire-http.ts error, an SDK error, our own guard's abort) into one
 * coded {@link AgtError}, deciding whether it may be retried, and keeping keys out of every message.
 *
 * Codes: `upstream_error` (502, `details.upstreamStatus` = the vendor's HTTP status or null),
 * `timeout` (504), `aborted` (499: the caller's signal fired), `unavailable` (503: extension stopping).
 * The SDK error is never attached as `cause`: its text may quote what the vendor said about a key.
 */
import { AgtError } from '@agt/contracts';
import type { GuardReason } from './call-guard.js';
import { WireConnectionError, WireCutError, WireStatusError, WireStreamError } from './wire-http.js';
import { PROVIDER_KINDS, type ProviderTarget } from './types.js';

export interface Failure {
  error: AgtError;
  retryable: boolean;
  /** The server's `Retry-After` (or `retry-after-ms`) in milliseconds, when it sent one. */
  retryAfterMs?: number;
}

const MAX_MESSAGE = 400;

/** Removes keys from text: the known secrets verbatim, then anything shaped like a vendor key or bearer token. */
export function redact(text: string, secrets: Array<string | undefined> = []): string {
  let out = text;
  for (const secret of secrets) if (secret && secret.length >= 4) out = out.split(secret).join('[redacted]');
  out = out
    .replace(/\b(?:sk|pk|rk)[-_][A-Za-z0-9*_-]{6,}/g, '[redacted]')
    .replace(/\bBearer\s+[^\s"',]+/gi, 'Bearer [redacted]');
  return out.length > MAX_MESSAGE ? `${out.slice(0, MAX_MESSAGE)}…` : out;
}

/** `Retry-After` as milliseconds: `retry-after-ms`, else seconds, else an HTTP date; undefined otherwise. */
export function parseRetryAfter(
  headers: { get(name: string): string | null } | undefined,
  now = Date.now(),
): number | undefined {
  const ms = headers?.get('retry-after-ms');
  if (ms && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Number(ms);
  const value = headers?.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

type ApiErrorLike = {
  status?: number;
  headers?: { get(name: string): string | null };
  error?: unknown;
  message: string;
};

// What wire-http.ts throws (every call to a vendor goes through it).
const isApiError = (e: unknown): e is ApiErrorLike => e instanceof WireStatusError || e instanceof WireStreamError;
const isConnectionError = (e: unknown) => e instanceof WireConnectionError;

/** The vendor's own words: OpenAI `{error: {message}}`, Anthropic `{type: 'error', error: {type, message}}`. */
function vendorMessage(error: ApiErrorLike): string {
  const body = error.error as { message?: unknown; error?: { message?: unknown; type?: unknown } } | undefined;
  const text = body?.error?.message ?? body?.message;
  const type = typeof body?.error?.type === 'string' ? `${body.error.type}: ` : '';
  return typeof text === 'string' && text ? `${type}${text}` : error.message;
}

/** The innermost cause's code or message, e.g. `ECONNREFUSED`. */
function rootCause(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; depth < 5; depth++) {
    const next = (current as { cause?: unknown })?.cause;
    if (!next) break;
    current = next;
  }
  const code = (current as { code?: unknown })?.code;
  return typeof code === 'string' ? code : String((current as Error)?.message ?? current);
}

export const retryableStatus = (status: number) => status === 408 || status === 429 || status >= 500;

export function upstreamError(
  target: ProviderTarget,
  message: string,
  upstreamStatus: number | null,
  extra: Record<string, unknown> = {},
): AgtError {
  return new AgtError('upstream_error', redact(message, [target.apiKey]), {
    details: { provider: target.id, upstreamStatus, ...extra },
  });
}

/** Classifies one failed attempt. `reason` is why our own guard aborted it, if it did. */
export function classify(error: unknown, reason: GuardReason | null, target: ProviderTarget): Failure {
  const who = `provider ${target.id}`;
  if (reason === 'cancelled') {
    return { retryable: false, error: callCancelled(target) };
  }
  if (reason === 'stopped') {
    return { retryable: false, error: stoppedDuringCall(target) };
  }
  if (reason === 'timeout') {
    return { retryable: false, error: callTimedOut(target) };
  }
  if (reason === 'idle') {
    return { retryable: false, error: streamStalled(target) };
  }
  if (error instanceof AgtError) return { retryable: false, error };
  if (isConnectionError(error)) {
    return {
      retryable: true,
      error: upstreamError(target, `cannot reach ${who} at ${target.baseUrl}: ${rootCause(error)}`, null),
    };
  }
  if (isApiError(error)) {
    if (typeof error.status !== 'number') {
      // An `error` event inside an already-started stream (Anthropic `overloaded_error`, OpenAI error chunk).
      return {
        retryable: false,
        error: upstreamError(target, `${who} reported an error mid-stream: ${vendorMessage(error)}`, null),
      };
    }
    const status = error.status;
    const message = `${who} answered HTTP ${status}: ${vendorMessage(error)}`;
    return {
      retryable: retryableStatus(status),
      retryAfterMs: parseRetryAfter(error.headers),
      error: upstreamError(target, message, status),
    };
  }
  if (error instanceof SyntaxError) {
    return { retryable: false, error: upstreamError(target, `${who} sent malformed JSON: ${error.message}`, 200) };
  }
  if (
    error instanceof WireCutError ||
    (error instanceof TypeError && /terminated|other side closed|socket/i.test(`${error.message} ${rootCause(error)}`))
  ) {
    return {
      retryable: false,
      error: upstreamError(target, `${who} closed the connection mid-response (cut stream): ${rootCause(error)}`, 200),
    };
  }
  return {
    retryable: false,
    error: upstreamError(target, `${who} call failed: ${(error as Error)?.message ?? String(error)}`, null),
  };
}

// ---- the extension's coded errors, one factory per meaning (the model is fastify's `lib/errors.js`) ----

/** 499 `aborted`: the caller's signal cancelled the call. */
export const callCancelled = (target: ProviderTarget) =>
  new AgtError('aborted', `the call to provider ${target.id} was cancelled`, {
    status: 499,
    details: { provider: target.id },
  });

/** 503 `unavailable`: the providers extension stopped while the call ran. */
export const stoppedDuringCall = (target: ProviderTarget) =>
  new AgtError('unavailable', `the providers extension stopped during a call to provider ${target.id}`);

/** 504 `timeout`: the provider did not answer within the target's `timeoutMs`. */
export const callTimedOut = (target: ProviderTarget) =>
  new AgtError('timeout', `provider ${target.id} did not answer within ${target.timeoutMs} ms`, {
    details: { provider: target.id, timeoutMs: target.timeoutMs },
  });

/** 504 `timeout`: a started stream sent nothing for the target's `idleTimeoutMs`. */
export const streamStalled = (target: ProviderTarget) =>
  new AgtError('timeout', `provider ${target.id} sent nothing for ${target.idleTimeoutMs} ms (stalled stream)`, {
    details: { provider: target.id, idleTimeoutMs: target.idleTimeoutMs },
  });

/** 502 `upstream_error` (reason `timeout`): over HTTP a provider that took too long is an upstream failure. */
export const timeoutAsUpstream = (timeout: AgtError) =>
  new AgtError('upstream_error', timeout.message, { details: { ...timeout.details, reason: 'timeout' } });

/** 422 `unsupported_provider_type`: a provider whose `type` this extension does not serve. */
export const unsupportedType = (providerId: string, type: string) =>
  new AgtError(
    'unsupported_provider_type',
    `provider ${providerId} has type "${type}", which the providers extension does not serve (it serves ${PROVIDER_KINDS.join(', ')})`,
    { status: 422, details: { provider: providerId, type } },
  );

/** 400 `bad_request`: an agent declares a provider whose `type` no client is built for. */
export const unknownProviderType = (providerId: string, type: string) =>
  new AgtError('bad_request', `provider ${providerId} has an unknown type ${type}`);
