/**
 * tweetnacl's public-key operations done by Node's crypto (OpenSSL), with byte-identical results:
 * tweetnacl's pure-JS X25519 and Ed25519 cost ~2-5 ms per operation plus garbage-collector work, about
 * 20 ms of every created agent. Only the curve arithmetic moves; every format stays tweetnacl's (and
 * test/identity-nacl-node.test.ts checks each function against tweetnacl on random inputs):
 * - X25519: a public key from a 32-byte secret; `box` / `box.open` = the shared secret by X25519
 *   (`diffieHellman`), then tweetnacl's own HSalsa20 and XSalsa20-Poly1305 (which Node lacks). When
 *   OpenSSL refuses a shared secret (a low-order public key makes it all zeros; tweetnacl carries on
 *   with it), the whole operation falls back to tweetnacl, so even such inputs answer as before.
 * - Ed25519: the key pair of a seed (tweetnacl's 64-byte secret key: seed, then public key), and
 *   detached signatures (RFC 8032 signatures are deterministic: the same 64 bytes as tweetnacl's for a
 *   secret key whose second half is the seed's public key, the only kind tweetnacl and this module make).
 * This module is the kernel's one way to do curve work: nothing else calls tweetnacl's X25519 or Ed25519,
 * and a signature is verified with the package's `verifyDidSignature` (Node's crypto too). Node's crypto
 * over @noble/curves and tweetnacl: ~10x faster than either per operation (docs/performance.md, "The
 * curve work").
 */
import {
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  randomBytes,
  sign as nodeSign,
  type KeyObject,
} from 'node:crypto';
import nacl from 'tweetnacl';

export const KEY_BYTES = 32;

// DER prefixes of a raw 32-byte key: PKCS#8 private (X25519 secret, Ed25519 seed) and SPKI public.
const PKCS8_PREFIX = {
  X25519: Buffer.from('302e020100300506032b656e04220420', 'hex'),
  Ed25519: Buffer.from('302e020100300506032b657004220420', 'hex'),
} as const;
const X25519_SPKI = Buffer.from('302a300506032b656e032100', 'hex');
type Curve = keyof typeof PKCS8_PREFIX;
/** JWK needs `x` beside `d`; Node builds a private key from `d` alone, so any 32 bytes do. */
const PLACEHOLDER_X = Buffer.alloc(32).toString('base64url');

/** tweetnacl's lowlevel HSalsa20 (exported by nacl-fast.js, absent from its typings). */
const lowlevel = (
  nacl as unknown as {
    lowlevel: { crypto_core_hsalsa20(out: Uint8Array, inp: Uint8Array, k: Uint8Array, c: Uint8Array): void };
  }
).lowlevel;
const SIGMA = new TextEncoder().encode('expand 32-byte k');
const ZERO16 = new Uint8Array(16);

function checkLength(bytes: Uint8Array, length: number, what: string): void {
  if (!(bytes instanceof Uint8Array) || bytes.length !== length)
    throw new RangeError(`${what} must be ${length} bytes`);
}

/**
 * A private key object of a raw 32-byte key. As a JWK (~40 us) rather than PKCS#8 DER (~450 us: OpenSSL
 * 3's decoders); DER is the fallback should a Node version refuse the JWK form.
 */
function privateKeyObject(curve: Curve, secret: Uint8Array): KeyObject {
  try {
    return createPrivateKey({
      key: {
        kty: 'OKP',
        crv: curve,
        d: Buffer.from(secret.buffer, secret.byteOffset, secret.length).toString('base64url'),
        x: PLACEHOLDER_X,
      },
      format: 'jwk',
    });
  } catch {
    const der = Buffer.concat([PKCS8_PREFIX[curve], secret]);
    try {
      return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
    } finally {
      der.fill(0);
    }
  }
}

/**
 * Public key objects of the few recipients sealed to again and again (this runtime's and the owner's box
 * keys: two per created agent), by their bytes. Public material only; bounded.
 */
