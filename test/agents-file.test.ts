import { copyFileSync, existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'libsql';
import t from 'tap';
import { AgentFile } from '../kernel/agents/agent-file.js';
import { SCHEMA_VERSION } from '../kernel/agents/schema.js';
import { agentConfig, createAgentFile } from './helpers/agent-file.js';
import { ROOT, runDaemon, tempDir } from './helpers/daemon.js';

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
  t.equal(SCHEMA_VERSION, 14);
  const path = join(tempDir(t), 'old.agt');
  copyFileSync(FIXTURE_V1, path);
  t.notOk(columns(path, 'agt_loop').includes('loop'), 'the fixture is really version 1');

  const d = await runDaemon(t);
  const load = await d.request('POST', '/agents/load', { filePath: path });
  t.equal(load.status, 200);
  t.equal(load.body.id, 'fixture-v1');
  const status = await d.request('GET', '/agents/fixture/status');
  t.equal(status.body.loopCount, 3, 'old rows belong to main');
  t.same(
    (await d.request('GET', '/agents/fixture-v1/loop')).body.rows.map((row: { content: unknown }) => row.content),
    ['hello', 'hi there', 'bye'],
  );
  t.same((await d.request('GET', '/agents/fixture-v1/meta')).body.entries, [
    { key: 'motto', value: 'be kind', protection: 'readonly' },
    { key: 'visits', value: '3', protection: 'increment' },
  ]);
  t.same((await d.request('GET', '/agents/fixture-v1/usage')).body.totals, {
    input: 120,
    output: 8,
    cacheRead: 20,
    cacheWrite: 0,
    total: 128,
  });
  t.same((await d.request('GET', '/agents/fixture-v1/tables/local_notes')).body.rows, [
    { id: 1, body: 'first' },
    { id: 2, body: 'second' },
  ]);
  const logs = (await d.request('GET', '/agents/fixture-v1/logs?event=migrated')).body.logs;
  t.equal(logs.length, 1, 'the migration is logged in the agent log');
  t.match(logs[0].message, `from schema 1 to ${SCHEMA_VERSION}`);
  t.equal((await d.request('POST', '/agents/fixture-v1/unload')).status, 200);

  // What the daemon wrote, read from the file it let go of.
  const file = AgentFile.open(path, { readonly: true });
  t.same([file.openedAtVersion, file.version], [SCHEMA_VERSION, SCHEMA_VERSION], 'migrated on disk');
  t.same(
    file.loop.list('main').map((row) => row.content),
    ['hello', 'hi there', 'bye'],
  );
  t.same(file.timers.list()[0]!.loop, null);
  t.same(file.files.read('notes/readme.md')?.content.toString(), 'hi');
  await file.close();
  t.ok(columns(path, 'agt_loop').includes('loop'));
  t.ok(columns(path, 'agt_timers').includes('loop'));
  t.ok(columns(path, 'agt_lease').includes('heartbeat_at'));
  const db = new Database(path, { readonly: true });
  t.same((db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version, SCHEMA_VERSION);
  for (const table of ['agt_queue', 'agt_tasks', 'agt_prompts', 'agt_idempotency'])
    t.ok(columns(path, table).length > 0, `${table} exists after the migration`);
  t.ok(
    columns(path, 'agt_queue').includes('ended'),
    'agt_queue keeps the end of a turn until it was streamed (version 6)',
  );
  t.ok(columns(path, 'agt_memory').includes('forgotten_at'), 'agt_memory exists after the migration (version 9)');
  t.same(
    (db.prepare("SELECT sql FROM sqlite_master WHERE name = 'agt_memory_fts'").get() as { sql: string }).sql.match(
      /USING fts5/,
    )?.[0],
    'USING fts5',
    'with its full-text index',
  );
  t.ok(columns(path, 'agt_memory_changelog').includes('from_ids'), 'and the consolidation changelog (version 10)');
  t.match(
    (db.prepare("SELECT sql FROM sqlite_master WHERE name = 'agt_memory'").get() as { sql: string }).sql,
    /'consolidation'/,
    "memories may carry source 'consolidation' (version 11)",
  );
  t.ok(columns(path, 'agt_turn_records').includes('record'), 'and the records beside turns (version 12)');
  t.same((db.prepare('SELECT count(*) AS n FROM agt_lease').get() as { n: number }).n, 0, 'lease released at unload');
  db.close();
});

