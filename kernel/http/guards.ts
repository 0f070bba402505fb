/**
 * The request guards, as root `onRequest` hooks that every route (extensions' included) inherits:
 * Host and Origin first (health included), then the bearer token, then loopback-only routes.
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthPrincipal, RequestAuth } from '@agt/contracts';
import { badBearerToken, crossOrigin, hostNotAllowed, loopbackOnly, repeatedHost } from './errors.js';
import {
  absoluteFormAuthority,
  hasRepeatedHost,
  hostAllowed,
  isLoopbackAddress,
  originIsSameOrigin,
  type HostPolicy,
} from './host-check.js';
import { installInputChecks } from './input-checks.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Answers only callers on this machine (docs/security.md). */
    loopbackOnly?: boolean;
    /** No bearer token needed (only GET/HEAD /health). */
    public?: boolean;
  }
}

/**
 * Examples of the client-address family (below): headers a proxy, CDN or platform adds to name the
 * original client. Kept as a list for the docs and the tests; the guard itself applies the rule.
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

/**
 * Tokens that end a client-address header's name: the address itself (`…-IP`, `…-Addr`, `…-Address`), or whom it is
 * for.
 */
const ADDRESS_TOKEN = /(?:ip|ips|ipv4|ipv6|addr|addrs|address|addresses)$/;
const TARGET_TOKENS = new Set(['for', 'host', 'hosts', 'via']);
/** Tokens that say the header speaks for the client (then an address or host token anywhere makes it one). */
const ROLE_TOKENS = new Set([
  'client',
  'real',
  'true',
  'original',
  'originating',
  'remote',
  'connecting',
  'viewer',
  'peer',
  'source',
  'src',
  'user',
  'proxyuser',
  'external',
  'forwarded',
  'proxied',
]);

/**
 * The client-address family, by the shape of the name rather than a list: split the lowercase name on
 * `-`, `_` and `.`; it is one when
 * 1. it is `Forwarded` or `Via`, or a token starts with `forwarded` (every `X-Forwarded-*`, `X-Vercel-Forwarded-For`,
 *    ...);
 * 2. its last token ends in `ip`, `ips`, `ipv4`, `ipv6`, `addr(s)` or `address(es)` (`Fly-Client-IP`,
 *    `X-Azure-ClientIP`, `CloudFront-Viewer-Address`, `X-Original-Remote-Addr`, `CF-Pseudo-IPv4`, ...);
 * 3. its last token is `for`, `host(s)` or `via` (`X-Host`, `X-Original-Host`, `X-Vercel-Proxied-For`,
 *    `X-BlueCoat-Via`), `Host` itself excepted;
 * 4. a token names the client's role (`client`, `real`, `true`, `original`, `originating`, `remote`,
 *    `connecting`, `viewer`, `peer`, `source`, `src`, `user`, `proxyuser`, `external`, `proxied`) and
 *    another is an address or target token as above (`X-Real-IP-Chain`, `X-Client-IP-Hash`).
 * It catches more than any proxy sends (an `X-Zip` header too): on the few routes that use it, a
 * refusal costs nothing, a miss would let a proxied caller pass as local.
 */
export function isClientAddressHeader(name: string): boolean {
  const lower = name.toLowerCase();
  if (lower === 'host') return false;
  const tokens = lower.split(/[-_.]+/).filter((token) => token !== '');
  if (tokens.length === 0) return false;
  if (lower === 'forwarded' || lower === 'via' || tokens.some((token) => token.startsWith('forwarded'))) return true;
  const last = tokens[tokens.length - 1]!;
  if (ADDRESS_TOKEN.test(last) || TARGET_TOKENS.has(last)) return true;
  return (
    tokens.some((token) => ROLE_TOKENS.has(token)) &&
    tokens.some((token) => ADDRESS_TOKEN.test(token) || TARGET_TOKENS.has(token))
  );
}

// Requests carry the same few header names over and over: the answer per name is kept (bounded).
const familyAnswers = new Map<string, boolean>();

