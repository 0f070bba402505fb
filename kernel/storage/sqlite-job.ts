/**
 * Runs one SQLite job of a backup or restore on a worker thread (`sqlite-worker.mjs`): its own libsql
 * connection, so a copy of a large file never blocks the daemon's event loop or its connection.
 */
import { statSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { libsql } from '../agents/libsql.js';
import { verify } from './sqlite-check.mjs';

export interface SqliteCheck {
  /** `ok`, or the first problems `PRAGMA integrity_check` found. */
  integrity: string;
  schemaVersion: number;
  /** The file has the agent-file marker table (`agt_config`). */
  marker: boolean;
}

export type SqliteJob = { op: 'copy'; src: string; dst: string } | { op: 'verify'; path: string };

export class SqliteJobError extends Error {
  constructor(
    readonly sqliteCode: string,
    message: string,
  ) {
    super(message);
  }
}

const WORKER = new URL('./sqlite-worker.mjs', import.meta.url);
/** The jobs under way, ended by {@link endSqliteJobs} at shutdown (a copy of a large file can take long). */
const running = new Set<Worker>();

/** How many jobs are under way. */
export const sqliteJobsRunning = (): number => running.size;

/** Ends every job under way; each rejects with `WORKER_EXIT` and its caller removes what it wrote. */
export async function endSqliteJobs(): Promise<void> {
  await Promise.all([...running].map((worker) => worker.terminate()));
}

/** Resolves with the check of the copy (or of the verified file); rejects with {@link SqliteJobError}. */
export function runSqliteJob(job: SqliteJob): Promise<SqliteCheck> {
  return new Promise((resolve, reject) => {
    // Plain JavaScript: no loader of the parent's (`--import tsx`) is needed, and none is paid for.
    const worker = new Worker(WORKER, { workerData: job, execArgv: [] });
    running.add(worker);
    let settled = false;
    worker.once('message', (reply: { ok: boolean; code?: string; message?: string } & SqliteCheck) => {
      settled = true;
      if (reply.ok) resolve({ integrity: reply.integrity, schemaVersion: reply.schemaVersion, marker: reply.marker });
      else reject(new SqliteJobError(reply.code ?? 'SQLITE_ERROR', reply.message ?? 'SQLite failed'));
    });
    worker.once('error', (error) => {
      settled = true;
      reject(new SqliteJobError('WORKER_ERROR', error.message));
    });
    worker.once('exit', (code) => {
      running.delete(worker);
      if (!settled) reject(new SqliteJobError('WORKER_EXIT', `the SQLite worker exited with code ${code}`));
    });
  });
}

/**
 * Files (with their WAL) up to this size are verified on the event loop: a worker thread costs about 50 ms of
 * CPU to start, more than their check takes (a new agent's file is about 230 KB). The check reads pages, never
 * a stored value, on a read-only connection that does not trust the file's schema, as the worker does.
 */
export const INLINE_VERIFY_MAX_BYTES = 1024 * 1024;

const sizeOf = (path: string) => statSync(path, { throwIfNoEntry: false })?.size ?? 0;

/** Checks the file at `path` (as `runSqliteJob({op: 'verify'})`), on the event loop when it is small. */
export async function verifySqliteFile(path: string): Promise<SqliteCheck> {
  if (sizeOf(path) + sizeOf(`${path}-wal`) > INLINE_VERIFY_MAX_BYTES) return runSqliteJob({ op: 'verify', path });
  try {
    return verify(libsql(), path, 5_000);
  } catch (error) {
    const failure = error as { code?: unknown; message?: unknown };
    throw new SqliteJobError(String(failure?.code ?? 'SQLITE_ERROR'), String(failure?.message ?? error));
  }
}
