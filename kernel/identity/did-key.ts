/**
 * `did:key` for Ed25519 public keys: multicodec `ed25519-pub` (0xed, varint-encoded as 0xed 0x01)
 * followed by the 32-byte key, base58btc-encoded with the multibase prefix `z`: `did:key:z6Mk...`.
 * The one implementation is the contracts' (`contracts/agent-keys.ts`), so an extension checks a DID and
 * its signatures exactly as the kernel does; these are the kernel's names for it.
 */
export {
  didFromPublicKey as didKeyFromEd25519,
  publicKeyFromDid as ed25519FromDidKey,
  isEd25519Did as isEd25519DidKey,
  verifyDidSignature as verifyWithDid,
} from '@agt/contracts';
