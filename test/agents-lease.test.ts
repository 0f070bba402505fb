import { hostname } from 'node:os';
import Database from 'libsql';
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { runDaemon, tempDir, type SpawnedDaemon } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';

function writeLease(path: string, lease: { owner: string; pid: number; host: string; heartbeatAt: number }) {
  const db = new Database(path, { timeout: 5000 });
  db.prepare(
    'INSERT OR REPLACE INTO agt_lease (id, owner, pid, host, acquired_at, heartbeat_at) VALUES (1, ?, ?, ?, ?, ?)',
  ).run(lease.owner, lease.pid, lease.host, lease.heartbeatAt, lease.heartbeatAt);
  db.close();
}

/** One daemon for the tests but the two-daemon one (which uses it as its first). */
let shared: Promise<SpawnedDaemon> | undefined;
const daemon = () => (shared ??= runDaemon(t));

t.test('a file loaded by another live daemon is refused with 409', async (t) => {
  const path = await createAgentFile(tempDir(t), { name: 'leased' });
  const a = await daemon();
  const b = await runDaemon(t);
  t.ok(b.url, 'second daemon listening');
  const bLoad = () => b.request('POST', '/agents/load', { filePath: path });

  const loaded = await a.request('POST', '/agents/load', { filePath: path });
  t.equal(loaded.status, 200);
  const refused = await bLoad();
  t.equal(refused.status, 409);
  t.equal(refused.body.code, 'agent_file_in_use');
  t.equal(refused.body.filePath, path);
  t.same([refused.body.holder.pid, refused.body.holder.host], [a.child.pid, hostname()], 'names the holder');

  t.equal((await a.request('POST', `/agents/${loaded.body.id}/unload`)).status, 200);
  const taken = await bLoad();
  t.equal(taken.status, 200, 'free again once the first daemon unloaded');
  const back = await a.request('POST', '/agents/load', { filePath: path });
  t.same([back.status, back.body.code], [409, 'agent_file_in_use'], 'and now the second one holds it');
});

t.test('stale or dead leases are taken over; a fresh foreign one is not', async (t) => {
  const d = await daemon();
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
  t.equal(row(stale)?.pid, d.child.pid, 'the lease row now names this daemon');
  await d.request('POST', '/agents/stale/unload');
  t.equal(row(stale), undefined, 'released at unload');
  t.equal(row(fresh)?.owner, 'remote', 'a refused load leaves the holder alone');
});

t.test('a lease taken over by another daemon stops the agent here and leaves the new holder alone', async (t) => {
  const d = await daemon();
  const path = await createAgentFile(tempDir(t), { name: 'usurped' });
  const { body: ref } = await d.request('POST', '/agents/load', { filePath: path });
  const log = await eventLog(t, d);

  // Another daemon took the lease over (ours looked stale to it); the next heartbeat (every 10 s) finds out.
  writeLease(path, { owner: 'usurper', pid: 1, host: 'elsewhere', heartbeatAt: Date.now() });
  const unloaded = await log.waitFor(
    (event) => event.event_type === 'agent.unloaded' && event.agent_id === ref.id,
    'agent.unloaded',
    { ms: 25_000 },
  );
  t.match(unloaded.payload, { reason: 'lease_lost' }, 'announced as agent.unloaded with reason lease_lost');
  t.equal((await d.request('GET', `/agents/${ref.id}`)).status, 404, 'no longer driven here');

  const db = new Database(path, { readonly: true });
  try {
    t.match(
      db.prepare('SELECT owner, pid, host FROM agt_lease').get(),
      { owner: 'usurper', pid: 1, host: 'elsewhere' },
      'the new holder keeps its lease',
    );
    t.ok(
      db.prepare("SELECT 1 FROM agt_logs WHERE event = 'lease_lost' AND origin = 'kernel'").get(),
      'logged lease_lost',
    );
  } finally {
    db.close();
  }
  const again = await d.request('POST', '/agents/load', { filePath: path });
  t.same(
    [again.status, again.body.code, again.body.reason],
    [409, 'agent_file_in_use', 'leased'],
    'and loading it again is refused',
  );
});
