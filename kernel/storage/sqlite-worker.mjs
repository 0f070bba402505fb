// The SQLite side of backups and restores, on a worker thread with a connection of its own (never the
// daemon's event loop, never the daemon's connection): the agent's turns keep writing while a copy is
// made. Plain JavaScript importing only libsql (loaded without the TypeScript loader).
//
// workerData: {op: 'copy', src, dst, readonly} | {op: 'verify', path}
// reply:      {ok: true, schemaVersion, integrity: 'ok', marker: boolean} | {ok: false, code, message}
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'libsql';
import { vacuumCopy } from './vacuum-copy.mjs';

const BUSY_TIMEOUT_MS = 5_000;
const MARKER_TABLE = 'agt_config';

/** integrity_check (first problems only), user_version and the agent-file marker of an open connection. */
function check(db) {
  const problems = db
    .prepare('PRAGMA integrity_check(5)')
    .all()
    .map((row) => String(row.integrity_check));
  const integrity = problems.length === 1 && problems[0] === 'ok' ? 'ok' : problems.join('; ');
  const marker =
    db.prepare("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = ?").get(MARKER_TABLE) !== undefined;
  return { integrity, schemaVersion: Number(db.prepare('PRAGMA user_version').get()?.user_version ?? 0), marker };
}

function copy({ src, dst }) {
  return vacuumCopy(Database, src, dst, { busyTimeoutMs: BUSY_TIMEOUT_MS }, check);
}

function verify({ path }) {
  const db = new Database(path, { readonly: true, timeout: BUSY_TIMEOUT_MS });
  try {
    db.exec('PRAGMA trusted_schema = OFF');
    return check(db);
  } finally {
    db.close();
  }
}

try {
  const result = workerData.op === 'copy' ? copy(workerData) : verify(workerData);
  parentPort.postMessage({ ok: true, ...result });
} catch (error) {
  parentPort.postMessage({
    ok: false,
    code: String(error?.code ?? 'SQLITE_ERROR'),
    message: String(error?.message ?? error),
  });
}
