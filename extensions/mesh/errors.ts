/** Coded errors of the mesh extension (their statuses are in docs/mesh.md). */
import { AgtError } from '@agt/contracts';

export const unknownMeshAgent = (handle: string) =>
  new AgtError('not_found', `no agent ${JSON.stringify(handle)} on this mesh server`);
export const agentOff = (handle: string) =>
  new AgtError('unavailable', `agent ${handle} is not reachable on the mesh (visibility off)`);
export const outOfScope = (scope: string, visibility: string) =>
  new AgtError(
    'forbidden',
    `this agent is visible to ${visibility} callers only; this request comes from a ${scope} address`,
  );
export const badSignature = () =>
  new AgtError('forbidden', 'the message signature does not verify against the sender DID');
export const unsigned = () =>
  new AgtError('forbidden', 'the message is not signed and this agent does not accept unsigned messages');
export const senderBlocked = (did: string) =>
  new AgtError('forbidden', `sender ${did} is not allowed to message this agent`);
export const wrongRecipient = () =>
  new AgtError('bad_request', "the envelope is addressed to another agent (to is not this agent's DID)");
export const staleMessage = () =>
  new AgtError('bad_request', 'the envelope timestamp is more than an hour old or more than ten minutes ahead');
export const apiBusy = () =>
  new AgtError('rate_limited', "too many calls of this agent's API are waiting; retry shortly", {
    status: 429,
    details: { retryAfter: 1 },
  });
export const badSender = () => new AgtError('bad_request', 'from must be an Ed25519 did:key');
export const tooLarge = (limit: number) => new AgtError('payload_too_large', `the body is larger than ${limit} bytes`);
export const rateLimited = (retryAfterS: number) =>
  new AgtError(
    'rate_limited',
    `too many messages from this sender, or to this agent's inbox; retry in ${retryAfterS} s`,
    { status: 429, details: { retryAfter: retryAfterS } },
  );
export const addressRateLimited = (retryAfterS: number) =>
  new AgtError('rate_limited', `too many requests from this address; retry in ${retryAfterS} s`, {
    status: 429,
    details: { retryAfter: retryAfterS },
  });
export const noSigningKey = (agentId: string) =>
  new AgtError('credentials_locked', `agent ${agentId} cannot sign: it has no identity or its credentials are locked`);
export const noRoute = (address: string) =>
  new AgtError(
    'bad_request',
    `the mesh cannot find where to deliver ${address}: give a local handle, a DID it knows (a peer lists it, or data.inbox_url), or a reply by data.parent_id`,
  );
export const noParent = (id: unknown) =>
  new AgtError('not_found', `no inbox message ${String(id)} to reply to (or it did not come from the mesh)`);
/**
 * A delivery that ended badly, as the kernel records it on the outbox row: the message, and the
 * receiver's last HTTP status (`statusCode`, absent when none answered).
 */
export class DeliveryFailure extends Error {
  constructor(
    message: string,
    readonly statusCode?: number,
  ) {
    super(message);
    this.name = 'DeliveryFailure';
  }
}
export const deliveryRefused = (status: number, why: string) =>
  new DeliveryFailure(`the receiver refused the message: ${status} ${why}`, status);
export const deliveryGaveUp = (attempts: number, why: string, status?: number) =>
  new DeliveryFailure(`gave up after ${attempts} tries: ${why}`, status);
export const meshStopped = () => new AgtError('unavailable', 'the mesh extension is stopping');
export const badWebsitePath = () => new AgtError('not_found', 'no such page');
export const websiteOff = () => new AgtError('not_found', 'this agent publishes no website');
export const lambdaAnswerInvalid = (why: string) =>
  new AgtError(
    'upstream_error',
    `the agent's API lambda answered something that is not {status, headers, body}: ${why}`,
  );
