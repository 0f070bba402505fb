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
