/**
 * The owner identity's public shapes: the IdentityStatus resource as a TypeBox schema,
 * and the service other kernel modules reach as `kernel.identity`.
 */
import { Type, type Static } from 'typebox';
import type { SealedBox } from './sealed-box.js';
import type { KdfCost } from './kdf.js';

export const IdentityState = Type.Union([
  Type.Literal('none'),
  Type.Literal('locked'),
  Type.Literal('restore-needed'),
  Type.Literal('ready'),
]);
export type IdentityState = Static<typeof IdentityState>;

export const IdentityStatusSchema = Type.Object(
  {
    status: IdentityState,
    ownerDid: Type.Union([Type.String(), Type.Null()]),
    runtimeDid: Type.Union([Type.String(), Type.Null()]),
    storage: Type.Union([Type.Literal('keychain'), Type.Literal('file')]),
    backupConfirmed: Type.Boolean(),
    passphraseRequired: Type.Boolean(),
    message: Type.String(),
  },
  { additionalProperties: false, description: 'Owner identity state (never key material)' },
);
export type IdentityStatus = Static<typeof IdentityStatusSchema>;

/**
 * The owner identity and this runtime's own keys. Methods that need the owner's secrets throw
 * `identity_not_ready` (409, with `identity` in the body) unless the status is `ready`; the runtime's
 * keys are always available. Nothing here returns or logs secret material.
 */
export interface IdentityService {
  status(): IdentityStatus;
  isReady(): boolean;
  /** The owner's DID, known while locked too (from the file's public part); null with no identity. */
  readonly ownerDid: string | null;
  /** Owner's X25519 public key (seal to it with `sealTo`); known while locked; null with no identity. */
  readonly ownerBoxPublicKey: Uint8Array | null;
  /** Detached Ed25519 signature by the owner key. Ready only. */
  ownerSign(message: Uint8Array): Uint8Array;
  /** Opens a box sealed to the owner's X25519 key; null when it was not sealed to it. Ready only. */
  ownerBoxOpen(sealed: SealedBox): Uint8Array | null;

  readonly runtimeDid: string;
  readonly runtimeBoxPublicKey: Uint8Array;
  runtimeBoxOpen(sealed: SealedBox): Uint8Array | null;
  runtimeSign(message: Uint8Array): Uint8Array;

  /** The scrypt cost of passphrase- and password-protected secrets written from now on. */
  readonly kdfCost: KdfCost;

  /**
   * Called after every change of the status (create, restore, unlock, lock, backup confirmed), with
   * the new status. Listeners must not throw or block; returns the unsubscribe function.
   */
  onChange(listener: (status: IdentityStatus) => void): () => void;
}
