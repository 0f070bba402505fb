/**
 * The owner identity service (`kernel.identity`): its state machine, file storage and key operations.
 *
 * States (IdentityStatus.status):
 * - `none`: no `owner-secrets.json`; create or restore.
 * - `locked`: the file is sound but this process has not decrypted it (every start with file storage,
 *   unless AGT_OWNER_PASSPHRASE / AGT_OWNER_PASSPHRASE_FILE unlocks it, and after `lock`).
 * - `restore-needed`: the file exists but cannot be used (not JSON, unknown format or version, bad
 *   parameters, or a secret part that contradicts its public part); restore from the seed phrase.
 * - `ready`: decrypted; the owner keys are in memory only, wiped on lock and at shutdown.
 * Mutations run one at a time (they await the KDF), so two racing creates cannot both succeed.
 */
import { renameSync } from 'node:fs';
import { join } from 'node:path';
import nacl from 'tweetnacl';
import type { AgtError, Logger } from '@agt/contracts';
import {
  identityExists,
  identityNotReady,
  identityUnusable,
  invalidSeedPhrase,
  noIdentity,
  ownerSecretsDamaged,
  passphraseNeeded,
  seedOfAnotherIdentity,
  wrongPassphrase,
} from './errors.js';
import { readEnvPassphrase, type PassphraseSource } from './env-passphrase.js';
import { isValidMnemonic, newMnemonic, seedFromMnemonic } from './mnemonic.js';
import { ed25519Signer } from './nacl-node.js';
import { deriveOwnerKeys, wipeOwnerKeys, type OwnerKeys } from './owner-keys.js';
import {
  OWNER_SECRETS_FILE,
  openOwnerSecrets,
  readOwnerSecrets,
  sealOwnerSecrets,
  writeOwnerSecrets,
  type OwnerSecretsFile,
  type OwnerSecretsRead,
} from './owner-secrets-file.js';
import { PRODUCTION_KDF, type KdfCost } from './kdf.js';
import type { RuntimeKeys } from './runtime-keys.js';
import { fromBase64, openSealed, type SealedBox } from './sealed-box.js';
import { describeStatus } from './status.js';
import type { IdentityService, IdentityStatus } from './types.js';

export interface OwnerIdentityOptions {
  dataDir: string;
  env: PassphraseSource;
  logger: Logger;
  runtime: RuntimeKeys;
  /** The scrypt cost of secrets written from now on (default: the production cost). */
  kdfCost?: KdfCost;
}

export class OwnerIdentity implements IdentityService {
  readonly path: string;
  private disk: OwnerSecretsRead;
  private keys: OwnerKeys | null = null;
  /**
   * Signers of the owner's keys (made at the first signature, dropped with the keys by `wipe`) and of the
   * runtime's: each created agent takes one signature of each, and a key object per signature
   * was the larger part of its cost.
   */
  private ownerSigner: { keys: OwnerKeys; sign: (message: Uint8Array) => Uint8Array } | null = null;
  private runtimeSigner: ((message: Uint8Array) => Uint8Array) | null = null;
  /** A hint appended to the status message (why the start-up unlock failed). No secrets. */
  private note: string | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly listeners = new Set<(status: IdentityStatus) => void>();
  private lastStatus: string;

  readonly kdfCost: KdfCost;

  constructor(private readonly options: OwnerIdentityOptions) {
    this.kdfCost = options.kdfCost ?? PRODUCTION_KDF;
    this.path = join(options.dataDir, OWNER_SECRETS_FILE);
    this.disk = readOwnerSecrets(this.path);
    this.lastStatus = JSON.stringify(this.status());
  }

  // ---- status -------------------------------------------------------------------------------------

  status(): IdentityStatus {
    return describeStatus({
      disk: this.disk,
      ready: this.keys !== null,
      runtimeDid: this.options.runtime.did,
      // Read (not just "is it set"): an unreadable passphrase file must not promise a passphrase-less create.
      envPassphraseConfigured: readEnvPassphrase(this.options.env).kind === 'ok',
      note: this.note,
    });
  }

  isReady(): boolean {
    return this.keys !== null;
  }

