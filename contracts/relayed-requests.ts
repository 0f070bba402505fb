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

/**
 * `ctx.daemonIdentity`: this daemon's runtime key (Ed25519, a `did:key`), for an extension to sign what it
 * sends to other daemons (the fleet signs forwarded requests). The secret key never leaves the kernel, and a
 * signature covers {@link extensionSignedBytes} of the message, never the message alone: it cannot stand for
 * anything the kernel itself signs with that key (agents' attestations), nor for another extension.
 *
 * @beta
 */
export interface DaemonIdentity {
  /** The runtime key's `did:key`. */
  readonly did: string;
  /** The Ed25519 signature of `extensionSignedBytes(<this extension's name>, message)`. */
  sign(message: Uint8Array): Uint8Array;
}

/**
 * The bytes a {@link DaemonIdentity} signature covers: `agt.extension-signature\n<extension name>\n` then the
 * message. A verifier checks `verifyDidSignature(did, extensionSignedBytes(name, message), signature)`.
 *
 * @beta
 */
export function extensionSignedBytes(extension: string, message: Uint8Array): Uint8Array {
  const head = new TextEncoder().encode(`agt.extension-signature\n${extension}\n`);
  const bytes = new Uint8Array(head.length + message.length);
  bytes.set(head, 0);
  bytes.set(message, head.length);
  return bytes;
}
