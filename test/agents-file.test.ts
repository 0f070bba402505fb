import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'libsql';
import t from 'tap';
import { AgentFile } from '../kernel/agents/agent-file.js';
import { SCHEMA_VERSION } from '../kernel/agents/schema.js';
import { agentConfig, createAgentFile } from './helpers/agent-file.js';
import { bootDaemon, ROOT, tempDir } from './helpers/daemon.js';

const FIXTURE_V1 = join(ROOT, 'test/fixtures/agent-files/v1-basic.agt');

const columns = (path: string, table: string) => {
  const db = new Database(path, { readonly: true });
  try {
    return (db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).map((c) => c.name);
  } finally {
    db.close();
  }
};

t.test('a version-1 file migrates forward on load and keeps its rows', async (t) => {
  t.equal(SCHEMA_VERSION, 2);
  const path = join(tempDir(t), 'old.agt');
  copyFileSync(FIXTURE_V1, path);
  t.notOk(columns(path, 'agt_loop').includes('loop'), 'the fixture is really version 1');

  const d = await bootDaemon(t);
  const load = await d.request('POST', '/agents/load', { filePath: path });
  t.equal(load.status, 200);
  t.equal(load.body.id, 'fixture-v1');
  const status = await d.request('GET', '/agents/fixture/status');
  t.equal(status.body.loopCount, 3, 'old rows belong to main');
  const file = d.daemon.kernel.registry.resolve('fixture-v1').file;
  t.same([file.openedAtVersion, file.version], [1, 2]);
  t.same(file.loop.list('main').map((row) => row.content), ['hello', 'hi there', 'bye']);
  t.same(file.timers.list()[0]!.loop, null);
  t.same(file.files.read('notes/readme.md')?.content.toString(), 'hi');
  t.same((await d.request('GET', '/agents/fixture-v1/meta')).body.entries, [
    { key: 'motto', value: 'be kind', protection: 'readonly' },
    { key: 'visits', value: '3', protection: 'increment' },
  ]);
  t.same((await d.request('GET', '/agents/fixture-v1/usage')).body.totals, { input: 120, output: 8, cacheRead: 20, cacheWrite: 0, total: 128 });
  t.same((await d.request('GET', '/agents/fixture-v1/tables/local_notes')).body.rows, [{ id: 1, body: 'first' }, { id: 2, body: 'second' }]);
  const logs = (await d.request('GET', '/agents/fixture-v1/logs?event=migrated')).body.logs;
  t.equal(logs.length, 1, 'the migration is logged in the agent log');
  t.match(logs[0].message, /from schema 1 to 2/);
  await d.request('POST', '/agents/fixture-v1/unload');

  t.ok(columns(path, 'agt_loop').includes('loop'));
  t.ok(columns(path, 'agt_timers').includes('loop'));
  t.ok(columns(path, 'agt_lease').includes('heartbeat_at'));
  const db = new Database(path, { readonly: true });
  t.same((db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version, 2);
  t.same((db.prepare('SELECT count(*) AS n FROM agt_lease').get() as { n: number }).n, 0, 'lease released at unload');
  db.close();
});

t.test('AgentFile basics: WAL, transactions, stores', async (t) => {
  const dir = tempDir(t);
  const file = AgentFile.create(join(dir, 'basics.agt'), agentConfig({ name: 'basics' }));
  t.teardown(() => file.close());
  t.equal((file.raw.one<{ journal_mode: string }>('PRAGMA journal_mode'))!.journal_mode, 'wal');
  t.equal(file.version, SCHEMA_VERSION);
  t.throws(() => AgentFile.create(join(dir, 'basics.agt'), agentConfig()), { code: 'conflict' });

  t.throws(() =>
    file.transaction((f) => {
      f.loop.append({ role: 'user', content: 'rolled back' });
      throw new Error('boom');
    }),
  );
  t.equal(file.loop.count(), 0, 'a failed transaction leaves nothing');
  file.transaction((f) => {
    f.loop.append({ role: 'user', content: 'kept' });
    t.throws(() => f.transaction((g) => {
      g.loop.append({ role: 'user', content: 'inner' });
      throw new Error('inner');
    }));
  });
  t.same(file.loop.list().map((row) => row.content), ['kept'], 'a nested failure rolls back only the inner part');
  t.throws(() => file.transaction((() => Promise.resolve()) as never), /synchronous/);

  file.loop.append({ loop: 'side', role: 'assistant', kind: 'summary', content: { text: 's' }, turnId: 't1' });
  t.same([...file.loop.counts()].sort(), [['main', 1], ['side', 1]]);
  t.equal(file.loop.tail('side', 5)[0]!.turn_id, 't1');
  t.equal(file.loop.clear('side'), 1);
  t.equal(file.loop.count('main'), 1, 'clearing one loop never touches another');

  t.throws(() => file.files.write('../escape', 'x'), { code: 'bad_request' });
  t.throws(() => file.files.write('a//b', 'x'), { code: 'bad_request' });
  t.equal(file.files.write('/a/b.txt', 'x').path, 'a/b.txt');
  t.equal(file.files.delete('a/b.txt'), true);

  file.credentials.write('token', Buffer.from([1, 2, 3]), { sealed: true, length: 12 });
  t.same(Object.keys(file.credentials.list()[0]!).sort(), ['length', 'meta', 'name', 'sealed', 'updated_at'], 'listing carries no value');
  t.same([...file.credentials.read('token')!.value], [1, 2, 3]);
  file.identity.put('did', 'did:key:z6Mk');
  t.equal(file.identity.get('did')!.toString(), 'did:key:z6Mk');

  const timer = file.timers.insert({ mode: 'once_at', schedule: { at: 5 }, next_wake_at: 5, payload: 'p', scope: ['agent'], lambda: null, warm: false, locked: true, loop: 'side' });
  t.same(file.timers.due(10).map((x) => x.id), [timer.id]);
  t.equal(file.timers.update(timer.id, { expired: true, run_count: 1 }), true);
  t.same(file.timers.due(10), []);
  t.equal(file.timers.deleteForLoop('side'), 0, 'locked timers survive a loop deletion');
  t.equal(file.timers.delete(timer.id), true);
});

t.test('a file another process holds open is still read consistently (busy timeout)', async (t) => {
  const path = await createAgentFile(tempDir(t), { name: 'shared' });
  const other = new Database(path, { timeout: 5000 });
  other.exec('BEGIN IMMEDIATE; INSERT INTO agt_logs (level, message, created_at) VALUES (\'info\', \'x\', 1); COMMIT');
  other.close();
  const file = AgentFile.open(path);
  t.equal(file.logs.count(), 1);
  await file.close();
});
