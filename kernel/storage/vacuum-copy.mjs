// A copy of an agent file as a backup or a replica takes it (plain JavaScript: the backup worker,
// sqlite-worker.mjs, imports it without the TypeScript loader; snapshot.ts on the event loop).
//
// VACUUM INTO: one read transaction of the source (a consistent snapshot of what is committed, WAL
// included), written compactly to a new file; writers go on meanwhile (WAL mode). The copy is nobody's
// running file: the live lease of the daemon that runs the agent does not travel.

/**
 * Copies `src` to `dst` (an empty file or none) and hands the open copy to `inspect`, whose answer it
 * returns. `passing`: a copy stored elsewhere and then removed, written without fsync (most of the cost on
 * a busy disk).
 */
export function vacuumCopy(Database, src, dst, { busyTimeoutMs, passing = false }, inspect) {
  const source = new Database(src, { readonly: true, timeout: busyTimeoutMs });
  try {
    source.exec('PRAGMA trusted_schema = OFF');
    if (passing) source.exec('PRAGMA synchronous = OFF');
    source.prepare('VACUUM INTO ?').run(dst);
  } finally {
    source.close();
  }
  const copied = new Database(dst, { timeout: busyTimeoutMs });
  try {
    copied.exec('PRAGMA trusted_schema = OFF');
    if (passing) {
      copied.exec('PRAGMA synchronous = OFF');
      copied.exec('PRAGMA journal_mode = MEMORY');
    }
    if (copied.prepare("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = 'agt_lease'").get())
      copied.exec('DELETE FROM agt_lease');
    return inspect(copied);
  } finally {
    copied.close();
  }
}
