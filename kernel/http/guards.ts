/**
 * The request guards, as root `onRequest` hooks that every route (extensions' included) inherits:
 * Host and Origin first (health included), then the bearer token, then loopback-only routes.
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { badBearerToken, crossOrigin, hostNotAllowed, loopbackOnly } from './errors.js';
import { hostAllowed, isLoopbackAddress, originIsSameOrigin, type HostPolicy } from './host-check.js';
import { installInputChecks } from './input-checks.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Answers only callers on this machine (spec 5.3). */
    loopbackOnly?: boolean;
    /** No bearer token needed (only GET/HEAD /health). */
    public?: boolean;
  }
}

/**
 * Headers a proxy (or anyone pretending to be one) adds to name the original client. A request carrying
 * any of them, or any `X-Forwarded-*` header, is never "local" (loopback-only routes answer 403).
 */
export const CLIENT_ADDRESS_HEADERS = [
  'forwarded',
  'forwarded-for',
  'via',
  'x-real-ip',
  'x-client-ip',
  'client-ip',
  'true-client-ip',
  'cf-connecting-ip',
  'cf-connecting-ipv6',
  'cf-pseudo-ipv4',
  'fastly-client-ip',
  'x-cluster-client-ip',
  'x-original-forwarded-for',
  'x-originating-ip',
  'x-remote-ip',
  'x-remote-addr',
  'x-proxyuser-ip',
  'x-envoy-external-address',
  'x-azure-clientip',
  'x-azure-socketip',
  'x-appengine-user-ip',
  'x-original-host',
  'x-host',
];
const CLIENT_ADDRESS_HEADER_SET = new Set(CLIENT_ADDRESS_HEADERS);

/** Does the request carry a proxy / client-address header (any `X-Forwarded*` included)? */
export function hasProxyHeader(headers: Record<string, unknown>): boolean {
  for (const name of Object.keys(headers)) {
    const lower = name.toLowerCase();
    if (lower.startsWith('x-forwarded') || CLIENT_ADDRESS_HEADER_SET.has(lower)) return true;
  }
  return false;
}

/** `Sec-Fetch-Site` says a browser sent this from another site (any case; a repeated header counts if any value does). */
function crossSiteFetch(value: string | string[] | undefined): boolean {
  if (value === undefined) return false;
  const tokens = (Array.isArray(value) ? value : [value]).flatMap((item) => item.split(',')).map((item) => item.trim().toLowerCase());
  return tokens.some((token) => token === 'cross-site' || token === 'same-site');
}

/** The bytes of an expected secret and a scratch buffer of the same length, kept per secret. */
interface ExpectedSecret {
  bytes: Buffer;
  scratch: Buffer;
}
const expectedSecrets = new Map<string, ExpectedSecret>();
/** The daemon token and the local proof; a few more in tests. Cleared when it grows past this. */
const MAX_EXPECTED_SECRETS = 16;

function expectedSecret(expected: string): ExpectedSecret {
  let entry = expectedSecrets.get(expected);
  if (entry === undefined) {
    if (expectedSecrets.size >= MAX_EXPECTED_SECRETS) expectedSecrets.clear();
    const bytes = Buffer.from(expected, 'utf8');
    entry = { bytes, scratch: Buffer.alloc(bytes.length) };
    expectedSecrets.set(expected, entry);
  }
  return entry;
}

/**
 * Constant-time comparison of a given secret with an expected one. The given value is copied into a
 * buffer of the expected secret's length (cut or zero-padded) and compared with `timingSafeEqual`, so the
 * time depends only on the expected length; a different byte length never matches. The expected secret's
 * bytes are made once per secret, not per request (hashing both per request cost ~5% of a small route).
 */
export function secretEquals(given: string, expected: string): boolean {
  const { bytes, scratch } = expectedSecret(expected);
  scratch.fill(0);
  scratch.write(given, 0, 'utf8');
  const same = timingSafeEqual(scratch, bytes);
  scratch.fill(0);
  return same && Buffer.byteLength(given, 'utf8') === bytes.length;
}

export interface GuardOptions extends HostPolicy {
  token: string;
  behindProxy: boolean;
  localProof: string;
}

export function isLocalRequest(request: FastifyRequest, options: Pick<GuardOptions, 'behindProxy' | 'localProof'>): boolean {
  if (!isLoopbackAddress(request.socket.remoteAddress)) return false;
  if (hasProxyHeader(request.headers)) return false;
  if (!options.behindProxy) return true;
  const proof = request.headers['x-agt-local-proof'];
  return typeof proof === 'string' && secretEquals(proof.trim(), options.localProof);
}

/**
 * The guard itself: throws the first refusal. `route` is undefined when the router never matched (a
 * malformed URL), which is then treated as an authenticated, non-local route.
 */
export function checkRequest(request: FastifyRequest, options: GuardOptions, route = request.routeOptions?.config): void {
  const host = request.headers.host;
  if (!hostAllowed(host, options)) {
    throw hostNotAllowed();
  }
  const origin = request.headers.origin;
  if ((origin !== undefined && !originIsSameOrigin(origin, host)) || crossSiteFetch(request.headers['sec-fetch-site'])) {
    throw crossOrigin();
  }
  if (!route?.public) {
    const header = request.headers.authorization ?? '';
    const match = /^Bearer\s+(.+)$/i.exec(header);
    if (!match || !secretEquals(match[1]!.trim(), options.token)) {
      throw badBearerToken();
    }
  }
  if (route?.loopbackOnly && !isLocalRequest(request, options)) {
    throw loopbackOnly();
  }
}

export function installGuards(app: FastifyInstance, options: GuardOptions): void {
  // Callback style, not async: no promise and no extra microtask per request.
  app.addHook('onRequest', (request, _reply, done) => {
    try {
      checkRequest(request, options);
    } catch (error) {
      done(error as Error);
      return;
    }
    done();
  });
  // After the guard: plain-decimal numbers in query/params/headers and the JSON depth limit.
  installInputChecks(app);
}
