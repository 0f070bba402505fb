/**
 * The coded errors of the HTTP layer (request guards and input checks), one factory per meaning (the
 * model is fastify's `lib/errors.js`). `error-handler.ts` turns every one into the `{error, code}` body.
 */
import { AgtError } from '@agt/contracts';

/** 403 `host_not_allowed`: the Host header names another server (DNS rebinding). */
export const hostNotAllowed = () => new AgtError('host_not_allowed', 'Host header does not name this daemon');

/** 400 `bad_request`: more than one Host header (RFC 9112 section 3.2). */
export const repeatedHost = () => new AgtError('bad_request', 'more than one Host header');

/** 403 `cross_origin`: a browser request from another origin or site. */
export const crossOrigin = () => new AgtError('cross_origin', 'cross-origin browser requests are refused');

/** 401 `unauthorized`: no bearer token, or not the daemon's. */
export const badBearerToken = () => new AgtError('unauthorized', 'missing or wrong bearer token');

/** 403 `loopback_only`: the route answers only callers on the daemon host. */
export const loopbackOnly = () => new AgtError('loopback_only', 'this route answers only callers on the daemon host');

/** 400 `bad_request`: the router refused the request before any hook (malformed URL, over-long parameter). */
export const routerRefusal = (message: string) => new AgtError('bad_request', message);

/** 400 `bad_request`: a numeric query, params or header field (`where` names the part) is not plain decimal. */
export const notDecimal = (part: string, where: string, name: string, kind: 'integer' | 'number', shown: string) =>
  new AgtError(
    'bad_request',
    `Invalid ${where}: ${name} must be a decimal ${kind === 'integer' ? 'integer' : 'number'} (got ${shown})`,
    {
      details: { path: `/${part}/${name}` },
    },
  );