const recipientKeys = new Map<string, KeyObject>();
const RECIPIENT_KEYS_MAX = 8;

function recipientKeyObject(publicKey: Uint8Array): KeyObject {
  const id = Buffer.from(publicKey.buffer, publicKey.byteOffset, publicKey.length).toString('base64');
  let key = recipientKeys.get(id);
  if (key === undefined) {
    key = x25519PublicKeyObject(publicKey);
    if (recipientKeys.size >= RECIPIENT_KEYS_MAX) recipientKeys.delete(recipientKeys.keys().next().value!);
    recipientKeys.set(id, key);
  }
  return key;
}

function x25519PublicKeyObject(publicKey: Uint8Array): KeyObject {
  try {
    return createPublicKey({
      key: {
        kty: 'OKP',
        crv: 'X25519',
        x: Buffer.from(publicKey.buffer, publicKey.byteOffset, publicKey.length).toString('base64url'),
      },
      format: 'jwk',
    });
  } catch {
    return createPublicKey({ key: Buffer.concat([X25519_SPKI, publicKey]), format: 'der', type: 'spki' });
  }
}

const publicKeyBytes = (privateKey: KeyObject): Uint8Array =>
  new Uint8Array(Buffer.from(createPublicKey(privateKey).export({ format: 'jwk' }).x!, 'base64url'));

/** `nacl.box.keyPair.fromSecretKey(secret).publicKey`. */
export function x25519PublicKey(secret: Uint8Array): Uint8Array {
  checkLength(secret, KEY_BYTES, 'an X25519 secret key');
  return publicKeyBytes(privateKeyObject('X25519', secret));
}

/** `nacl.box.keyPair.fromSecretKey(secret)` (the secret is copied). */
export function boxKeyPairFromSecret(secret: Uint8Array): nacl.BoxKeyPair {
  return { publicKey: x25519PublicKey(secret), secretKey: secret.slice() };
}

/** `nacl.box.keyPair()`: a random secret and its public key. */
export function boxKeyPair(): nacl.BoxKeyPair {
  const secretKey = new Uint8Array(randomBytes(KEY_BYTES));
  return { publicKey: x25519PublicKey(secretKey), secretKey };
}

/** `nacl.box.before(theirPublicKey, mySecretKey)`, or null when OpenSSL refuses the shared secret. */
function beforeNode(
  theirPublicKey: Uint8Array,
  mySecretKey: Uint8Array | KeyObject,
  recipient = false,
): Uint8Array | null {
  let shared: Buffer;
  try {
    shared = diffieHellman({
      privateKey: mySecretKey instanceof Uint8Array ? privateKeyObject('X25519', mySecretKey) : mySecretKey,
      // A box opened (an ephemeral key each time) is not worth a cache slot; a recipient sealed to is.
      publicKey: recipient ? recipientKeyObject(theirPublicKey) : x25519PublicKeyObject(theirPublicKey),
    });
  } catch {
    return null;
  }
  const key = new Uint8Array(KEY_BYTES);
  lowlevel.crypto_core_hsalsa20(key, ZERO16, shared, SIGMA);
  shared.fill(0);
  return key;
}

/** `nacl.box.before`: the shared XSalsa20-Poly1305 key of a key pair and a peer's public key. */
export function boxBefore(theirPublicKey: Uint8Array, mySecretKey: Uint8Array): Uint8Array {
  checkLength(theirPublicKey, KEY_BYTES, 'an X25519 public key');
  checkLength(mySecretKey, KEY_BYTES, 'an X25519 secret key');
  return beforeNode(theirPublicKey, mySecretKey) ?? nacl.box.before(theirPublicKey, mySecretKey);
}

/**
 * `nacl.box(message, nonce, theirPublicKey, ephemeral.secretKey)` for a fresh random key pair, returned
 * with its public key: the sealed-box step (sealed-box.ts) with one private key object for both the
 * public key and the shared secret, where {@link boxKeyPair} then {@link box} made it twice.
 */
