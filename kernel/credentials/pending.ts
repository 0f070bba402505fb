/**
 * A credential value replaced while the envelope was locked, kept outside the envelope until it unlocks
 * (docs/credentials.md#locked). It is not in the envelope (`sealed: false`), but it is not plaintext on disk
 * either: it is sealed directly to this runtime's X25519 key, and to the owner's when one is known, so
 * this daemon can move it into the envelope as soon as the envelope opens. A pending value written on
 * another installation can be recovered there only by its owner (the runtime wrap is for the other
 * runtime); when neither fits it stays pending and unreadable until set again.
 */
import { sealTo, type SealedBox } from '../identity/sealed-box.js';
import type { IdentityService } from '../identity/types.js';

export interface PendingValue {
  pending: 1;
  runtime: { did: string; box: SealedBox };
  owner?: { did: string; box: SealedBox };
}

type PendingIdentity = Pick<
  IdentityService,
  | 'ownerDid'
  | 'ownerBoxPublicKey'
  | 'isReady'
  | 'ownerBoxOpen'
  | 'runtimeDid'
  | 'runtimeBoxPublicKey'
  | 'runtimeBoxOpen'
>;

/** The stored bytes of a pending value. */
export function sealPending(identity: PendingIdentity, value: string): Buffer {
  const plaintext = new TextEncoder().encode(value);
  const record: PendingValue = {
    pending: 1,
    runtime: { did: identity.runtimeDid, box: sealTo(identity.runtimeBoxPublicKey, plaintext) },
  };
  if (identity.ownerDid && identity.ownerBoxPublicKey)
    record.owner = { did: identity.ownerDid, box: sealTo(identity.ownerBoxPublicKey, plaintext) };
  plaintext.fill(0);
  return Buffer.from(JSON.stringify(record), 'utf8');
}

/** The plaintext of a pending value, or null when neither this runtime nor the (ready) owner can open it. */
export function openPending(identity: PendingIdentity, stored: Buffer): string | null {
  let record: PendingValue;
  try {
    record = JSON.parse(stored.toString('utf8')) as PendingValue;
  } catch {
    return null;
  }
  if (record?.pending !== 1) return null;
  let bytes: Uint8Array | null = null;
  if (record.runtime?.did === identity.runtimeDid) bytes = identity.runtimeBoxOpen(record.runtime.box);
  if (!bytes && record.owner && record.owner.did === identity.ownerDid && identity.isReady())
    bytes = identity.ownerBoxOpen(record.owner.box);
  if (!bytes) return null;
  const text = new TextDecoder().decode(bytes);
  bytes.fill(0);
  return text;
}
