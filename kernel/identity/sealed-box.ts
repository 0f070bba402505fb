/**
 * Anonymous sealing to an X25519 public key: a fresh ephemeral key pair per message and nacl.box
 * (X25519 + XSalsa20-Poly1305). Only the holder of the recipient's secret key can open it.
 *
 * This is the building block of credential envelopes: a random data key is sealed once to the owner's
 * box key and once to the runtime's, so either party alone can unwrap it.
 */
import nacl from 'tweetnacl';
// tweetnacl's box with the X25519 arithmetic done by Node's crypto: the same bytes (nacl-node.ts).
import { boxFromEphemeral, boxOpen } from './nacl-node.js';

/** A sealed message, JSON-ready (base64 fields), so it can be stored in an agent file as text. */
export interface SealedBox {
  /** Ephemeral X25519 public key of the sender. */
  epk: string;
  nonce: string;
  /** Ciphertext with its Poly1305 tag. */
  ct: string;
}

export const toBase64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64');
export const fromBase64 = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'base64'));

export function sealTo(recipientPublicKey: Uint8Array, plaintext: Uint8Array): SealedBox {
  if (recipientPublicKey.length !== nacl.box.publicKeyLength) throw new RangeError('an X25519 public key is 32 bytes');
  const nonce = nacl.randomBytes(nacl.box.nonceLength);
  // A fresh ephemeral key pair per message, wiped inside.
  const { ct, ephemeralPublicKey } = boxFromEphemeral(plaintext, nonce, recipientPublicKey);
  return { epk: toBase64(ephemeralPublicKey), nonce: toBase64(nonce), ct: toBase64(ct) };
}

/** The plaintext, or null when the box is malformed or was not sealed to this key. */
export function openSealed(sealed: SealedBox, recipientSecretKey: Uint8Array): Uint8Array | null {
  if (!sealed || typeof sealed.epk !== 'string' || typeof sealed.nonce !== 'string' || typeof sealed.ct !== 'string') {
    return null;
  }
  const epk = fromBase64(sealed.epk);
  const nonce = fromBase64(sealed.nonce);
  const ct = fromBase64(sealed.ct);
  if (
    epk.length !== nacl.box.publicKeyLength ||
    nonce.length !== nacl.box.nonceLength ||
    ct.length < nacl.box.overheadLength
  ) {
    return null;
  }
  return boxOpen(ct, nonce, epk, recipientSecretKey);
}
