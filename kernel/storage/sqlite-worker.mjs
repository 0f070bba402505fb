// The SQLite side of backups and restores, on a worker thread with a connection of its own (never the
// daemon's event loop, never the daemon's connection): the agent's turns keep writing while a copy is
// made. Plain JavaScript importing only libsql and its sibling scripts (loaded without the TypeScript loader).
//
// workerData: {op: 'copy', src, dst, readonly} | {op: 'verify', path}
// reply:      {ok: true, schemaVersion, integrity: 'ok', marker: boolean} | {ok: false, code, message}
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'libsql';
import { check, verify } from './sqlite-check.mjs';
import { vacuumCopy } from './vacuum-copy.mjs';

const BUSY_TIMEOUT_MS = 5_000;

function copy({ src, dst }) {
  return vacuumCopy(Database, src, dst, { busyTimeoutMs: BUSY_TIMEOUT_MS }, check);
}

try {
  const result = workerData.op === 'copy' ? copy(workerData) : verify(Database, workerData.path, BUSY_TIMEOUT_MS);
  parentPort.postMessage({ ok: true, ...result });
} catch (error) {
  parentPort.postMessage({
    ok: false,
    code: String(error?.code ?? 'SQLITE_ERROR'),
    message: String(error?.message ?? error),
  });
}
