/**
 * `ctx.secrets`: an extension's sealed secrets of the daemon, in `extension-secrets/<name>.json` (0600,
 * folder 0700). A random 32-byte data key encrypts each value (nacl.secretbox, a fresh nonce per write);
 * the data key is sealed to this runtime's X25519 key and, when the owner identity exists, to the
 * owner's, as agent credential envelopes are (docs/credentials.md): the runtime opens it without the
 * owner, and a copied data directory without the runtime key opens it only with the owner's identity.
 * Writes are serialised per store and replace the file atomically.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import nacl from 'tweetnacl';
import { badRequest, type ExtensionSecrets } from '@agt/contracts';
import type { IdentityService } from '../identity/types.js';
import { fromBase64, sealTo, toBase64, type SealedBox } from '../identity/sealed-box.js';
import { writeFileAtomic } from '../settings.js';

const FORMAT = 'agt-extension-secrets';
const NAME = /^[A-Za-z0-9][A-Za-z0-9:_.-]{0,199}$/;
const MAX_VALUE = 256 * 1024;

interface StoreFile {
  format: typeof FORMAT;
  version: 1;
  key: { runtime: SealedBox; owner?: SealedBox };
  values: Record<string, { nonce: string; ct: string }>;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function extensionSecrets(dataDir: string, extension: string, identity: IdentityService): ExtensionSecrets {
  const dir = join(dataDir, 'extension-secrets');
  const path = join(dir, `${extension}.json`);
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => T): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => {});
    return next;
  };

  const read = (): StoreFile | undefined => {
    if (!existsSync(path)) return undefined;
    try {
      const parsed = JSON.parse(readFileSync(path, 'utf8')) as StoreFile;
      return parsed?.format === FORMAT && parsed.values && parsed.key?.runtime ? parsed : undefined;
    } catch {
      return undefined;
    }
  };
  const dataKey = (file: StoreFile): Uint8Array | null => {
    const viaRuntime = identity.runtimeBoxOpen(file.key.runtime);
    if (viaRuntime) return viaRuntime;
    return file.key.owner && identity.isReady() ? identity.ownerBoxOpen(file.key.owner) : null;
  };
  const checkName = (name: string) => {
    if (typeof name !== 'string' || !NAME.test(name))
      throw badRequest('a secret name is 1 to 200 letters, digits, :, _, . or -');
  };

  return Object.freeze({
    get: (name: string) =>
      serial(() => {
        checkName(name);
        const file = read();
        const entry = file?.values[name];
        if (!file || !entry) return undefined;
        const key = dataKey(file);
        if (!key) return undefined;
        const plain = nacl.secretbox.open(fromBase64(entry.ct), fromBase64(entry.nonce), key);
        return plain ? decoder.decode(plain) : undefined;
      }),
    set: (name: string, value: string) =>
      serial(() => {
        checkName(name);
        if (typeof value !== 'string' || value.length > MAX_VALUE)
          throw badRequest(`a secret value is a string of at most ${MAX_VALUE} characters`);
        let file = read();
        let key = file ? dataKey(file) : null;
        if (!file || !key) {
          // No store yet, or one this daemon cannot open (copied from elsewhere): start a fresh one.
          key = nacl.randomBytes(nacl.secretbox.keyLength);
          const owner = identity.ownerBoxPublicKey;
          file = {
            format: FORMAT,
            version: 1,
            key: {
              runtime: sealTo(identity.runtimeBoxPublicKey, key),
              ...(owner ? { owner: sealTo(owner, key) } : {}),
            },
            values: {},
          };
        }
        const nonce = nacl.randomBytes(nacl.secretbox.nonceLength);
        file.values[name] = {
          nonce: toBase64(nonce),
          ct: toBase64(nacl.secretbox(encoder.encode(value), nonce, key)),
        };
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        writeFileAtomic(path, `${JSON.stringify(file)}\n`);
      }),
    delete: (name: string) =>
      serial(() => {
        checkName(name);
        const file = read();
        if (!file || !(name in file.values)) return false;
        delete file.values[name];
        writeFileAtomic(path, `${JSON.stringify(file)}\n`);
        return true;
      }),
    names: () => serial(() => Object.keys(read()?.values ?? {}).sort()),
  });
}
