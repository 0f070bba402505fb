/**
 * The coded errors of backups, restores, storage quotas and Agent File (.af) import/export, one factory
 * per meaning. Codes and statuses are API (docs/backups.md lists them).
 */
import { AgtError } from '@agt/contracts';

/** 400 `bad_request`: a backup or restore path that is not absolute. */
export const pathNotAbsolute = (what: string, path: string) =>
  new AgtError('bad_request', `${what} must be an absolute path: ${path}`, { details: { path } });

/**
 * 403 `backup_path_refused`: the path is inside the daemon's agent work folders (an agent's commands could read or
 * replace it).
 */
export const backupPathRefused = (path: string, why: string) =>
  new AgtError('backup_path_refused', `${path}: ${why}`, { status: 403, details: { path } });

/** 400 `bad_request`: the folder of a backup or restore target does not exist. */
export const folderMissing = (path: string) =>
  new AgtError(
    'bad_request',
    `the folder of ${path} does not exist: make it first (a path ending in / names a folder, made when its parent exists)`,
    { details: { path } },
  );

/** 409 `conflict`: the backup target exists (a backup never overwrites). */
export const backupTargetExists = (path: string) =>
  new AgtError('conflict', `${path} exists; a backup never overwrites a file`, { details: { path } });

/** 500 `backup_failed`: the copy could not be made or did not pass its check; nothing was left behind. */
export const backupFailed = (filePath: string, message: string, cause?: unknown) =>
  new AgtError('backup_failed', `backup of ${filePath} failed: ${message}`, {
    status: 500,
    details: { filePath },
    cause,
  });

/** 404 `not_found`: the file to restore from does not exist. */
export const restoreSourceMissing = (path: string) =>
  new AgtError('not_found', `${path} does not exist`, { details: { path } });

/**
 * 422 `backup_invalid`: the file to restore is not a sound agent-file backup (`reason`: corrupt, foreign, newer,
 * integrity).
 */
export const backupInvalid = (path: string, reason: string, message: string) =>
  new AgtError('backup_invalid', `${path}: ${message}`, { status: 422, details: { path, reason } });

/** 403 `backup_sealed_to_another_owner`: the sealed backup's key is sealed to another owner identity. */
export const sealedToAnotherOwner = (path: string, ownerDid: string) =>
  new AgtError(
    'backup_sealed_to_another_owner',
    `${path} is sealed to another owner (${ownerDid}); restore it where that identity is unlocked`,
    {
      status: 403,
      details: { path, ownerDid },
    },
  );

/** 409 `restore_target_loaded`: the restore target is the file of a loaded agent (never overwritten). */
export const restoreTargetLoaded = (path: string, agentId: string) =>
  new AgtError(
    'restore_target_loaded',
    `${path} is the file of the loaded agent ${agentId}; a restore never overwrites it (stop the agent, or restore elsewhere)`,
    {
      status: 409,
      details: { path, agentId },
    },
  );

/** 409 `restore_target_exists`: the restore target exists (a restore never overwrites a file). */
export const restoreTargetExists = (path: string) =>
  new AgtError('restore_target_exists', `${path} exists; a restore never overwrites a file (give another \`to\`)`, {
    status: 409,
    details: { path },
  });

/** 409 `agent_already_loaded`: an agent with the backup's id is loaded (restore as new for a copy beside it). */
export const restoredIdLoaded = (agentId: string, filePath: string) =>
  new AgtError(
    'agent_already_loaded',
    `agent ${agentId} is loaded from ${filePath}; stop it first, or restore it as a new agent (agt restore --as-new, or asNew: true) for a copy under a new identity`,
    {
      status: 409,
      details: { agentId, filePath },
    },
  );

/** 507 `storage_quota_exceeded`: the agent's own write would grow its file past the owner's quota. */
export const storageQuotaExceeded = (quotaBytes: number, what: string) =>
  new AgtError(
    'storage_quota_exceeded',
    `${what} would pass this agent's storage quota of ${quotaBytes} bytes (settings storage.quotaBytes / agentQuotas); delete data first`,
    {
      status: 507,
      details: { quotaBytes },
    },
  );

/** 400 `bad_request`: a Letta Agent File (.af) that does not parse or lacks what an agent needs. */
export const agentFileFormatInvalid = (message: string) =>
  new AgtError('bad_request', `not a usable Letta Agent File (.af): ${message}`);
