/**
 * `did:key` for Ed25519 public keys (D4): multicodec `ed25519-pub` (0xed, varint-encoded as 0xed 0x01)
 * followed by the 32-byte key, base58btc-encoded with the multibase prefix `z`: `did:key:z6Mk...`.
 */
import { base58 } from '@scure/base';
import nacl from 'tweetnacl';

const ED25519_PUB_MULTICODEC = Uint8Array.of(0xed, 0x01);
const DID_KEY_PREFIX = 'did:key:z';

export function didKeyFromEd25519(publicKey: Uint8Array): string {
  if (publicKey.length !== 32) throw new RangeError('an Ed25519 public key is 32 bytes');
  const bytes = new Uint8Array(34);
  bytes.set(ED25519_PUB_MULTICODEC, 0);
  bytes.set(publicKey, 2);
  return DID_KEY_PREFIX + base58.encode(bytes);
}

/** The Ed25519 public key inside a `did:key`; throws a RangeError for anything else. */
export function ed25519FromDidKey(did: string): Uint8Array {
  if (!did.startsWith(DID_KEY_PREFIX)) throw new RangeError('not a base58btc did:key');
  let bytes: Uint8Array;
  try {
    bytes = base58.decode(did.slice(DID_KEY_PREFIX.length));
  } catch {
    throw new RangeError('did:key is not valid base58btc');
  }
  if (bytes.length !== 34 || bytes[0] !== 0xed || bytes[1] !== 0x01) throw new RangeError('did:key is not an Ed25519 key');
  return bytes.slice(2);
}

export function isEd25519DidKey(did: string): boolean {
  try {
    ed25519FromDidKey(did);
    return true;
  } catch {
    return false;
  }
}

/** Verifies a detached Ed25519 signature against the key a `did:key` names. False for a bad DID. */
export function verifyWithDid(did: string, message: Uint8Array, signature: Uint8Array): boolean {
  if (signature.length !== nacl.sign.signatureLength) return false;
  try {
    return nacl.sign.detached.verify(message, signature, ed25519FromDidKey(did));
  } catch {
    return false;
  }
}
