/** The daemon's own secret files in the data directory: the bearer token and the local proof. */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from './settings.js';

/** 32 random bytes as 64 hex characters: what a well-formed token file holds. */
const TOKEN_PATTERN = /^[0-9a-f]{64}$/;

const newSecret = () => randomBytes(32).toString('hex');

/**
 * The bearer token: `AGT_DAEMON_TOKEN` wins; else `daemon-token` (0600) is read, and written fresh when
 * missing or malformed. Deleting the file and restarting rotates the token.
 */
export function loadToken(dataDir: string, fromEnv: string | undefined): { token: string; source: 'env' | 'file' } {
  if (fromEnv) return { token: fromEnv, source: 'env' };
  const path = join(dataDir, 'daemon-token');
  if (existsSync(path)) {
    const existing = readFileSync(path, 'utf8').trim();
    if (TOKEN_PATTERN.test(existing)) {
      // A token someone made world-readable is put back to owner-only rather than trusted as is.
      if ((statSync(path).mode & 0o777) !== 0o600) chmodSync(path, 0o600);
      return { token: existing, source: 'file' };
    }
  }
  const token = newSecret();
  writeFileAtomic(path, `${token}\n`);
  return { token, source: 'file' };
}

/** A new local proof for this run, written to `daemon-local-proof` (0600) at every start. */
export function writeLocalProof(dataDir: string): string {
  const proof = newSecret();
  writeFileAtomic(join(dataDir, 'daemon-local-proof'), `${proof}\n`);
  return proof;
}
