/**
 * Requests relayed between the daemons of a fleet (contracts/agent-placement.ts), and `ctx.requests`, which
 * runs one through this daemon's own API.
 */

/**
 * An HTTP request as it travels between daemons: no connection, only what the route needs.
 *
 * @beta
 */
export interface RelayedRequest {
  method: string;
  /** Path and query (`/agents/ada/chat?wait=true`). */
  url: string;
  /** Lowercase names; the kernel keeps only content negotiation and idempotency headers (see {@link LocalRequests}). */
  headers: Record<string, string>;
  /** The request body's bytes, base64, if it has one. */
  body?: string;
}

/**
 * The answer to a {@link RelayedRequest}, as the daemon that ran it sent it.
 *
 * @beta
 */
export interface RelayedAnswer {
  statusCode: number;
  /** Lowercase names; `content-type` at least. */
  headers: Record<string, string>;
  /** The answer body's bytes, base64. */
  body: string;
}

/**
 * `ctx.requests`: runs a request through this daemon's own API as the owner, for the daemon that runs an
 * agent to answer a request another daemon forwarded (the forwarder checked who sent it). The request
 * passes the same routes, validation and error answers as one from a client; it is never forwarded again.
 * Only `accept`, `content-type`, `idempotency-key`, `last-event-id` and `prefer` headers are kept; the kernel adds its
 * own credential. An extension that offers this to anyone else hands out the owner's powers: only answer
 * callers that hold the fleet's credentials.
 *
 * @beta
 */
export interface LocalRequests {
  dispatch(request: RelayedRequest): Promise<RelayedAnswer>;
}