export function boxFromEphemeral(
  message: Uint8Array,
  nonce: Uint8Array,
  theirPublicKey: Uint8Array,
): { ct: Uint8Array; ephemeralPublicKey: Uint8Array } {
  checkLength(theirPublicKey, KEY_BYTES, 'an X25519 public key');
  const secretKey = new Uint8Array(randomBytes(KEY_BYTES));
  try {
    const privateKey = privateKeyObject('X25519', secretKey);
    const ephemeralPublicKey = publicKeyBytes(privateKey);
    const key = beforeNode(theirPublicKey, privateKey, true) ?? nacl.box.before(theirPublicKey, secretKey);
    try {
      return { ct: nacl.secretbox(message, nonce, key), ephemeralPublicKey };
    } finally {
      key.fill(0);
    }
  } finally {
    secretKey.fill(0);
  }
}

/** `nacl.box(message, nonce, theirPublicKey, mySecretKey)`. */
export function box(
  message: Uint8Array,
  nonce: Uint8Array,
  theirPublicKey: Uint8Array,
  mySecretKey: Uint8Array,
): Uint8Array {
  const key = boxBefore(theirPublicKey, mySecretKey);
  try {
    return nacl.secretbox(message, nonce, key);
  } finally {
    key.fill(0);
  }
}

/** `nacl.box.open(box, nonce, theirPublicKey, mySecretKey)`: the message, or null. */
export function boxOpen(
  ciphertext: Uint8Array,
  nonce: Uint8Array,
  theirPublicKey: Uint8Array,
  mySecretKey: Uint8Array,
): Uint8Array | null {
  const key = boxBefore(theirPublicKey, mySecretKey);
  try {
    return nacl.secretbox.open(ciphertext, nonce, key);
  } finally {
    key.fill(0);
  }
}

/** `nacl.sign.keyPair.fromSeed(seed)`: tweetnacl's layout, the 64-byte secret key is seed then public key. */
export function signKeyPairFromSeed(seed: Uint8Array): nacl.SignKeyPair {
  checkLength(seed, KEY_BYTES, 'an Ed25519 seed');
  const publicKey = publicKeyBytes(privateKeyObject('Ed25519', seed));
  const secretKey = new Uint8Array(64);
  secretKey.set(seed);
  secretKey.set(publicKey, KEY_BYTES);
  return { publicKey, secretKey };
}

/**
 * `nacl.sign.detached(message, secretKey)` for a 64-byte tweetnacl secret key whose second half is its
 * seed's public key (what `nacl.sign.keyPair*` and {@link signKeyPairFromSeed} make). Any other key is
 * signed by tweetnacl itself, so the bytes are tweetnacl's in every case.
 */
export function signDetached(message: Uint8Array, secretKey: Uint8Array): Uint8Array {
  return ed25519Signer(secretKey)(message);
}

/**
 * {@link signDetached} with the key object made (and its public half checked) once, for a key that signs
 * again and again (the owner's and the runtime's: two attestations per created agent). The
 * signer reads `secretKey` only now (or, for the tweetnacl fallback, at each call): its holder drops it
 * when the key is wiped (owner.ts).
 */
export function ed25519Signer(secretKey: Uint8Array): (message: Uint8Array) => Uint8Array {
  checkLength(secretKey, 64, 'an Ed25519 secret key');
  const key = privateKeyObject('Ed25519', secretKey.subarray(0, KEY_BYTES));
  const publicKey = publicKeyBytes(key);
  if (!Buffer.from(publicKey).equals(Buffer.from(secretKey.buffer, secretKey.byteOffset + KEY_BYTES, KEY_BYTES))) {
    return (message) => nacl.sign.detached(message, secretKey);
  }
  return (message) => new Uint8Array(nodeSign(null, message, key));
}
