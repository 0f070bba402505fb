/**
 * Online backups of agent files (docs/backups.md). A copy is made by SQLite's
 * `VACUUM INTO` on a worker thread with a read-only connection of its own (`sqlite-job.ts`): one read
 * transaction, so the copy is a consistent snapshot of what was committed when it began, while the
 * agent's turns go on writing through the WAL. The copy then loses the live lease row, passes
 * `PRAGMA integrity_check`, is sealed to the owner when asked (`seal.ts`) and is linked into place
 * (never over an existing file). Nothing is left behind when any step fails.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, linkSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { AgtError, type EventBus, type Logger, type Settings } from '@agt/contracts';
import { identityNotReady } from '../identity/errors.js';
import type { IdentityService } from '../identity/types.js';
import { backupFailed, backupTargetExists } from './errors.js';
import { backupName, backupTarget } from './paths.js';
import { sealFile } from './seal.js';
import { runSqliteJob, SqliteJobError } from './sqlite-job.js';

export interface BackupResult {
  agentId: string;
  path: string;
  bytes: number;
  sha256: string;
  schemaVersion: number;
  sealed: boolean;
}

export interface BackupOptions {
  /** An existing folder, or a new file in one (absolute); default the agent's folder under the backups dir. */
  path?: string;
  seal?: boolean;
  /** A copy made by the schedule (its event says so). */
  scheduled?: boolean;
  /** The agent's folder when no `path` is given (the schedule's, fixed when its run began); default from settings. */
  dir?: string;
  /**
   * Runs once the copy is in place, before `backup.completed`: the schedule's retention (returns the paths it removed).
   */
  prune?: (result: BackupResult) => string[];
}

export interface BackupDeps {
  dataDir: string;
  settings: { current(): Readonly<Settings> };
  identity: Pick<IdentityService, 'ownerDid' | 'ownerBoxPublicKey' | 'status'>;
  bus: EventBus;
  logger: Logger;
}

/** The backups folder: settings `backups.dir`, else `<data dir>/backups`. */
export function backupsRoot(deps: Pick<BackupDeps, 'dataDir' | 'settings'>): string {
  return deps.settings.current().backups?.dir ?? join(deps.dataDir, 'backups');
}

/** The folder of an agent's copies: `<backups folder>/<agent id>`. */
export function agentBackupDir(deps: Pick<BackupDeps, 'dataDir' | 'settings'>, agentId: string): string {
  return join(backupsRoot(deps), agentId);
}

/** SHA-256 (hex) and size of a file, streamed. */
export function hashFile(path: string): Promise<{ sha256: string; bytes: number }> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    let bytes = 0;
    createReadStream(path)
      .on('data', (chunk) => {
        hash.update(chunk);
        bytes += chunk.length;
      })
      .on('error', reject)
      .on('end', () => resolve({ sha256: hash.digest('hex'), bytes }));
  });
}

function removeQuietly(path: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${path}${suffix}`, { force: true });
}

/**
 * Copies the agent file `filePath` (loaded or not) of agent `agentId`. Emits `backup.completed` or
 * `backup.failed` for the agent; rejects with the coded error (`backup_failed` 500 for SQLite's own
 * failures, the path errors of paths.ts, 409 `identity_not_ready` when sealing without an owner).
 */
export async function backupFile(
  deps: BackupDeps,
  filePath: string,
  agentId: string,
  options: BackupOptions = {},
): Promise<BackupResult> {
  const scheduled = options.scheduled === true;
  const seal = options.seal === true;
  let target: string | null = null;
  try {
    const ownerDid = deps.identity.ownerDid;
    const ownerKey = deps.identity.ownerBoxPublicKey;
    // Sealing needs only the owner's public key: a locked identity can seal, none cannot.
    if (seal && (!ownerDid || !ownerKey))
      throw identityNotReady('sealing a backup to the owner', deps.identity.status());
    const folder = options.dir ?? agentBackupDir(deps, agentId);
    target = backupTarget(deps.dataDir, options.path, folder, backupName(agentId, seal));
    // The clear copy is made where nobody else reads: beside the target for a plain backup (linked into
    // place), in the data directory (0700) for a sealed one, so a shared disk never holds it in the clear.
    const tempDir = seal ? join(deps.dataDir, 'backups-tmp') : dirname(target);
    if (seal) mkdirSync(tempDir, { recursive: true, mode: 0o700 });
    const temp = join(tempDir, `.${agentId}-${randomBytes(6).toString('hex')}.partial`);
    // 0600 from the start (VACUUM INTO accepts an empty file; it would create one with the umask's mode).
    writeFileSync(temp, '', { flag: 'wx', mode: 0o600 });
    try {
      let check: Awaited<ReturnType<typeof runSqliteJob>>;
      try {
        check = await runSqliteJob({ op: 'copy', src: filePath, dst: temp });
      } catch (error) {
        throw error instanceof SqliteJobError
          ? backupFailed(filePath, `${error.sqliteCode}: ${error.message}`, error)
          : error;
      }
      if (check.integrity !== 'ok')
        throw backupFailed(filePath, `the copy fails its integrity check: ${check.integrity}`);
      if (!check.marker) throw backupFailed(filePath, 'the copy is not an agent file');
      let result: { bytes: number; sha256: string };
      if (seal) {
        try {
          result = await sealFile(
            temp,
            target,
            { did: ownerDid!, boxPublicKey: ownerKey! },
            { agentId, schemaVersion: check.schemaVersion },
          );
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw backupTargetExists(target);
          throw error;
        }
      } else {
        try {
          linkSync(temp, target);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw backupTargetExists(target);
          throw error;
        }
        result = await hashFile(target);
      }
      const done: BackupResult = {
        agentId,
        path: target,
        bytes: result.bytes,
        sha256: result.sha256,
        schemaVersion: check.schemaVersion,
        sealed: seal,
      };
      let removed: string[] = [];
      try {
        removed = options.prune?.(done) ?? [];
      } catch (error) {
        deps.logger.warn({ err: error, agentId }, 'backup retention failed');
      }
      deps.bus.emit('backup.completed', {
        agentId,
        payload: {
          path: done.path,
          bytes: done.bytes,
          sha256: done.sha256,
          schema_version: done.schemaVersion,
          sealed: seal,
          scheduled,
          removed,
        },
      });
      return done;
    } catch (error) {
      // Only a file this call made is removed (a target that existed was refused before anything was written).
      if (!(error instanceof AgtError && error.code === 'conflict') && target) rmSync(target, { force: true });
      throw error;
    } finally {
      removeQuietly(temp);
    }
  } catch (error) {
    const coded = error instanceof AgtError ? error : backupFailed(filePath, (error as Error).message, error);
    deps.bus.emit('backup.failed', {
      agentId,
      payload: { path: target, code: coded.code, error: coded.message, scheduled, file_path: filePath },
    });
    throw coded;
  }
}
