/**
 * The owner's key pairs, derived from the BIP39 seed (docs/decisions.md, "The owner's keys come from a seed phrase"):
 * the Ed25519 signing key at `m/44'/0'/0'` (its public key is the `ownerDid`) and the X25519 encryption key at
 * `m/44'/0'/1'` (the 32 bytes at that path are used directly as the X25519 secret key).
 */
import type nacl from 'tweetnacl';
import { didKeyFromEd25519 } from './did-key.js';
import { boxKeyPairFromSecret, signKeyPairFromSeed } from './nacl-node.js';
import { derivePath } from './slip10.js';

export const OWNER_SIGNING_PATH = "m/44'/0'/0'";
export const OWNER_BOX_PATH = "m/44'/0'/1'";

export interface OwnerKeys {
  did: string;
  /** nacl signing pair: `secretKey` is 64 bytes (seed || public key). */
  signing: nacl.SignKeyPair;
  box: nacl.BoxKeyPair;
}

export function deriveOwnerKeys(seed: Uint8Array): OwnerKeys {
  const signNode = derivePath(seed, OWNER_SIGNING_PATH);
  const boxNode = derivePath(seed, OWNER_BOX_PATH);
  // Node's crypto, tweetnacl's bytes (nacl-node.ts). Both copy their input, so the derivation nodes can be
  // wiped right after.
  const signing = signKeyPairFromSeed(signNode.key);
  const box = boxKeyPairFromSecret(boxNode.key);
  for (const node of [signNode, boxNode]) {
    node.key.fill(0);
    node.chainCode.fill(0);
  }
  return { did: didKeyFromEd25519(signing.publicKey), signing, box };
}

/** Overwrites the secret halves; the object must not be used afterwards. */
export function wipeOwnerKeys(keys: OwnerKeys): void {
  keys.signing.secretKey.fill(0);
  keys.box.secretKey.fill(0);
}
