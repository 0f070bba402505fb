/**
 * This daemon's own key pairs, generated on first start and kept in the data directory:
 * - `runtime-enc-key` (0600): `{"kty":"X25519","secretKey":"<base64>"}`, the envelope key: credential
 *   data keys are sealed to it (and to the owner) so the runtime can open them without the owner.
 * - `runtime-enc-key.pub` (0644): `{"kty":"X25519","publicKey":"<base64>"}`, derived; rewritten when
 *   missing or inconsistent.
 * - `runtime-sign-key` (0600): `{"kty":"Ed25519","seed":"<base64>","did":"did:key:z6Mk..."}`; its public
 *   key is the `runtimeDid` used for runtime stamps.
 * A damaged secret file is moved aside (`<name>.corrupt-<time>`, kept for recovery) and replaced.
 */
import { chmodSync, existsSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import nacl from 'tweetnacl';
import type { Logger } from '@agt/contracts';
import { writeFileAtomic } from '../settings.js';
import { didKeyFromEd25519 } from './did-key.js';
// Key pairs by Node's crypto: the same bytes as tweetnacl's, ~10x faster (nacl-node.ts).
import { boxKeyPairFromSecret as boxKeyPair, signKeyPairFromSeed as signKeyPair } from './nacl-node.js';
import { fromBase64, toBase64 } from './sealed-box.js';

export const RUNTIME_ENC_KEY_FILE = 'runtime-enc-key';
export const RUNTIME_ENC_PUB_FILE = 'runtime-enc-key.pub';
export const RUNTIME_SIGN_KEY_FILE = 'runtime-sign-key';

export interface RuntimeKeys {
  did: string;
  box: nacl.BoxKeyPair;
  signing: nacl.SignKeyPair;
}

/** Reads one 32-byte base64 field of a JSON key file; null when missing or malformed. */
function readKeyField(path: string, kty: string, field: string): Uint8Array | null | 'corrupt' {
  if (!existsSync(path)) return null;
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    const value = parsed[field];
    if (parsed.kty !== kty || typeof value !== 'string') return 'corrupt';
    const bytes = fromBase64(value);
    return bytes.length === 32 ? bytes : 'corrupt';
  } catch {
    return 'corrupt';
  }
}

function moveAside(path: string, logger: Logger): void {
  const aside = `${path}.corrupt-${Date.now()}`;
  renameSync(path, aside);
  logger.warn({ file: path, movedTo: aside }, 'runtime key file was damaged; moved aside and generating a new key');
}

/** Loads the secret key of one file, or generates and writes a new one. */
function loadOrCreate(
  path: string,
  kty: string,
  field: string,
  extra: (key: Uint8Array) => Record<string, string>,
  logger: Logger,
): Uint8Array {
  const existing = readKeyField(path, kty, field);
  if (existing instanceof Uint8Array) {
    // Someone may have loosened the mode; the secret must stay owner-only.
    chmodSync(path, 0o600);
    return existing;
  }
  if (existing === 'corrupt') moveAside(path, logger);
  const key = nacl.randomBytes(32);
  writeFileAtomic(path, `${JSON.stringify({ kty, [field]: toBase64(key), ...extra(key) })}\n`, 0o600);
  return key;
}

export function loadOrCreateRuntimeKeys(dataDir: string, logger: Logger): RuntimeKeys {
  const encPath = join(dataDir, RUNTIME_ENC_KEY_FILE);
  const boxSecret = loadOrCreate(encPath, 'X25519', 'secretKey', () => ({}), logger);
  const box = boxKeyPair(boxSecret);
  boxSecret.fill(0);

  const pubPath = join(dataDir, RUNTIME_ENC_PUB_FILE);
  const pub = readKeyField(pubPath, 'X25519', 'publicKey');
  if (!(pub instanceof Uint8Array) || !nacl.verify(pub, box.publicKey)) {
    writeFileAtomic(pubPath, `${JSON.stringify({ kty: 'X25519', publicKey: toBase64(box.publicKey) })}\n`, 0o644);
  }

  const signSeed = loadOrCreate(
    join(dataDir, RUNTIME_SIGN_KEY_FILE),
    'Ed25519',
    'seed',
    (seed) => ({ did: didKeyFromEd25519(signKeyPair(seed).publicKey) }),
    logger,
  );
  const signing = signKeyPair(signSeed);
  signSeed.fill(0);
  return { did: didKeyFromEd25519(signing.publicKey), box, signing };
}