t.test('a version-2 file migrates to 3: the durable runtime tables, rows kept', async (t) => {
  const path = await createAgentFile(
    tempDir(t),
    { name: 'v2' },
    {
      version: 2,
      seed: (file) => file.loop.append({ role: 'user', content: { text: 'before' } }),
    },
  );
  t.same(columns(path, 'agt_queue'), [], 'the file is really version 2');
  const file = AgentFile.open(path);
  t.teardown(() => file.close());
  t.same([file.openedAtVersion, file.version], [2, SCHEMA_VERSION]);
  t.same(
    file.loop.list().map((row) => row.content),
    [{ text: 'before' }],
  );
  t.same(columns(path, 'agt_queue'), [
    'id',
    'turn_id',
    'loop',
    'kind',
    'status',
    'absorbed_by',
    'payload',
    'created_at',
    'started_at',
    'ended',
  ]);
  t.same(columns(path, 'agt_idempotency'), ['key', 'turn_id', 'created_at', 'request_hash']);
  t.ok(columns(path, 'agt_tasks').includes('call_id'));
  t.ok(columns(path, 'agt_prompts').includes('delivered'));
});

t.test('durable runtime stores: accepted turns, tasks and prompts, idempotency keys', async (t) => {
  const file = AgentFile.create(join(tempDir(t), 'durable.agt'), agentConfig({ name: 'durable' }));
  t.teardown(() => file.close());
  file.queue.insert({ turnId: 'a', loop: 'main', kind: 'chat', payload: { text: 'one' }, createdAt: 1 });
  file.queue.insert({ turnId: 'b', loop: 'main', kind: 'chat', payload: { text: 'two' }, createdAt: 2 });
  file.queue.insert({ turnId: 's', loop: 'main', kind: 'system', status: 'running', payload: {}, createdAt: 3 });
  t.throws(
    () => file.queue.insert({ turnId: 'a', loop: 'main', kind: 'chat', payload: {} }),
    'a turn id is accepted once',
  );
  file.queue.markRunning('a', 5);
  file.queue.markAbsorbed(['b'], 'a', 6);
  t.same(
    file.queue.list().map((row) => [row.turn_id, row.status, row.absorbed_by, row.payload]),
    [
      ['a', 'running', null, { text: 'one' }],
      ['b', 'running', 'a', { text: 'two' }],
      ['s', 'running', null, {}],
    ],
  );
  t.equal(file.queue.remove(['a', 'b', 'nope']), 2);
  t.equal(file.queue.count(), 1);

  // One event ending several turn ids is stored once: the first row that takes it holds it, the others
  // refer to that row, and reading them back gives each the event (what recovery emits again).
  for (const id of ['h', 'x', 'y']) file.queue.insert({ turnId: id, loop: 'main', kind: 'chat', payload: {} });
  const end = { type: 'turn.completed' as const, payload: { turn_id: 'h', absorbed_turn_ids: ['x', 'y'] } };
  t.equal(file.queue.markEnded(['wake', 'h', 'x', 'y'], end), 3, 'a turn id without a row takes nothing');
  const stored = file.raw.all(
    "SELECT turn_id, ended FROM agt_queue WHERE turn_id IN ('h', 'x', 'y') ORDER BY id",
  ) as Array<{
    turn_id: string;
    ended: string;
  }>;
  t.same(
    stored.map((row) => [row.turn_id, JSON.parse(row.ended)]),
    [
      ['h', end],
      ['x', { ref: 'h' }],
      ['y', { ref: 'h' }],
    ],
  );
  t.same(
    file.queue
      .list()
      .filter((row) => row.ended)
      .map((row) => [row.turn_id, row.ended]),
    [
      ['h', end],
      ['x', end],
      ['y', end],
    ],
  );
  t.same(file.queue.get('y')?.ended, end);
  t.equal(file.queue.markEnded(['s'], { type: 'agent.error', payload: { turn_id: 's' } }), 1);
  t.same(file.queue.get('s')?.ended, { type: 'agent.error', payload: { turn_id: 's' } });
  t.equal(file.queue.remove(['h', 'x', 'y', 's']), 4);
  t.equal(file.queue.count(), 0);

  const task = {
    id: 't1',
    kind: 'approval' as const,
    status: 'pending_approval' as const,
    tool: 'fs_write',
    args: { path: 'x' },
    loop: 'main',
    turnId: 'a',
    callId: 'c1',
    resolution: null,
    result: null,
    error: null,
    delivered: false,
    createdAt: 1,
    updatedAt: 1,
  };
  file.hil.insertTask(task);
  t.same(file.hil.getTask('t1'), task);
  t.same(file.hil.taskForCall('a', 'c1')?.id, 't1');
  t.same(
    [...file.hil.openTasks('a')].map((x) => x.id),
    ['t1'],
  );
  t.same(
    file.hil.openTasks(['x', 'a', 'y']).map((x) => x.id),
    ['t1'],
    'several turn ids in one query',
  );
  t.same(file.hil.openTasks(['x', 'y']), []);
  file.hil.updateTask('t1', { status: 'running', resolution: { action: 'approve' }, delivered: false, updatedAt: 2 });
  t.same(
    file.hil.openTasks().map((x) => x.id),
    ['t1'],
    'decided but not delivered is still open',
  );
  file.hil.updateTask('t1', { delivered: true });
  t.same(file.hil.openTasks(), []);
  t.same(
    file.hil.interruptedTasks().map((x) => x.id),
    ['t1'],
    'approved, delivered and still running: cut short by a stop',
  );
  for (let i = 0; i < 510; i++) file.hil.insertTask({ ...task, id: `done-${i}`, status: 'completed', callId: null });
  t.equal(file.hil.listTasks('completed', 1000).length, 500, 'finished tasks are bounded');
  t.equal(file.hil.listTasks('completed', 1).at(0)?.id, 'done-509', 'the newest are kept');
  t.ok(file.hil.getTask('t1'), 'an unfinished task is never dropped');

  file.hil.insertPrompt({
    id: 'p1',
    kind: 'ask',
    status: 'pending',
    text: 'why?',
    answer: null,
    loop: 'main',
    turnId: 'a',
    callId: 'c2',
    delivered: false,
    createdAt: 1,
    updatedAt: 1,
  });
  t.same(
    file.hil.pendingPrompts('ask').map((p) => p.text),
    ['why?'],
  );
  t.same(file.hil.pendingPrompts('suspend'), []);
  file.hil.updatePrompt('p1', { status: 'answered', answer: 'because' });
  t.same(
    file.hil.openPrompts('a').map((p) => [p.id, p.answer]),
    [['p1', 'because']],
  );
  t.same(
    file.hil.openPrompts(['a', 'z']).map((p) => [p.id, p.answer]),
    [['p1', 'because']],
  );
  t.equal(file.hil.promptForCall('ask', 'a', 'c2')?.status, 'answered');
  const schema = { type: 'object', properties: { email: { type: 'string' } }, required: ['email'] };
  file.hil.insertPrompt({
    id: 'p2',
    kind: 'ask',
    status: 'pending',
    text: 'which email?',
    answer: null,
    loop: 'main',
    turnId: 'a',
    callId: 'c3',
    schema,
    delivered: false,
    createdAt: 2,
    updatedAt: 2,
  });
  const reopened = AgentFile.open(file.path, { readonly: true });
  t.same(
    reopened.hil.pendingPrompts('ask').map((p) => [p.id, p.schema]),
    [['p2', schema]],
    "an ask's schema is kept in the file (a restart shows its form again)",
  );
  reopened.close();

  file.idempotency.put('key', 'a', 10);
  t.same(file.idempotency.get('key', 11), { turnId: 'a', requestHash: null }, 'a key kept without a request digest');
  file.idempotency.put('keyed', 'b', 10, 'digest');
  t.same(file.idempotency.get('keyed', 11), { turnId: 'b', requestHash: 'digest' });
  t.equal(file.idempotency.get('key', 10 + 24 * 60 * 60 * 1000), undefined, 'a key lives 24 h');
});

