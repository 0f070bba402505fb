/**
 * Runs one SQLite job of a backup or restore on a worker thread (`sqlite-worker.mjs`): its own libsql
 * connection, so a copy of a large file never blocks the daemon's event loop or its connection.
 */
import { Worker } from 'node:worker_threads';

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
