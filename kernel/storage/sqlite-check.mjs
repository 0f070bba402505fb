// The checks of a backup or restored copy, shared by the SQLite worker (sqlite-worker.mjs) and the inline
// verify of a small file (sqlite-job.ts). Plain JavaScript importing nothing: the worker loads it without the
// TypeScript loader.

const MARKER_TABLE = 'agt_config';

/** integrity_check (first problems only), user_version and the agent-file marker of an open connection. */
export function check(db) {
  const problems = db
    .prepare('PRAGMA integrity_check(5)')
    .all()
    .map((row) => String(row.integrity_check));
  const integrity = problems.length === 1 && problems[0] === 'ok' ? 'ok' : problems.join('; ');
  const marker =
    db.prepare("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = ?").get(MARKER_TABLE) !== undefined;
  return { integrity, schemaVersion: Number(db.prepare('PRAGMA user_version').get()?.user_version ?? 0), marker };
}

/** Opens `path` read-only, without trusting its schema, and checks it. */
export function verify(Database, path, busyTimeoutMs) {
  const db = new Database(path, { readonly: true, timeout: busyTimeoutMs });
  try {
    db.exec('PRAGMA trusted_schema = OFF');
    return check(db);
  } finally {
    db.close();
  }
}
