/**
 * `owner-secrets.json` (mode 0600) in the data directory: the file storage of the owner identity.
 *
 * Public fields (the owner's DID and X25519 public key, the backup flag) are in clear so the daemon can
 * show who the owner is and seal to the owner while locked. The secret part, the 64-byte BIP39 seed
 * (never the phrase, never the passphrase), is sealed with nacl.secretbox under a key from the
 * passphrase KDF ({@link ./kdf.ts}). Unlocking re-derives the keys from the seed and checks that they
 * match the public fields, so a tampered header is detected.
 */
import { existsSync, readFileSync } from 'node:fs';
import nacl from 'tweetnacl';
import { writeFileAtomic } from '../settings.js';
import { isEd25519DidKey } from './did-key.js';
import { deriveKey, kdfParamsProblem, newKdfParams, type KdfCost, type ScryptParams } from './kdf.js';
import { fromBase64, toBase64 } from './sealed-box.js';

export const OWNER_SECRETS_FILE = 'owner-secrets.json';
const FORMAT = 'agt-owner-secrets';
const VERSION = 1;

export interface OwnerSecretsFile {
  format: typeof FORMAT;
  version: typeof VERSION;
  ownerDid: string;
  /** base64 X25519 public key of the owner (derivation path m/44'/0'/1'). */
  ownerBoxPublicKey: string;
  backupConfirmed: boolean;
  createdAt: string;
  updatedAt: string;
  kdf: ScryptParams;
  cipher: 'xsalsa20-poly1305';
  nonce: string;
  ciphertext: string;
}

/** What the secret part holds once decrypted. */
interface SecretPayload {
  v: 1;
  seed: string;
  ownerDid: string;
}

export type OwnerSecretsRead =
  | { kind: 'missing' }
  /** Present but unusable; `ownerDid` when the header still names one. */
  | { kind: 'corrupt'; reason: string; ownerDid: string | null }
  | { kind: 'ok'; file: OwnerSecretsFile };

function shapeProblem(value: unknown): string | null {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return 'not a JSON object';
  const file = value as Record<string, unknown>;
  if (file.format !== FORMAT) return 'not an agt owner secrets file';
  if (file.version !== VERSION) return `unsupported version ${String(file.version)}`;
  if (typeof file.ownerDid !== 'string' || !isEd25519DidKey(file.ownerDid)) return 'ownerDid is not an Ed25519 did:key';
  if (typeof file.ownerBoxPublicKey !== 'string' || fromBase64(file.ownerBoxPublicKey).length !== 32) {
    return 'ownerBoxPublicKey is not a 32-byte key';
  }
  if (typeof file.backupConfirmed !== 'boolean') return 'backupConfirmed is not a boolean';
  const kdf = kdfParamsProblem(file.kdf);
  if (kdf) return kdf;
  if (file.cipher !== 'xsalsa20-poly1305') return `unsupported cipher ${String(file.cipher)}`;
  if (typeof file.nonce !== 'string' || fromBase64(file.nonce).length !== nacl.secretbox.nonceLength)
    return 'bad nonce';
  if (typeof file.ciphertext !== 'string' || fromBase64(file.ciphertext).length <= nacl.secretbox.overheadLength) {
    return 'bad ciphertext';
  }
  return null;
}

export function readOwnerSecrets(path: string): OwnerSecretsRead {
  if (!existsSync(path)) return { kind: 'missing' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    return { kind: 'corrupt', reason: `cannot be read as JSON (${(error as Error).message})`, ownerDid: null };
  }
  const problem = shapeProblem(parsed);
  if (problem) {
    const did = (parsed as { ownerDid?: unknown } | null)?.ownerDid;
    return { kind: 'corrupt', reason: problem, ownerDid: typeof did === 'string' && isEd25519DidKey(did) ? did : null };
  }
  return { kind: 'ok', file: parsed as OwnerSecretsFile };
}

export function writeOwnerSecrets(path: string, file: OwnerSecretsFile): void {
  writeFileAtomic(path, `${JSON.stringify(file, null, 2)}\n`, 0o600);
}

export interface PublicOwnerFields {
  ownerDid: string;
  ownerBoxPublicKey: Uint8Array;
  backupConfirmed: boolean;
  createdAt?: string;
}

/** Seals the seed under a fresh salt and nonce. */
export async function sealOwnerSecrets(
  seed: Uint8Array,
  passphrase: string,
  fields: PublicOwnerFields,
  cost?: KdfCost,
): Promise<OwnerSecretsFile> {
  const kdf = newKdfParams(cost);
  const key = await deriveKey(passphrase, kdf);
  const payload: SecretPayload = { v: 1, seed: toBase64(seed), ownerDid: fields.ownerDid };
  const plaintext = new TextEncoder().encode(JSON.stringify(payload));
  const nonce = nacl.randomBytes(nacl.secretbox.nonceLength);
  const ciphertext = nacl.secretbox(plaintext, nonce, key);
  key.fill(0);
  plaintext.fill(0);
  const now = new Date().toISOString();
  return {
    format: FORMAT,
    version: VERSION,
    ownerDid: fields.ownerDid,
    ownerBoxPublicKey: toBase64(fields.ownerBoxPublicKey),
    backupConfirmed: fields.backupConfirmed,
    createdAt: fields.createdAt ?? now,
    updatedAt: now,
    kdf,
    cipher: 'xsalsa20-poly1305',
    nonce: toBase64(nonce),
    ciphertext: toBase64(ciphertext),
  };
}

export type OpenResult =
  | { kind: 'ok'; seed: Uint8Array }
  | { kind: 'wrong_password' }
  | { kind: 'corrupt'; reason: string };

/** Decrypts the seed. A failed tag means a wrong passphrase (or a damaged ciphertext: they look alike). */
export async function openOwnerSecrets(file: OwnerSecretsFile, passphrase: string): Promise<OpenResult> {
  const key = await deriveKey(passphrase, file.kdf);
  const plaintext = nacl.secretbox.open(fromBase64(file.ciphertext), fromBase64(file.nonce), key);
  key.fill(0);
  if (!plaintext) return { kind: 'wrong_password' };
  try {
    const payload = JSON.parse(new TextDecoder().decode(plaintext)) as SecretPayload;
    const seed = typeof payload.seed === 'string' ? fromBase64(payload.seed) : new Uint8Array();
    if (payload.v !== 1 || seed.length !== 64) return { kind: 'corrupt', reason: 'secret part has an unknown shape' };
    if (payload.ownerDid !== file.ownerDid) return { kind: 'corrupt', reason: 'secret part names another owner' };
    return { kind: 'ok', seed };
  } catch {
    return { kind: 'corrupt', reason: 'secret part is not JSON' };
  } finally {
    plaintext.fill(0);
  }
}
