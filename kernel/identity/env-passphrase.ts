/**
 * The passphrase given to the daemon by its environment: `AGT_OWNER_PASSPHRASE`, else the content of
 * the file `AGT_OWNER_PASSPHRASE_FILE` (one trailing line break removed, as editors add one). Read on
 * demand so a rotated file is picked up; the value is never logged.
 */
import { readFileSync } from 'node:fs';

export interface PassphraseSource {
  ownerPassphrase: string | undefined;
  ownerPassphraseFile: string | undefined;
}

export type EnvPassphrase =
  | { kind: 'none' }
  | { kind: 'ok'; passphrase: string; from: 'AGT_OWNER_PASSPHRASE' | 'AGT_OWNER_PASSPHRASE_FILE' }
  | { kind: 'unreadable'; reason: string };

export function readEnvPassphrase(env: PassphraseSource): EnvPassphrase {
  if (env.ownerPassphrase) return { kind: 'ok', passphrase: env.ownerPassphrase, from: 'AGT_OWNER_PASSPHRASE' };
  if (!env.ownerPassphraseFile) return { kind: 'none' };
  try {
    const passphrase = readFileSync(env.ownerPassphraseFile, 'utf8').replace(/\r?\n$/, '');
    if (passphrase === '') return { kind: 'unreadable', reason: 'AGT_OWNER_PASSPHRASE_FILE is empty' };
    return { kind: 'ok', passphrase, from: 'AGT_OWNER_PASSPHRASE_FILE' };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    return { kind: 'unreadable', reason: `AGT_OWNER_PASSPHRASE_FILE cannot be read (${code})` };
  }
}
