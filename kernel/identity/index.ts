/**
 * The identity package's entry points for other kernel code: the service types, the guard the
 * create-agent route uses, and the sealing helpers an envelope is built from.
 */
import { identityNotReady } from './errors.js';
import type { IdentityService } from './types.js';

export type { IdentityService, IdentityStatus, IdentityState } from './types.js';
export { IdentityStatusSchema } from './types.js';
export { sealTo, openSealed, toBase64, fromBase64, type SealedBox } from './sealed-box.js';
export { didKeyFromEd25519, ed25519FromDidKey, verifyWithDid, isEd25519DidKey } from './did-key.js';

/**
 * Returns the identity service when the owner identity is `ready`; otherwise throws 409
 * `identity_not_ready` whose body carries `identity` (IdentityStatus), so a client
 * creating agents or using templates learns what to do first. Call it first in such a route, before any other check.
 */
export function requireReadyIdentity(kernel: { identity: IdentityService }, what = 'this operation'): IdentityService {
  const identity = kernel.identity;
  if (!identity.isReady()) throw identityNotReady(what, identity.status());
  return identity;
}