t.test('AgentFile basics: WAL, transactions, stores', async (t) => {
  const dir = tempDir(t);
  const file = AgentFile.create(join(dir, 'basics.agt'), agentConfig({ name: 'basics' }));
  t.teardown(() => file.close());
  const journalMode = () => file.raw.one<{ journal_mode: string }>('PRAGMA journal_mode')!.journal_mode;
  t.equal(journalMode(), 'memory', 'written in place while it is created (nobody else knows it yet)');
  t.equal(readFileSync(join(dir, 'basics.agt'))[18], 1, 'a rollback-journal file until then');
  file.finishCreation();
  t.equal(journalMode(), 'wal');
  t.equal(readFileSync(join(dir, 'basics.agt'))[18], 2, 'a WAL file on disk once created');
  const wal = join(dir, 'basics.agt-wal');
  t.ok(!existsSync(wal) || statSync(wal).size === 0, 'its rows are in the main file, none in a WAL');
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
    t.throws(() =>
      f.transaction((g) => {
        g.loop.append({ role: 'user', content: 'inner' });
        throw new Error('inner');
      }),
    );
  });
  t.same(
    file.loop.list().map((row) => row.content),
    ['kept'],
    'a nested failure rolls back only the inner part',
  );
  t.throws(() => file.transaction((() => Promise.resolve()) as never), /synchronous/);

  file.loop.append({ loop: 'side', role: 'assistant', kind: 'summary', content: { text: 's' }, turnId: 't1' });
  t.same([...file.loop.counts()].sort(), [
    ['main', 1],
    ['side', 1],
  ]);
  t.equal(file.loop.tail('side', 5)[0]!.turn_id, 't1');
  t.equal(file.loop.clear('side'), 1);
  t.equal(file.loop.count('main'), 1, 'clearing one loop never touches another');

  t.throws(() => file.files.write('../escape', 'x'), { code: 'bad_request' });
  t.throws(() => file.files.write('a//b', 'x'), { code: 'bad_request' });
  t.equal(file.files.write('/a/b.txt', 'x').path, 'a/b.txt');
  t.equal(file.files.delete('a/b.txt'), true);

  file.credentials.write('token', Buffer.from([1, 2, 3]), { sealed: true, length: 12 });
  t.same(
    Object.keys(file.credentials.list()[0]!).sort(),
    ['length', 'meta', 'name', 'sealed', 'updated_at'],
    'listing carries no value',
  );
  t.same([...file.credentials.read('token')!.value], [1, 2, 3]);
  file.identity.put('did', 'did:key:z6Mk');
  t.equal(file.identity.get('did')!.toString(), 'did:key:z6Mk');

  const timer = file.timers.insert({
    mode: 'once_at',
    schedule: { at: 5 },
    next_wake_at: 5,
    payload: 'p',
    scope: ['agent'],
    lambda: null,
    warm: false,
    locked: true,
    loop: 'side',
  });
  t.same(
    file.timers.due(10).map((x) => x.id),
    [timer.id],
  );
  t.equal(file.timers.update(timer.id, { expired: true, run_count: 1 }), true);
  t.same(file.timers.due(10), []);
  t.equal(file.timers.deleteForLoop('side'), 0, 'locked timers survive a loop deletion');
  t.equal(file.timers.delete(timer.id), true);
});

