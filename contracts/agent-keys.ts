/**
 * Agents' own keys, for extensions that sign on an agent's behalf (mesh cards and envelopes) and check
 * what other agents signed. Every agent has an Ed25519 key pair; its public half is the agent's
 * `did:key` (multicodec 0xed01, base58btc, `did:key:z6Mk…`; docs/identity.md). The secret half never
 * leaves the kernel: {@link AgentKeysAccess.sign} signs inside it.
 *
 * The helpers below are pure (node:crypto and @scure/base), so a third-party extension verifies signatures exactly
 * as the kernel does without importing it.
 */
import { createPublicKey, verify } from 'node:crypto';
import { base58 } from '@scure/base';

/**
 * An agent's public identity.
 *
 * @beta
 */
export interface AgentPublicIdentity {
  /** `did:key:z6Mk…` */
  did: string;
  /** The raw 32-byte Ed25519 public key the DID names. */
  publicKey: Uint8Array;
}

/**
 * `ctx.agents.keys`: a loaded agent's key pair, used without handing out the secret key.
 *
 * @beta
 */
export interface AgentKeysAccess {
  /** The agent's DID and public key; undefined when it is not loaded or has no identity yet. */
  identity(agentId: string): AgentPublicIdentity | undefined;
  /**
   * A detached Ed25519 signature of `message` by the agent's key (64 bytes). Rejects with `not_found`
   * for an agent that is not loaded, and `credentials_locked` while its credentials envelope (which
   * seals the key) is locked or it has no key. Never logs `message`.
   */
  sign(agentId: string, message: Uint8Array): Promise<Uint8Array>;
}

const DID_KEY_PREFIX = 'did:key:z';
/** DER prefix of an Ed25519 SubjectPublicKeyInfo; the 32 key bytes follow. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/**
 * The `did:key` of a raw 32-byte Ed25519 public key.
 *
 * @beta
 */
export function didFromPublicKey(publicKey: Uint8Array): string {
  if (publicKey.length !== 32) throw new RangeError('an Ed25519 public key is 32 bytes');
  const bytes = new Uint8Array(34);
  bytes.set([0xed, 0x01], 0);
  bytes.set(publicKey, 2);
  return DID_KEY_PREFIX + base58.encode(bytes);
}

/**
 * The Ed25519 public key a `did:key` names; throws a RangeError for anything that is not one.
 *
 * @beta
 */
export function publicKeyFromDid(did: string): Uint8Array {
  if (typeof did !== 'string' || !did.startsWith(DID_KEY_PREFIX) || did.length > 128)
    throw new RangeError('not a base58btc did:key');
  let bytes: Uint8Array;
  try {
    bytes = base58.decode(did.slice(DID_KEY_PREFIX.length));
  } catch {
    throw new RangeError('did:key is not valid base58btc');
  }
  if (bytes.length !== 34 || bytes[0] !== 0xed || bytes[1] !== 0x01)
    throw new RangeError('did:key is not an Ed25519 key');
  return bytes.slice(2);
}

/** @beta */
export function isEd25519Did(did: string): boolean {
  try {
    publicKeyFromDid(did);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether `signature` (64 bytes) is `did`'s Ed25519 signature of `message`; false for a bad DID or signature.
 *
 * @beta
 */
export function verifyDidSignature(did: string, message: Uint8Array, signature: Uint8Array): boolean {
  if (signature.length !== 64) return false;
  try {
    const key = createPublicKey({
      key: Buffer.concat([ED25519_SPKI_PREFIX, publicKeyFromDid(did)]),
      format: 'der',
      type: 'spki',
    });
    return verify(null, message, key, signature);
  } catch {
    return false;
  }
}

/**
 * The canonical JSON text that signatures cover: RFC 8785 (JCS), one implementation for the whole
 * project (see `./canonical-json.ts`); refuses non-finite numbers, lone surrogates, non-JSON values and
 * too deep nesting instead of writing them as `JSON.stringify` would.
 */
export { canonicalJson, parseStrictJson } from './canonical-json.js';

/**
 * The one encoding of an Ed25519 signature's 64 bytes: standard base64 (RFC 4648 §4, `+` and `/`) with
 * its padding, exactly 88 characters. Decoding accepts this form only: the text must be what encoding
 * the decoded bytes gives back, byte for byte, so base64url, missing padding, whitespace, trailing
 * characters and non-zero spare bits all fail instead of being skipped by a lenient decoder.
 *
 * @beta
 */
export const SIGNATURE_BASE64 = /^[A-Za-z0-9+/]{86}==$/;

/**
 * The 64 bytes of a signature in the one base64 form above; undefined for anything else.
 *
 * @beta
 */
export function signatureFromBase64(text: unknown): Uint8Array | undefined {
  if (typeof text !== 'string' || !SIGNATURE_BASE64.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length !== 64 || bytes.toString('base64') !== text) return undefined;
  return new Uint8Array(bytes);
}

/**
 * A 64-byte signature in the one base64 form.
 *
 * @beta
 */
export function signatureToBase64(signature: Uint8Array): string {
  if (signature.length !== 64) throw new RangeError('an Ed25519 signature is 64 bytes');
  return Buffer.from(signature).toString('base64');
}

/**
 * `ed25519:<base64>`, the form signatures take in cards and envelopes.
 *
 * @beta
 */
export const formatSignature = (signature: Uint8Array) => `ed25519:${signatureToBase64(signature)}`;

/**
 * The bytes of an `ed25519:<base64>` signature in exactly the form {@link formatSignature} writes; undefined otherwise.
 *
 * @beta
 */
export function parseSignature(text: unknown): Uint8Array | undefined {
  if (typeof text !== 'string' || !text.startsWith('ed25519:')) return undefined;
  return signatureFromBase64(text.slice('ed25519:'.length));
}
