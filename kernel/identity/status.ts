/** Builds IdentityStatus from what the service knows; the `message` tells the user what to do next. */
import { OWNER_SECRETS_FILE, type OwnerSecretsRead } from './owner-secrets-file.js';
import type { IdentityStatus } from './types.js';

export interface StatusInputs {
  disk: OwnerSecretsRead;
  ready: boolean;
  runtimeDid: string;
  /** AGT_OWNER_PASSPHRASE or a readable AGT_OWNER_PASSPHRASE_FILE: create/restore need no body passphrase. */
  envPassphraseConfigured: boolean;
  /** Why the start-up unlock failed, if it did. Never a secret. */
  note: string | null;
}

export function describeStatus({
  disk,
  ready,
  runtimeDid,
  envPassphraseConfigured,
  note,
}: StatusInputs): IdentityStatus {
  const base = { runtimeDid, storage: 'file' as const };
  if (disk.kind === 'missing') {
    return {
      ...base,
      status: 'none',
      ownerDid: null,
      backupConfirmed: false,
      passphraseRequired: !envPassphraseConfigured,
      message:
        'No owner identity yet: create one with POST /identity/create (the seed phrase is shown once) ' +
        'or restore one with POST /identity/restore {seedPhrase}.' +
        (envPassphraseConfigured ? '' : ' File storage needs a passphrase in the body.'),
    };
  }
  if (disk.kind === 'corrupt') {
    return {
      ...base,
      status: 'restore-needed',
      ownerDid: disk.ownerDid,
      backupConfirmed: false,
      passphraseRequired: !envPassphraseConfigured,
      message: `${OWNER_SECRETS_FILE} cannot be used (${disk.reason}): restore the identity with POST /identity/restore {seedPhrase, passphrase}.`,
    };
  }
  const message = ready
    ? disk.file.backupConfirmed
      ? 'The owner identity is ready.'
      : 'The owner identity is ready. Write the seed phrase down, then call POST /identity/confirm-backup.'
    : 'The owner identity is locked: unlock it with POST /identity/unlock {passphrase}, or start the daemon ' +
      'with AGT_OWNER_PASSPHRASE or AGT_OWNER_PASSPHRASE_FILE.' +
      (note ? ` ${note}` : '');
  return {
    ...base,
    status: ready ? 'ready' : 'locked',
    ownerDid: disk.file.ownerDid,
    backupConfirmed: disk.file.backupConfirmed,
    // Locked file storage always takes a passphrase to unlock.
    passphraseRequired: !ready,
    message,
  };
}
