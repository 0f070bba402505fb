/**
 * A file locked by another process, in process: the registry's busy timeout is lowered (the daemon waits
 * 5 s for a lock, blocking its event loop meanwhile) so each refusal takes 0.2 s.
 */
import Database from 'libsql';
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { bootDaemon, tempDir } from './helpers/daemon.js';

t.test('a file locked by another process is 409 agent_file_in_use, reason locked', async (t) => {
  const d = await bootDaemon(t);
  d.daemon.kernel.registry.busyTimeoutMs = 200;
  const dir = tempDir(t);
  const load = (filePath: string) => d.request('POST', '/agents/load', { filePath });

  // A writer holding the write lock: reads go on (WAL) but the lease cannot be written.
  const writing = await createAgentFile(dir, { name: 'writing' });
  const writer = new Database(writing, { timeout: 100 });
  writer.exec('BEGIN EXCLUSIVE');
  // A connection in exclusive locking mode that wrote: not even reads get through.
  const exclusive = await createAgentFile(dir, { name: 'exclusive' });
  const holder = new Database(exclusive, { timeout: 100 });
  holder.exec(
    "PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; INSERT INTO agt_meta (key, value, updated_at) VALUES ('x', 'y', 0)",
  );
  try {
    for (const path of [writing, exclusive]) {
      const res = await load(path);
      t.same(
        [res.status, res.body.code, res.body.reason, res.body.filePath],
        [409, 'agent_file_in_use', 'locked', path],
        path,
      );
      t.match(res.body.error, /locked by another process/);
    }
  } finally {
    writer.exec('ROLLBACK');
    writer.close();
    holder.exec('ROLLBACK');
    holder.close();
  }
  t.equal((await load(writing)).status, 200, 'loads once the lock is gone');
  t.equal((await load(exclusive)).status, 200);
});
