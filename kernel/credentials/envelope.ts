/**
 * The credentials envelope of one agent file (stored as JSON under `envelope` in `agt_identity`).
 *
 * A random 32-byte wrap key `kw` is sealed (X25519 sealed boxes, `sealTo`) once to the owner's box key
 * and once to this runtime's box key, so either party alone can recover it:
 * - without a password the data key IS `kw`;
 * - with a password (a password-protected agent) the data key is a separate random key, secretboxed
 *   under `H(kw || scrypt(password))`. Opening then needs the owner or the runtime AND the password:
 *   holding the runtime key alone (a copied data directory) is not enough, and neither is the password
 *   alone (a copied agent file).
 * Credential values and the agent's secret key are secretboxed under the data key.
 *
 * This file is pure crypto on the envelope record; when to open it, caching and adoption live in
 * service.ts. Nothing here logs or returns key material except to its caller.
 */
import { randomUUID } from 'node:crypto';
import nacl from 'tweetnacl';
import { deriveKey, kdfParamsProblem, newKdfParams, type ScryptParams } from '../identity/kdf.js';
import { fromBase64, sealTo, toBase64, type SealedBox } from '../identity/sealed-box.js';
import type { IdentityService } from '../identity/types.js';

export const ENVELOPE_KEY = 'envelope';
const KEY_BYTES = 32;
const PASSWORD_DOMAIN = new TextEncoder().encode('agt-envelope-password-v1');

export interface EnvelopeWrap {
  /** Whose X25519 key `box` is sealed to (the owner's DID, or the runtime's DID). */
  did: string;
  box: SealedBox;
}

export interface PasswordWrap {
  kdf: ScryptParams;
  nonce: string;
  /** secretbox(dataKey) under H(kw || scrypt(password)). */
  ct: string;
}

export interface Envelope {
  v: 1;
  /** Random id; sealed values name it, so a value is never opened with another envelope's key. */
  id: string;
  created_at: number;
  wraps: { owner?: EnvelopeWrap; runtime?: EnvelopeWrap };
  password?: PasswordWrap;
}

/** Why an envelope cannot be opened now. */
export type LockReason =
  /** Password-protected and not unlocked with its password since load. */
  | 'password'
  /** Only the owner's wrap fits (a file from another installation) and the owner identity is not ready. */
  | 'owner_locked'
  /** Neither wrap belongs to this runtime or this owner (another owner's file). */
  | 'foreign'
  /** The stored envelope record is malformed; nothing sealed in it can be read. */
  | 'damaged';

export type KwResult =
  | { ok: true; kw: Uint8Array; via: 'runtime' | 'owner' }
  | { ok: false; reason: 'owner_locked' | 'foreign' };

type EnvelopeIdentity = Pick<
  IdentityService,
  | 'ownerDid'
  | 'ownerBoxPublicKey'
  | 'isReady'
  | 'ownerBoxOpen'
  | 'runtimeDid'
  | 'runtimeBoxPublicKey'
  | 'runtimeBoxOpen'
  | 'kdfCost'
>;

/** The data key for a password envelope: secretbox key derived from kw and the password key. */
function passwordBoxKey(kw: Uint8Array, passwordKey: Uint8Array): Uint8Array {
  const input = new Uint8Array(PASSWORD_DOMAIN.length + kw.length + passwordKey.length);
  input.set(PASSWORD_DOMAIN, 0);
  input.set(kw, PASSWORD_DOMAIN.length);
  input.set(passwordKey, PASSWORD_DOMAIN.length + kw.length);
  const key = nacl.hash(input).slice(0, KEY_BYTES);
  input.fill(0);
  return key;
}

/** Wraps `kw` to this runtime, and to the owner when an owner (even a locked one) is known. */
function wrapsFor(identity: EnvelopeIdentity, kw: Uint8Array): Envelope['wraps'] {
  const wraps: Envelope['wraps'] = {
    runtime: { did: identity.runtimeDid, box: sealTo(identity.runtimeBoxPublicKey, kw) },
  };
  if (identity.ownerDid && identity.ownerBoxPublicKey)
    wraps.owner = { did: identity.ownerDid, box: sealTo(identity.ownerBoxPublicKey, kw) };
  return wraps;
}

/** A new envelope without a password; its data key is the wrap key. Synchronous (no KDF). */
export function createPlainEnvelope(identity: EnvelopeIdentity): { envelope: Envelope; dataKey: Uint8Array } {
  const kw = nacl.randomBytes(KEY_BYTES);
  return { envelope: { v: 1, id: randomUUID(), created_at: Date.now(), wraps: wrapsFor(identity, kw) }, dataKey: kw };
}

/**
 * A new password-protected envelope and its data key. The scrypt KDF runs (async, off the event loop) at
 * the identity's cost. The caller keeps the data key only as long as it needs it.
 */
