/**
 * The memory-hard passphrase KDF that protects `owner-secrets.json`: scrypt (N=2^17, r=8, p=1, about
 * 128 MiB and a few hundred ms per attempt). Node's native scrypt is used rather than a JS one: the
 * same function, several times faster, and it runs off the event loop. The parameters are stored in the
 * file, so stronger defaults later still open older files.
 */
import { randomBytes, scrypt } from 'node:crypto';

export interface ScryptParams {
  name: 'scrypt';
  /** CPU/memory cost, a power of two. */
  N: number;
  r: number;
  p: number;
  dkLen: 32;
  /** base64, 16 random bytes per file write. */
  salt: string;
}

/** The scrypt cost of a newly written file. */
export interface KdfCost {
  N: number;
  r: number;
  p: number;
}

export const PRODUCTION_KDF: KdfCost = { N: 2 ** 17, r: 8, p: 1 };

/**
 * Fresh parameters for a file written now. The cost is the daemon's (`startDaemon({kdfCost})`, which
 * tests lower); a file keeps its own parameters, so nothing written at the production cost gets weaker.
 */
export function newKdfParams(cost: KdfCost = PRODUCTION_KDF): ScryptParams {
  return { name: 'scrypt', N: cost.N, r: cost.r, p: cost.p, dkLen: 32, salt: randomBytes(16).toString('base64') };
}

/**
 * Why a file's parameters are refused, or null when acceptable. Bounds keep a crafted file from making
 * the daemon allocate gigabytes, and from downgrading to a trivially cheap cost.
 */
export function kdfParamsProblem(value: unknown): string | null {
  if (!value || typeof value !== 'object') return 'kdf parameters missing';
  const params = value as Record<string, unknown>;
  if (params.name !== 'scrypt') return `unsupported kdf ${String(params.name)}`;
  const { N, r, p, dkLen, salt } = params;
  if (typeof N !== 'number' || !Number.isInteger(N) || N < 2 ** 10 || N > 2 ** 20 || (N & (N - 1)) !== 0) {
    return 'scrypt N must be a power of two between 2^10 and 2^20';
  }
  if (typeof r !== 'number' || !Number.isInteger(r) || r < 1 || r > 32) return 'scrypt r out of range';
  if (typeof p !== 'number' || !Number.isInteger(p) || p < 1 || p > 16) return 'scrypt p out of range';
  if (dkLen !== 32) return 'kdf dkLen must be 32';
  if (typeof salt !== 'string' || Buffer.from(salt, 'base64').length < 16) return 'kdf salt must be at least 16 bytes';
  return null;
}

/** The 32-byte secretbox key for a passphrase. The caller wipes it after use. */
export function deriveKey(passphrase: string, params: ScryptParams): Promise<Uint8Array> {
  const password = Buffer.from(passphrase.normalize('NFKC'), 'utf8');
  const salt = Buffer.from(params.salt, 'base64');
  // scrypt needs 128 * N * r bytes; Node refuses above `maxmem` (32 MiB by default).
  const maxmem = 128 * params.N * params.r * 2 + 1024 * 1024;
  return new Promise((resolve, reject) => {
    scrypt(password, salt, params.dkLen, { N: params.N, r: params.r, p: params.p, maxmem }, (error, key) => {
      password.fill(0);
      if (error) reject(error);
      else resolve(new Uint8Array(key.buffer, key.byteOffset, key.length));
    });
  });
}
