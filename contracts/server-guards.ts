/**
 * The daemon's request guards for a server an extension opens itself (`ctx.serverGuards`): the same code as the main
 * API's (every HTTP server of the daemon applies the same Host, Origin and time guards: docs/decisions.md, "The owner's
 * settings are the ceiling, on every server"), so an extension never writes its own DNS-rebinding or slow-client
 * defence.
 *
 * A server made by {@link ServerGuards.createServer} answers, before any route or hook of yours runs:
 * - `403 host_not_allowed` unless the `Host` header (and the authority of an absolute-form request line,
 *   `GET http://host/path`) names this server: `localhost` / `*.localhost` on any port; an IP literal
 *   only when it is an address the server is bound to (every interface's for `0.0.0.0` / `::`) and on
 *   the bound port; never `0.0.0.0` or `::`; the machine's mDNS name (`<hostname>.local`); the policy's
 *   `publicNames`;
 * - `403 cross_origin` for a foreign `Origin` (one that is not exactly `http://host[:port]` included:
 *   a path, query, fragment, userinfo or trailing slash) or `Sec-Fetch-Site: cross-site | same-site` (see
 *   {@link ServerGuardPolicy.crossSiteNavigation});
 * - `431 headers_too_large`, `408 request_timeout` (header block, whole request), `400 bad_request` for a
 *   malformed request, all `{error, code}`, connection closed;
 * - `400 bad_request` for a request with more than one `Host` header (RFC 9112 section 3.2);
 * - connections over the server's budget ({@link ServerLimits.maxConnections}, per address
 *   {@link ServerLimits.maxConnectionsPerAddress}) closed as they are accepted;
 * - `400 bad_request` for a JSON body nested deeper than `MAX_JSON_DEPTH` (64), before the schema
 *   validator or your handler walks it, and for a numeric query / params / header field that is not
 *   plain decimal (as on the main API).
 * It never trusts forwarding headers: who the caller is comes from the socket. It sends no CORS header.
 */
import type { FastifyInstance, FastifyServerOptions } from 'fastify';

/**
 * Size and time limits of a server's connections (the main API's unless a policy changes them).
 *
 * @beta
 */
export interface ServerLimits {
  /** Largest request header block, bytes (431 over it). Main API: 16 KB. */
  maxHeaderBytes: number;
  /** The header block must be complete this long after the request started (408). Main API: 10 s. */
  headersTimeoutMs: number;
  /** The whole request, body included, must arrive within this (408). Main API: 60 s. */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. Main API: 5 s. */
  keepAliveTimeoutMs: number;
  /** A socket with no traffic either way for this long is closed. Main API: 180 s. */
  idleSocketTimeoutMs: number;
  /**
   * Connections open at once; one over it is closed as it is accepted, without an answer. A budget of
   * this server's own (the main API and every other server have theirs). Default: settings
   * `server.maxConnections`, else an eighth of the process's open-file limit, at most 4,096.
   */
  maxConnections: number;
  /**
   * Connections open at once from one client address (an IPv6 client by its /64); one over it is closed
   * at once, without an answer. Default: settings `server.maxConnectionsPerAddress`, else a quarter of
   * `maxConnections`.
   */
  maxConnectionsPerAddress: number;
}

/**
 * What names the server besides its own addresses, and how strict it is.
 *
 * @beta
 */
export interface ServerGuardPolicy {
  /**
   * Names the server is reached by from elsewhere (a DNS name, a NAT's public address), as `name` or
   * `name:port` (an entry without a port allows any port; `[v6]` in brackets). Read on every request,
   * so a function may follow settings.
   */
  publicNames?: readonly string[] | (() => readonly string[]);
  /** Accept this machine's mDNS name (`<hostname>.local`, any port). Default true. */
  mdnsName?: boolean;
  /**
   * Let a browser's cross-site top-level navigation through: `GET`/`HEAD` with `Sec-Fetch-Mode:
   * navigate`, `Sec-Fetch-Dest: document` and no `Origin` (a link to a page). For servers of web pages;
   * scripts' fetches and form posts from other sites are still refused. Default false.
   */
  crossSiteNavigation?: boolean;
  /** Overrides of the main API's limits and of the connection budget (tests lower the header timeout). */
  limits?: Partial<ServerLimits>;
}

/**
 * `ctx.serverGuards`: builds servers that carry the main API's guards.
 *
 * @beta
 */
export interface ServerGuards {
  /**
   * A new fastify server (the daemon's fastify) with the guards and limits above installed as its first
   * root hooks, so every route added later, and the 404 handler, passes them. `options` are fastify's
   * (logger, bodyLimit, routerOptions, ...); the time, header-size and client-error options are the
   * guard's and are replaced. Call it before adding routes; `listen` it yourself, then the bound address
   * is what the Host check accepts (a rebind is followed). Add a type provider with `withTypeProvider`.
   * Set your own error handler to shape other errors; the guard's refusals are answered by the guard.
   */
  createServer(options?: FastifyServerOptions, policy?: ServerGuardPolicy): FastifyInstance;
  /** The limits the main API applies (and a server made here, unless its policy changes them). */
  readonly defaultLimits: Readonly<ServerLimits>;
}