/** Does the request carry a header of the client-address family ({@link isClientAddressHeader})? */
export function hasProxyHeader(headers: Record<string, unknown>): boolean {
  for (const name of Object.keys(headers)) {
    let answer = familyAnswers.get(name);
    if (answer === undefined) {
      answer = isClientAddressHeader(name);
      if (familyAnswers.size >= 1024) familyAnswers.clear();
      familyAnswers.set(name, answer);
    }
    if (answer) return true;
  }
  return false;
}

/**
 * `Sec-Fetch-Site` says a browser sent this from another site (any case; a repeated header counts if any value does).
 */
function crossSiteFetch(value: string | string[] | undefined): boolean {
  if (value === undefined) return false;
  const tokens = (Array.isArray(value) ? value : [value])
    .flatMap((item) => item.split(','))
    .map((item) => item.trim().toLowerCase());
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

const encoder = new TextEncoder();

/**
 * Constant-time comparison of a given secret with an expected one. The given value is encoded (UTF-8)
 * into a buffer of the expected secret's length (cut, or zero-filled after it) and compared with
 * `timingSafeEqual`, so the time depends only on the expected length and the given one (which the
 * caller knows); a different byte length never matches. The expected secret's bytes are made once per
 * secret, not per request (hashing both per request cost ~5% of a small route); `encodeInto` writes
 * the given one without the C++ round trips of `Buffer#write` and two `fill`s (~0.6 µs a request).
 * The scratch buffer is not wiped after: it holds what the caller sent, or the expected secret that
 * `bytes` holds anyway.
 */
export function secretEquals(given: string, expected: string): boolean {
  const { bytes, scratch } = expectedSecret(expected);
  const { read, written } = encoder.encodeInto(given, scratch);
  if (written < scratch.length) scratch.fill(0, written);
  const same = timingSafeEqual(scratch, bytes);
  return same && read === given.length && written === bytes.length;
}

/**
 * The token of an `Authorization: Bearer <token>` header (trimmed), or undefined. The common spelling
 * (`Bearer ` then the token) is cut without a regular expression; any other (`bearer`, tabs, several
 * spaces) goes through `/^Bearer\s+(.+)$/i`, which both spellings satisfy alike.
 */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (header.startsWith('Bearer ')) return header.slice(7).trim();
  return /^Bearer\s+(.+)$/i.exec(header)?.[1]?.trim();
}

/**
 * `ctx.auth` (contracts/request-auth.ts): the daemon token checked as {@link checkRequest} checks it, for the
 * servers extensions open. One header only: a repeated `Authorization` is no credential.
 */
export function requestAuth(token: string): RequestAuth {
  const owner: AuthPrincipal = Object.freeze({ kind: 'owner' });
  return Object.freeze({
    verifyBearer(authorization: string | readonly string[] | undefined) {
      if (typeof authorization !== 'string') return undefined;
      const given = bearerToken(authorization);
      return given !== undefined && given !== '' && secretEquals(given, token) ? owner : undefined;
    },
  });
}

export interface GuardOptions extends HostPolicy {
  token: string;
  /**
   * Other credentials than the bearer token (the extensions' `agt.request-credentials` checks, see
   * contracts/points.ts): asked only when the site checks passed and the bearer token is missing or wrong.
   */
  otherCredential?: (request: FastifyRequest) => boolean;
  behindProxy: boolean;
  localProof: string;
}

export function isLocalRequest(
  request: FastifyRequest,
  options: Pick<GuardOptions, 'behindProxy' | 'localProof'>,
): boolean {
  if (!isLoopbackAddress(request.socket.remoteAddress)) return false;
  if (hasProxyHeader(request.headers)) return false;
  if (!options.behindProxy) return true;
  const proof = request.headers['x-agt-local-proof'];
  return typeof proof === 'string' && secretEquals(proof.trim(), options.localProof);
}

/** What every HTTP server of the daemon checks first: whom the request names, and from which site it comes. */
export interface SiteGuardOptions extends HostPolicy {
  /**
   * Let a browser's cross-site top-level navigation through (a link to a page: `GET`/`HEAD`,
   * `Sec-Fetch-Mode: navigate`, `Sec-Fetch-Dest: document`, no foreign Origin). For servers of web
   * pages; the main API never allows it.
   */
  crossSiteNavigation?: boolean;
}

const headerText = (value: string | string[] | undefined) =>
  (Array.isArray(value) ? value.join(',') : value)?.trim().toLowerCase();