  onChange(listener: (status: IdentityStatus) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** 409 `identity_not_ready` carrying the current status, for every operation that needs the owner. */
  notReadyError(what = 'this operation'): AgtError {
    return identityNotReady(what, this.status());
  }

  // ---- keys ---------------------------------------------------------------------------------------

  get ownerDid(): string | null {
    if (this.disk.kind === 'ok') return this.disk.file.ownerDid;
    return this.disk.kind === 'corrupt' ? this.disk.ownerDid : null;
  }

  get ownerBoxPublicKey(): Uint8Array | null {
    return this.disk.kind === 'ok' ? fromBase64(this.disk.file.ownerBoxPublicKey) : null;
  }

  ownerSign(message: Uint8Array): Uint8Array {
    if (!this.keys) throw this.notReadyError('signing as the owner');
    if (this.ownerSigner?.keys !== this.keys)
      this.ownerSigner = { keys: this.keys, sign: ed25519Signer(this.keys.signing.secretKey) };
    return this.ownerSigner.sign(message);
  }

  ownerBoxOpen(sealed: SealedBox): Uint8Array | null {
    if (!this.keys) throw this.notReadyError('opening a box sealed to the owner');
    return openSealed(sealed, this.keys.box.secretKey);
  }

  get runtimeDid(): string {
    return this.options.runtime.did;
  }

  get runtimeBoxPublicKey(): Uint8Array {
    return this.options.runtime.box.publicKey;
  }

  runtimeBoxOpen(sealed: SealedBox): Uint8Array | null {
    return openSealed(sealed, this.options.runtime.box.secretKey);
  }

  runtimeSign(message: Uint8Array): Uint8Array {
    // The runtime's keys live as long as the process (runtime-keys.ts).
    this.runtimeSigner ??= ed25519Signer(this.options.runtime.signing.secretKey);
    return this.runtimeSigner(message);
  }

  // ---- transitions --------------------------------------------------------------------------------

  /** Start-up: unlock with the environment's passphrase when one is configured. Never throws. */
  async unlockFromEnvironment(): Promise<void> {
    if (this.disk.kind !== 'ok') return;
    const env = readEnvPassphrase(this.options.env);
    if (env.kind === 'none') return;
    if (env.kind === 'unreadable') {
      this.note = `${env.reason}.`;
      this.options.logger.warn(`owner identity stays locked: ${env.reason}`);
      return this.changed();
    }
    await this.serial(async () => {
      const outcome = await this.tryUnlock(env.passphrase);
      if (outcome === 'wrong_password') {
        this.note = `${env.from} did not unlock it.`;
        this.options.logger.warn(`owner identity stays locked: ${env.from} is not its passphrase`);
      } else if (outcome === 'ok') {
        this.options.logger.info(`owner identity unlocked from ${env.from}`);
      }
    });
  }

  /** Creates a new identity; the returned phrase must reach exactly one response and nothing else. */
  create(passphrase?: string): Promise<{ identity: IdentityStatus; seedPhrase: string }> {
    return this.serial(async () => {
      if (this.disk.kind !== 'missing') {
        throw this.disk.kind === 'corrupt' ? identityUnusable(this.status()) : identityExists(this.status());
      }
      const secret = this.passphraseFor(passphrase);
      const seedPhrase = newMnemonic();
      await this.store(seedFromMnemonic(seedPhrase), secret, false);
      return { identity: this.status(), seedPhrase };
    });
  }

  /**
   * Restores from a seed phrase. Allowed in `none` and `restore-needed` (a damaged file is moved aside
   * as `owner-secrets.json.corrupt-<time>`), and in `locked` / `ready` only for the same owner: that
   * re-encrypts the file under the new passphrase (the way back from a forgotten passphrase).
   */
  restore(seedPhrase: string, passphrase?: string): Promise<{ identity: IdentityStatus }> {
    return this.serial(async () => {
      if (!isValidMnemonic(seedPhrase)) {
        throw invalidSeedPhrase(this.status());
      }
      const seed = seedFromMnemonic(seedPhrase);
      const did = deriveOwnerKeys(seed);
      const sameOwner = did.did === this.ownerDid;
      wipeOwnerKeys(did);
      if (this.disk.kind === 'ok' && !sameOwner) {
        seed.fill(0);
        throw seedOfAnotherIdentity(this.status());
      }
      const secret = this.passphraseFor(passphrase);
      if (this.disk.kind === 'corrupt') {
        const aside = `${this.path}.corrupt-${Date.now()}`;
        renameSync(this.path, aside);
        this.options.logger.warn({ movedTo: aside }, 'damaged owner secrets file moved aside before restore');
      }
      const createdAt = this.disk.kind === 'ok' ? this.disk.file.createdAt : undefined;
      // Whoever restores holds the phrase, so the backup is evidently done.
      await this.store(seed, secret, true, createdAt);
      return { identity: this.status() };
    });
  }

  unlock(passphrase: string): Promise<{ identity: IdentityStatus }> {
    return this.serial(async () => {
      if (this.disk.kind !== 'ok') throw noIdentity('to unlock', this.status());
      const outcome = await this.tryUnlock(passphrase);
      if (outcome === 'wrong_password') {
        throw wrongPassphrase(this.status());
      }
      if (outcome === 'corrupt') throw ownerSecretsDamaged(this.status());
      return { identity: this.status() };
    });
  }

  lock(): Promise<{ identity: IdentityStatus }> {
    return this.serial(async () => {
      if (this.disk.kind !== 'ok') throw noIdentity('to lock', this.status());
      this.wipe();
      this.changed();
      return { identity: this.status() };
    });
  }

  confirmBackup(): Promise<{ identity: IdentityStatus }> {
    return this.serial(async () => {
      if (this.disk.kind !== 'ok') throw noIdentity('whose backup could be confirmed', this.status());
      if (!this.disk.file.backupConfirmed) {
        // Only the public part changes; the sealed seed is kept as it is.
        const file: OwnerSecretsFile = {
          ...this.disk.file,
          backupConfirmed: true,
          updatedAt: new Date().toISOString(),
        };
        writeOwnerSecrets(this.path, file);
        this.disk = { kind: 'ok', file };
        this.changed();
      }
      return { identity: this.status() };
    });
  }

  /** Forgets the owner keys (lock, shutdown). */
  wipe(): void {
    if (this.keys) wipeOwnerKeys(this.keys);
    this.keys = null;
    this.ownerSigner = null;
  }

  // ---- internals ----------------------------------------------------------------------------------

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** The body's passphrase, else the environment's; 400 when file storage gets none. */
  private passphraseFor(given: string | undefined): string {
    if (given) return given;
    const env = readEnvPassphrase(this.options.env);
    if (env.kind === 'ok') return env.passphrase;
    throw passphraseNeeded(this.status(), env.kind === 'unreadable' ? env.reason : undefined);
  }

  private async tryUnlock(passphrase: string): Promise<'ok' | 'wrong_password' | 'corrupt'> {
    if (this.disk.kind !== 'ok') return 'corrupt';
    const file = this.disk.file;
    const opened = await openOwnerSecrets(file, passphrase);
    if (opened.kind === 'wrong_password') return 'wrong_password';
    if (opened.kind === 'ok') {
      const keys = deriveOwnerKeys(opened.seed);
      opened.seed.fill(0);
      const boxMatches = nacl.verify(keys.box.publicKey, fromBase64(file.ownerBoxPublicKey));
      if (keys.did === file.ownerDid && boxMatches) {
        this.wipe();
        this.keys = keys;
        this.note = null;
        this.changed();
        return 'ok';
      }
      wipeOwnerKeys(keys);
    }
    const reason = opened.kind === 'corrupt' ? opened.reason : 'its keys do not match its public part';
    this.wipe();
    this.disk = { kind: 'corrupt', reason, ownerDid: file.ownerDid };
    this.options.logger.error(`${OWNER_SECRETS_FILE} is damaged: ${reason}`);
    this.changed();
    return 'corrupt';
  }

  /** Seals the seed to disk under `passphrase`, then holds the derived keys: the identity is ready. */
  private async store(
    seed: Uint8Array,
    passphrase: string,
    backupConfirmed: boolean,
    createdAt?: string,
  ): Promise<void> {
    const keys = deriveOwnerKeys(seed);
    try {
      const file = await sealOwnerSecrets(
        seed,
        passphrase,
        {
          ownerDid: keys.did,
          ownerBoxPublicKey: keys.box.publicKey,
          backupConfirmed,
          createdAt,
        },
        this.kdfCost,
      );
      writeOwnerSecrets(this.path, file);
      this.disk = { kind: 'ok', file };
    } catch (error) {
      wipeOwnerKeys(keys);
      throw error;
    } finally {
      seed.fill(0);
    }
    this.wipe();
    this.keys = keys;
    this.note = null;
    this.changed();
  }

  /** Tells listeners when anything of the status changed. A throwing listener is logged and skipped. */
  private changed(): void {
    const status = this.status();
    const serialized = JSON.stringify(status);
    if (serialized === this.lastStatus) return;
    this.lastStatus = serialized;
    for (const listener of this.listeners) {
      try {
        listener(status);
      } catch (error) {
        this.options.logger.error({ err: error }, 'identity change listener failed');
      }
    }
  }
}
