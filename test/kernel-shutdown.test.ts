/**
 * Shutdown caps: a spawned daemon with a loaded agent whose `unloaded` hook never
 * resolves and an extension whose stop never resolves still exits 0 within the 20 s cap, removes its pid
 * file, and leaves the agent file released (no lease row) and closed (no WAL left).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'libsql';
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { ROOT, spawnDaemon, tempDir } from './helpers/daemon.js';

const fixture = (name: string) => join(ROOT, 'test/fixtures/extensions', name, 'index.ts');

t.test('shutdown exits within the caps while an unload hook and an extension stop hang', async (t) => {
  const path = await createAgentFile(tempDir(t), { name: 'stuck' });
  const daemon = await spawnDaemon(t, {
    env: { AGT_SHUTDOWN_TIMEOUT_MS: '1000' },
    extensions: {
      extensions: [
        { name: 'hangs-on-unload', module: fixture('hangs-on-unload') },
        { name: 'hangs-on-stop', module: fixture('hangs-on-stop') },
      ],
    },
  });
  t.ok(daemon.url, `daemon listening (stderr: ${daemon.stderr()})`);
  const token = readFileSync(join(daemon.dataDir, 'daemon-token'), 'utf8').trim();
  const call = (method: string, route: string, body?: unknown) =>
    fetch(`${daemon.url}${route}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
  t.equal((await call('POST', '/agents/load', { filePath: path })).status, 200, 'agent loaded');
  const pidFile = join(daemon.dataDir, 'agtd.pid');
  t.ok(existsSync(pidFile), 'pid file present while running');

  const startedAt = Date.now();
  t.equal((await call('POST', '/daemon/shutdown')).status, 202);
  t.equal(await daemon.exited, 0, 'exits with 0');
  const elapsed = Date.now() - startedAt;
  t.ok(elapsed < 20_000, `exited within the 20 s cap (${elapsed} ms)`);
  t.notOk(existsSync(pidFile), 'pid file removed');

  const wal = `${path}-wal`;
  t.ok(!existsSync(wal) || statSync(wal).size === 0, 'the agent file was closed (no WAL left behind)');
  const db = new Database(path, { readonly: true });
  try {
    t.equal(
      db.prepare('SELECT owner FROM agt_lease').get(),
      undefined,
      'the lease was released despite the hanging hook',
    );
  } finally {
    db.close();
  }
});