/** A plain link followed from another site: a page load, never a script's fetch or a form post. */
function isTopLevelNavigation(request: FastifyRequest): boolean {
  return (
    (request.method === 'GET' || request.method === 'HEAD') &&
    headerText(request.headers['sec-fetch-mode']) === 'navigate' &&
    headerText(request.headers['sec-fetch-dest']) === 'document' &&
    request.headers.origin === undefined
  );
}

/**
 * The Host and Origin part of the guard (DNS rebinding, CSRF), shared by the main API and every server
 * an extension opens (`server-guards.ts`): exactly one Host header (400 for two), which, and the
 * authority of an absolute-form request line, must name this server; a foreign or malformed `Origin`
 * or a cross-site `Sec-Fetch-Site` is refused (Origin compared with the authority the request named).
 */
export function checkSite(request: FastifyRequest, options: SiteGuardOptions): void {
  if (hasRepeatedHost(request.raw.rawHeaders)) throw repeatedHost();
  const host = request.headers.host;
  const authority = absoluteFormAuthority(request.raw.url, request.raw.method);
  if (!hostAllowed(host, options) || authority === false || (authority !== null && !hostAllowed(authority, options))) {
    throw hostNotAllowed();
  }
  const named = authority ?? host;
  const origin = request.headers.origin;
  if (origin !== undefined && !originIsSameOrigin(origin, named)) throw crossOrigin();
  if (
    crossSiteFetch(request.headers['sec-fetch-site']) &&
    !(options.crossSiteNavigation === true && isTopLevelNavigation(request))
  ) {
    throw crossOrigin();
  }
}

/**
 * The guard itself: throws the first refusal. `route` is undefined when the router never matched (a
 * malformed URL), which is then treated as an authenticated, non-local route.
 */
export function checkRequest(
  request: FastifyRequest,
  options: GuardOptions,
  route = request.routeOptions?.config,
): void {
  checkSite(request, options);
  if (!route?.public) {
    const given = bearerToken(request.headers.authorization);
    if (
      !(given !== undefined && secretEquals(given, options.token)) &&
      !(options.otherCredential?.(request) === true)
    ) {
      throw badBearerToken();
    }
  }
  if (route?.loopbackOnly && !isLocalRequest(request, options)) {
    throw loopbackOnly();
  }
}

/**
 * A loopback-only route runs only once its request has arrived whole, and the trailers of a chunked
 * body pass the same rule as its headers: a header of the client-address family sent as a trailer is
 * refused like one sent as a header. A body no parser read is drained first (still bounded by the
 * request time limit); nothing of it is kept.
 */
async function refuseAddressTrailers(request: FastifyRequest): Promise<void> {
  const raw = request.raw;
  if (!raw.complete) {
    await new Promise<void>((resolve, reject) => {
      const gone = () => reject(loopbackOnly());
      if (raw.destroyed) return gone();
      raw.once('end', resolve);
      raw.once('close', gone);
      raw.once('error', gone);
      raw.resume();
    });
  }
  if (hasProxyHeader(raw.trailers)) throw loopbackOnly();
}

/**
 * `prepare` runs first in the same hook (the request's logger, app.ts): one root hook per request
 * costs less than two.
 */
export function installGuards(
  app: FastifyInstance,
  options: GuardOptions,
  prepare?: (request: FastifyRequest, reply: FastifyReply) => void,
): void {
  // Callback style, not async: no promise and no extra microtask per request.
  app.addHook('onRequest', (request, reply, done) => {
    prepare?.(request, reply);
    try {
      checkRequest(request, options);
    } catch (error) {
      done(error as Error);
      return;
    }
    done();
  });
  // Only loopback-only routes wait for the end of the request: the others never look at trailers.
  app.addHook('onRoute', (route) => {
    if (route.config?.loopbackOnly !== true) return;
    const own =
      route.preHandler === undefined ? [] : Array.isArray(route.preHandler) ? route.preHandler : [route.preHandler];
    route.preHandler = [refuseAddressTrailers, ...own];
  });
  // After the guard: plain-decimal numbers in query/params/headers and the JSON depth limit.
  installInputChecks(app);
}
