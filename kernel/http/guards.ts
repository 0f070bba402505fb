/**
 * The request guards, as root `onRequest` hooks that every route (extensions' included) inherits:
 * Host and Origin first (health included), then the bearer token, then loopback-only routes.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AgtError } from '../../contracts/errors.js';
import { hostAllowed, isLoopbackAddress, originIsSameOrigin, type HostPolicy } from './host-check.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Answers only callers on this machine (spec 5.3). */
    loopbackOnly?: boolean;
    /** No bearer token needed (only GET/HEAD /health). */
    public?: boolean;
  }
}

const PROXY_HEADERS = ['forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-real-ip', 'via'];

/** Constant-time comparison of two secrets of any length (hashing equalizes the lengths). */
export function secretEquals(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

export interface GuardOptions extends HostPolicy {
  token: string;
  behindProxy: boolean;
  localProof: string;
}

export function isLocalRequest(request: FastifyRequest, options: Pick<GuardOptions, 'behindProxy' | 'localProof'>): boolean {
  if (!isLoopbackAddress(request.socket.remoteAddress)) return false;
  if (PROXY_HEADERS.some((name) => request.headers[name] !== undefined)) return false;
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
    throw new AgtError('host_not_allowed', 'Host header does not name this daemon');
  }
  const origin = request.headers.origin;
  const fetchSite = request.headers['sec-fetch-site'];
  if ((origin !== undefined && !originIsSameOrigin(origin, host)) || fetchSite === 'cross-site' || fetchSite === 'same-site') {
    throw new AgtError('cross_origin', 'cross-origin browser requests are refused');
  }
  if (!route?.public) {
    const header = request.headers.authorization ?? '';
    const match = /^Bearer\s+(.+)$/i.exec(header);
    if (!match || !secretEquals(match[1]!.trim(), options.token)) {
      throw new AgtError('unauthorized', 'missing or wrong bearer token');
    }
  }
  if (route?.loopbackOnly && !isLocalRequest(request, options)) {
    throw new AgtError('loopback_only', 'this route answers only callers on the daemon host');
  }
}

export function installGuards(app: FastifyInstance, options: GuardOptions): void {
  app.addHook('onRequest', async (request) => checkRequest(request, options));
}
