/**
 * The coded errors of the owner identity, one factory per meaning (the model is fastify's `lib/errors.js`).
 * Each body carries the identity's current status as `identity`. Codes, messages and details are API.
 */
import { AgtError } from '@agt/contracts';
import type { IdentityStatus } from './types.js';

/** 409 `identity_not_ready`: `what` needs the owner identity unlocked (`ready`). */
export const identityNotReady = (what: string, identity: IdentityStatus) =>
  new AgtError('identity_not_ready', `${what} needs a ready owner identity (status: ${identity.status})`, {
    details: { identity },
  });

/** 409 `conflict`: create was called while an owner identity exists. */
export const identityExists = (identity: IdentityStatus) =>
  new AgtError('conflict', 'an owner identity already exists', { details: { identity } });

/** 409 `conflict`: create was called while an unusable owner secrets file exists. */
export const identityUnusable = (identity: IdentityStatus) =>
  new AgtError(
    'conflict',
    'an owner identity exists but its file cannot be used: restore it with POST /identity/restore',
    {
      details: { identity },
    },
  );

/** 409 `conflict`: the seed phrase to restore belongs to another owner than the one on this daemon. */
export const seedOfAnotherIdentity = (identity: IdentityStatus) =>
  new AgtError('conflict', 'another owner identity exists on this daemon; the seed phrase does not belong to it', {
    details: { identity },
  });

/** 409 `conflict`: no owner identity exists `purpose` (for example "to unlock"). */
export const noIdentity = (purpose: string, identity: IdentityStatus) =>
  new AgtError('conflict', `there is no owner identity ${purpose}`, { details: { identity } });

/** 409 `conflict`: the owner secrets file is damaged; only a restore from the seed phrase helps. */
export const ownerSecretsDamaged = (identity: IdentityStatus) =>
  new AgtError('conflict', 'the owner secrets file is damaged: restore the identity from its seed phrase', {
    details: { identity },
  });

/** 400 `bad_request`: the seed phrase is not a BIP39 English mnemonic. */
export const invalidSeedPhrase = (identity: IdentityStatus) =>
  new AgtError('bad_request', 'seedPhrase is not a valid BIP39 English mnemonic', { details: { identity } });

/** 403 `wrong_password`: the passphrase does not open the owner secrets file. */
export const wrongPassphrase = (identity: IdentityStatus) =>
  new AgtError('wrong_password', 'wrong passphrase', { details: { identity } });

/** 400 `bad_request`: file storage got no passphrase (`envProblem`: why the environment's could not be read). */
export const passphraseNeeded = (identity: IdentityStatus, envProblem?: string) =>
  new AgtError(
    'bad_request',
    'file storage needs a passphrase: send `passphrase` or start the daemon with AGT_OWNER_PASSPHRASE(_FILE)' +
      (envProblem !== undefined ? ` (${envProblem})` : ''),
    { details: { identity } },
  );
