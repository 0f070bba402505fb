import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import Database from 'libsql';
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { bootDaemon, spawnDaemon, tempDir } from './helpers/daemon.js';

function writeLease(path: string, lease: { owner: string; pid: number; host: string; heartbeatAt: number }) {
  const db = new Database(path, { timeout: 5000 });
  db.prepare('INSERT OR REPLACE INTO agt_lease (id, owner, pid, host, acquired_at, heartbeat_at) VALUES (1, ?, ?, ?, ?, ?)').run(
    lease.owner,
    lease.pid,
    lease.host,
    lease.heartbeatAt,
    lease.heartbeatAt,
  );
  db.close();
}

t.test('a file loaded by another live daemon is refused with 409', async (t) => {
  const path = await createAgentFile(tempDir(t), { name: 'leased' });
  const a = await bootDaemon(t);
  const b = await spawnDaemon(t);
  t.ok(b.url, 'second daemon listening');
  const bToken = readFileSync(join(b.dataDir, 'daemon-token'), 'utf8').trim();
  const bLoad = async () => {
    const res = await fetch(`${b.url}/agents/load`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ filePath: path }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };

  const loaded = await a.request('POST', '/agents/load', { filePath: path });
  t.equal(loaded.status, 200);
  const refused = await bLoad();
  t.equal(refused.status, 409);
  t.equal(refused.body.code, 'agent_file_in_use');
  t.equal(refused.body.filePath, path);
  t.same([refused.body.holder.pid, refused.body.holder.host], [process.pid, hostname()], 'names the holder');

  t.equal((await a.request('POST', `/agents/${loaded.body.id}/unload`)).status, 200);
  const taken = await bLoad();
  t.equal(taken.status, 200, 'free again once the first daemon unloaded');
  const back = await a.request('POST', '/agents/load', { filePath: path });
  t.same([back.status, back.body.code], [409, 'agent_file_in_use'], 'and now the second one holds it');
});

t.test('stale or dead leases are taken over; a fresh foreign one is not', async (t) => {
  const d = await bootDaemon(t);
  const dir = tempDir(t);
  const load = (filePath: string) => d.request('POST', '/agents/load', { filePath });

  const stale = await createAgentFile(dir, { name: 'stale' });
  writeLease(stale, { owner: 'other', pid: 1, host: 'elsewhere', heartbeatAt: Date.now() - 60_000 });
  t.equal((await load(stale)).status, 200, 'a heartbeat older than 30 s is stale');

  const dead = await createAgentFile(dir, { name: 'dead' });
  writeLease(dead, { owner: 'crashed', pid: 2 ** 22 + 12345, host: hostname(), heartbeatAt: Date.now() });
  t.equal((await load(dead)).status, 200, 'a holder process gone from this host is dead');

  const fresh = await createAgentFile(dir, { name: 'fresh' });
  writeLease(fresh, { owner: 'remote', pid: 1, host: 'elsewhere', heartbeatAt: Date.now() });
  const refused = await load(fresh);
  t.same([refused.status, refused.body.code], [409, 'agent_file_in_use']);

  const row = (path: string) => {
    const db = new Database(path, { readonly: true });
    try {
      return db.prepare('SELECT owner, pid FROM agt_lease').get() as { owner: string; pid: number } | undefined;
    } finally {
      db.close();
    }
  };
  t.equal(row(stale)?.pid, process.pid, 'the lease row now names this daemon');
  await d.request('POST', '/agents/stale/unload');
  t.equal(row(stale), undefined, 'released at unload');
  t.equal(row(fresh)?.owner, 'remote', 'a refused load leaves the holder alone');
});

t.test('a lease taken over by another daemon stops the agent here and leaves the new holder alone', async (t) => {
  const d = await bootDaemon(t);
  const path = await createAgentFile(tempDir(t), { name: 'usurped' });
  const { body: ref } = await d.request('POST', '/agents/load', { filePath: path });
  const unloaded = new Promise<Record<string, unknown>>((done) =>
    d.daemon.kernel.bus.subscribe((event) => {
      if (event.event_type === 'agent.unloaded' && event.agent_id === ref.id) done(event.payload as Record<string, unknown>);
    }),
  );

  // Another daemon took the lease over (ours looked stale to it); the next heartbeat finds out.
  writeLease(path, { owner: 'usurper', pid: 1, host: 'elsewhere', heartbeatAt: Date.now() });
  d.daemon.kernel.registry.leases.beat();
  const timeout = new Promise((done) => setTimeout(() => done('not unloaded within 5 s'), 5_000).unref());
  t.match(await Promise.race([unloaded, timeout]), { reason: 'lease_lost' }, 'announced as agent.unloaded with reason lease_lost');
  t.equal((await d.request('GET', `/agents/${ref.id}`)).status, 404, 'no longer driven here');

  const db = new Database(path, { readonly: true });
  try {
    t.match(db.prepare('SELECT owner, pid, host FROM agt_lease').get(), { owner: 'usurper', pid: 1, host: 'elsewhere' }, 'the new holder keeps its lease');
    t.ok(db.prepare("SELECT 1 FROM agt_logs WHERE event = 'lease_lost' AND origin = 'kernel'").get(), 'logged lease_lost');
  } finally {
    db.close();
  }
  const again = await d.request('POST', '/agents/load', { filePath: path });
  t.same([again.status, again.body.code, again.body.reason], [409, 'agent_file_in_use', 'leased'], 'and loading it again is refused');
});

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
  holder.exec("PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; INSERT INTO agt_meta (key, value, updated_at) VALUES ('x', 'y', 0)");
  try {
    for (const path of [writing, exclusive]) {
      const res = await load(path);
      t.same([res.status, res.body.code, res.body.reason, res.body.filePath], [409, 'agent_file_in_use', 'locked', path], path);
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