export async function createPasswordEnvelope(
  identity: EnvelopeIdentity,
  password: string,
): Promise<{ envelope: Envelope; dataKey: Uint8Array }> {
  const { envelope, dataKey: kw } = createPlainEnvelope(identity);
  const dataKey = nacl.randomBytes(KEY_BYTES);
  const kdf = newKdfParams(identity.kdfCost);
  const passwordKey = await deriveKey(password, kdf);
  const boxKey = passwordBoxKey(kw, passwordKey);
  const nonce = nacl.randomBytes(nacl.secretbox.nonceLength);
  envelope.password = { kdf, nonce: toBase64(nonce), ct: toBase64(nacl.secretbox(dataKey, nonce, boxKey)) };
  for (const secret of [kw, passwordKey, boxKey]) secret.fill(0);
  return { envelope, dataKey };
}

/** Parses the stored record; null when absent. A malformed record is reported as such (never guessed). */
export function parseEnvelope(raw: Buffer | undefined): Envelope | null | 'malformed' {
  if (!raw) return null;
  try {
    const value = JSON.parse(raw.toString('utf8')) as Envelope;
    if (value?.v !== 1 || typeof value.id !== 'string' || !value.wraps || typeof value.wraps !== 'object')
      return 'malformed';
    if (value.password && kdfParamsProblem(value.password.kdf) !== null) return 'malformed';
    return value;
  } catch {
    return 'malformed';
  }
}

export const serializeEnvelope = (envelope: Envelope): string => JSON.stringify(envelope);

/**
 * Recovers `kw`: through the runtime's wrap when it was made for this runtime, else through the owner's
 * wrap when it is this owner's and the identity is ready. Never throws.
 */
export function openWrapKey(envelope: Envelope, identity: EnvelopeIdentity): KwResult {
  const { runtime, owner } = envelope.wraps;
  if (runtime?.did === identity.runtimeDid) {
    const kw = identity.runtimeBoxOpen(runtime.box);
    if (kw?.length === KEY_BYTES) return { ok: true, kw, via: 'runtime' };
  }
  if (owner && owner.did === identity.ownerDid) {
    if (!identity.isReady()) return { ok: false, reason: 'owner_locked' };
    const kw = identity.ownerBoxOpen(owner.box);
    if (kw?.length === KEY_BYTES) return { ok: true, kw, via: 'owner' };
  }
  return { ok: false, reason: 'foreign' };
}

/** Derives the password key (scrypt with the envelope's own parameters). The caller wipes it. */
export function derivePasswordKey(envelope: Envelope, password: string): Promise<Uint8Array> {
  if (!envelope.password) throw new Error('the envelope has no password');
  return deriveKey(password, envelope.password.kdf);
}

/** The data key of a password envelope, or null when the password key is wrong. */
export function passwordDataKey(envelope: Envelope, kw: Uint8Array, passwordKey: Uint8Array): Uint8Array | null {
  const wrap = envelope.password;
  if (!wrap) return null;
  const boxKey = passwordBoxKey(kw, passwordKey);
  const opened = nacl.secretbox.open(fromBase64(wrap.ct), fromBase64(wrap.nonce), boxKey);
  boxKey.fill(0);
  return opened && opened.length === KEY_BYTES ? opened : null;
}

/**
 * Adds what this installation needs to the envelope, given `kw`: a wrap for this runtime when its
 * runtime wrap was made for another one (a file from another installation, opened by the owner), and
 * an owner wrap when the envelope has none yet. Returns the new record, or null when nothing changed.
 * Another owner's wrap is never replaced.
 */
export function adoptEnvelope(envelope: Envelope, identity: EnvelopeIdentity, kw: Uint8Array): Envelope | null {
  const wraps = { ...envelope.wraps };
  let changed = false;
  if (wraps.runtime?.did !== identity.runtimeDid) {
    wraps.runtime = { did: identity.runtimeDid, box: sealTo(identity.runtimeBoxPublicKey, kw) };
    changed = true;
  }
  if (!wraps.owner && identity.ownerDid && identity.ownerBoxPublicKey) {
    wraps.owner = { did: identity.ownerDid, box: sealTo(identity.ownerBoxPublicKey, kw) };
    changed = true;
  }
  return changed ? { ...envelope, wraps } : null;
}

// ---- values under the data key ----------------------------------------------------------------

/** `nonce || secretbox(plaintext)`: how credential values and the agent key are stored. */
export function sealWithKey(dataKey: Uint8Array, plaintext: Uint8Array): Buffer {
  const nonce = nacl.randomBytes(nacl.secretbox.nonceLength);
  return Buffer.concat([nonce, nacl.secretbox(plaintext, nonce, dataKey)]);
}

/** The plaintext, or null when the bytes were not sealed with this key. */
export function openWithKey(dataKey: Uint8Array, sealed: Uint8Array): Uint8Array | null {
  const n = nacl.secretbox.nonceLength;
  if (sealed.length < n + nacl.secretbox.overheadLength) return null;
  return nacl.secretbox.open(sealed.subarray(n), sealed.subarray(0, n), dataKey);
}