t.test(
  'the loop tail kept in memory answers what the table holds through appends, rollbacks, compaction and clears',
  async (t) => {
    const file = AgentFile.create(join(tempDir(t), 'tail.agt'), agentConfig({ name: 'tail' }));
    t.teardown(() => file.close());
    const same = (message: string) => t.same(file.loop.tail('m', 3), file.loop.list('m').slice(-3), message);
    t.same(file.loop.tail('m', 3), [], 'an empty loop');
    for (const n of [1, 2]) file.loop.append({ loop: 'm', role: 'user', content: { n } });
    same('appends after the first read');
    const rows = file.loop.tail('m', 3);
    t.throws(
      () => ((rows[0]!.content as { n: number }).n = 99),
      TypeError,
      'the rows a caller gets are frozen, content included',
    );
    t.throws(() => ((rows[0] as { role: string }).role = 'system'), TypeError);
    rows.pop();
    same('a caller changing the array it got changes nothing for the next');
    t.throws(() =>
      file.transaction((f) => {
        f.loop.append({ loop: 'm', role: 'user', content: { n: 'rolled back' } });
        throw new Error('boom');
      }),
    );
    same('a rolled-back append is not in the tail');
    for (const n of [3, 4, 5]) file.loop.append({ loop: 'm', role: 'assistant', content: { n } });
    same('more rows than the tail asked for');
    t.equal(file.loop.tail('m', 10).length, 5, 'a longer tail reads the rest');
    const through = file.loop.tail('m', 2)[0]!.id - 1;
    file.transaction((f) => {
      f.loop.deleteThrough('m', through);
      f.loop.insertSummary({ id: through, loop: 'm', content: { summary: true }, createdAt: 1 });
    });
    same('compaction: the summary row under an older id');
    file.loop.clear('m');
    same('a cleared loop');

    // Another connection's commit (the agent's SQL child, a manual edit) changes PRAGMA data_version,
    // which the cached read checks: no stale tail, whoever wrote.
    file.loop.append({ loop: 'm', role: 'user', content: { n: 6 } });
    same('the tail cached again');
    const other = new Database(file.path, { timeout: 5000 });
    t.teardown(() => other.close());
    other
      .prepare(
        "INSERT INTO agt_loop (loop, role, kind, content, created_at) VALUES ('m', 'user', 'message', '{\"n\":7}', 1)",
      )
      .run();
    t.same(
      file.loop.tail('m', 3).map((row) => row.content),
      [{ n: 6 }, { n: 7 }],
      "another connection's insert is read",
    );
    other.prepare("UPDATE agt_loop SET content = '{\"n\":8}' WHERE loop = 'm' AND content = '{\"n\":7}'").run();
    same("another connection's update is read");
    other.prepare("DELETE FROM agt_loop WHERE loop = 'm'").run();
    t.same(file.loop.tail('m', 3), [], "another connection's delete is read");
  },
);

t.test('a file another process holds open is still read consistently (busy timeout)', async (t) => {
  const path = await createAgentFile(tempDir(t), { name: 'shared' });
  const other = new Database(path, { timeout: 5000 });
  other.exec("BEGIN IMMEDIATE; INSERT INTO agt_logs (level, message, created_at) VALUES ('info', 'x', 1); COMMIT");
  other.close();
  const file = AgentFile.open(path);
  t.equal(file.logs.count(), 1);
  await file.close();
});
