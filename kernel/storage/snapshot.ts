/**
 * `ctx.agents.snapshots` (contracts/agent-replication.ts): a consistent copy of a running agent's file for
 * an extension that replicates it, after every turn. `snapshot`: made by SQLite's `VACUUM INTO` (one read
 * transaction: what was committed when it began, the WAL included) on a connection of its own, then the live
 * lease row is deleted from the copy, in `<data dir>/snapshots-tmp` (0700, files 0600); handed to the caller
 * and removed once it is done; no event, no retention. A file up to {@link INLINE_MAX_BYTES} is copied on the
 * event loop (a few milliseconds: a worker thread costs more to start than the copy takes); a larger one on a
 * worker thread as a backup is (sqlite-job.ts, with `PRAGMA integrity_check`). `pages`: a file up to that size
 * read as its pages in memory (page-image.ts), no file written, under a millisecond for a new agent's file.
 * Neither copy is integrity-checked here: where it is restored, `POST /agents/restore` checks it.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentPageImage, AgentSnapshot } from '@agt/contracts';
import { libsql } from '../agents/libsql.js';
import type { Sql } from '../agents/sql.js';
import { hashFile } from './backup.js';
import { backupFailed } from './errors.js';
import { readPageImage } from './page-image.js';
import { runSqliteJob, SqliteJobError } from './sqlite-job.js';
import { vacuumCopy } from './vacuum-copy.mjs';

/** Files (with their WAL) up to this size are copied on the event loop. */
export const INLINE_MAX_BYTES = 4 * 1024 * 1024;
const BUSY_TIMEOUT_MS = 5_000;

const sizeOf = (path: string) => statSync(path, { throwIfNoEntry: false })?.size ?? 0;

/** VACUUM INTO without fsync (a passing copy), the lease row out; the copy's schema version and marker. */
const copyInline = (src: string, dst: string) =>
  vacuumCopy(libsql(), src, dst, { busyTimeoutMs: BUSY_TIMEOUT_MS, passing: true }, (copied) => {
    const version = copied.prepare('PRAGMA user_version').get() as { user_version?: number } | undefined;
    const marker =
      copied.prepare("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = 'agt_config'").get() !==
      undefined;
    return { schemaVersion: Number(version?.user_version ?? 0), marker };
  });

async function copyOnWorker(src: string, dst: string): Promise<{ schemaVersion: number; marker: boolean }> {
  const check = await runSqliteJob({ op: 'copy', src, dst });
  if (check.integrity !== 'ok') throw backupFailed(src, `the copy fails its integrity check: ${check.integrity}`);
  return check;
}

/**
 * `ctx.agents.snapshots.pages`: a small file's pages in memory (page-image.ts), on the agent's own connection;
 * undefined for a file above {@link INLINE_MAX_BYTES} or one that cannot be read so now.
 */
export function pageImage(agentId: string, filePath: string, live: Sql): AgentPageImage | undefined {
  if (sizeOf(filePath) + sizeOf(`${filePath}-wal`) > INLINE_MAX_BYTES) return undefined;
  let image: ReturnType<typeof readPageImage>;
  try {
    image = readPageImage(live);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('SQLITE'))
      throw backupFailed(filePath, `${code}: ${(error as Error).message}`, error);
    throw error;
  }
  if (!image) return undefined;
  if (!image.marker) throw backupFailed(filePath, 'the copy is not an agent file');
  const { data, pageSize, schemaVersion } = image;
  return { agentId, data, pageSize, schemaVersion, sha256: createHash('sha256').update(data).digest('hex') };
}

export async function snapshotFile<T>(
  dataDir: string,
  agentId: string,
  filePath: string,
  use: (copy: AgentSnapshot) => Promise<T>,
): Promise<T> {
  const folder = join(dataDir, 'snapshots-tmp');
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const path = join(folder, `.${agentId}-${randomBytes(6).toString('hex')}.agt`);
  // 0600 from the start (VACUUM INTO accepts an empty file; it would create one with the umask's mode).
  writeFileSync(path, '', { flag: 'wx', mode: 0o600 });
  try {
    let check: { schemaVersion: number; marker: boolean };
    try {
      check =
        sizeOf(filePath) + sizeOf(`${filePath}-wal`) <= INLINE_MAX_BYTES
          ? copyInline(filePath, path)
          : await copyOnWorker(filePath, path);
    } catch (error) {
      if (error instanceof SqliteJobError) throw backupFailed(filePath, `${error.sqliteCode}: ${error.message}`, error);
      const code = (error as { code?: unknown }).code;
      if (typeof code === 'string' && code.startsWith('SQLITE'))
        throw backupFailed(filePath, `${code}: ${(error as Error).message}`, error);
      throw error;
    }
    if (!check.marker) throw backupFailed(filePath, 'the copy is not an agent file');
    const { sha256, bytes } = await hashFile(path);
    return await use({ agentId, path, bytes, sha256, schemaVersion: check.schemaVersion });
  } finally {
    for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${path}${suffix}`, { force: true });
  }
}
