/**
 * The agent-SQL boundary, continued (the escapes are in agent-sql-boundary.test.ts):
 * AUTOINCREMENT without sqlite_sequence, schema changes kept to `local_*` tables and indexes, one
 * statement per call, db_query reading and db_execute writing, legitimate SQL on `local_*` tables
 * (DROP TABLE included), and a file carrying triggers or views refused at load.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'libsql';
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { runDaemon, tempDir } from './helpers/daemon.js';
import { SqlSandbox, type SqlCall } from '../kernel/runtime/sql-sandbox/sql-runner.js';
import { fingerprint, integrity, readFile, sequenceOf, box } from './helpers/sql-boundary.js';

t.test(
  'AUTOINCREMENT on local_* tables works without reaching sqlite_sequence (SQLite keeps the counter)',
  async (t) => {
    // A fresh agent file has no sqlite_sequence (agt_* tables use no AUTOINCREMENT): the first such table creates it.
    const path = await createAgentFile(tempDir(t, 'agt-sql-'), {});
    const hasSequence = () =>
      readFile(
        path,
        (db) =>
          db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'sqlite_sequence'").get() as { n: number },
      );
    t.equal(hasSequence().n, 0, 'no sqlite_sequence yet');
    const sandbox = new SqlSandbox(path);
    t.teardown(() => sandbox.close());
    const b = {
      path,
      execute: (sql: string) => sandbox.execute({ sql }),
      query: (sql: string) => sandbox.query({ sql }),
    };
    await b.execute('CREATE TABLE local_s (id INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT UNIQUE, n INTEGER DEFAULT 0)');
    t.equal(hasSequence().n, 1, 'SQLite created sqlite_sequence');
    await b.execute("INSERT INTO local_s (v) VALUES ('a'), ('b'), ('c')");
    await b.execute("DELETE FROM local_s WHERE v = 'c'");
    const again = await b.execute("INSERT INTO local_s (v) VALUES ('d')");
    t.equal(again.lastInsertRowid, 4, 'a deleted top id is not reused');
    await b.execute("INSERT INTO local_s (v) VALUES ('a') ON CONFLICT (v) DO UPDATE SET n = n + 1");
    await b.execute("REPLACE INTO local_s (id, v) VALUES (10, 'e')");
    await b.execute(
      "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 5) INSERT INTO local_s (v) SELECT printf('r%d', x) FROM r",
    );
    await b.execute('CREATE TABLE local_t (id INTEGER PRIMARY KEY AUTOINCREMENT, w)');
    await b.execute('INSERT INTO local_t (w) SELECT v FROM local_s');
    t.equal(sequenceOf(b.path, 'local_s'), 15);
    t.equal(sequenceOf(b.path, 'local_t'), 9);
    await b.execute('ALTER TABLE local_s RENAME TO local_s2');
    t.equal(sequenceOf(b.path, 'local_s2'), 15, 'a rename carries the counter');
    t.same((await b.query('SELECT max(id) AS m, count(*) AS c FROM local_s2')).rows, [{ m: 15, c: 9 }]);
    await b.execute('DELETE FROM local_s2');
    t.equal(
      (await b.execute("INSERT INTO local_s2 (v) VALUES ('z')")).lastInsertRowid,
      16,
      'the counter survives an emptied table',
    );
    await b.execute('DROP TABLE local_s2');
    t.equal(sequenceOf(b.path, 'local_s2'), undefined, 'DROP TABLE removes its counter');
    t.equal(sequenceOf(b.path, 'local_t'), 9);
    t.equal(integrity(b.path), 'ok');
  },
);

t.test('schema changes: only local_* tables and indexes, no triggers, views, virtual or temp objects', async (t) => {
  const b = await box(t);
  const before = fingerprint(b.path);
  const ddl = [
    'CREATE TRIGGER local_t AFTER INSERT ON agt_logs BEGIN DELETE FROM agt_logs; END',
    'CREATE TRIGGER local_t AFTER INSERT ON local_a BEGIN DELETE FROM local_a; END',
    'CREATE TRIGGER IF NOT EXISTS local_t BEFORE DELETE ON local_a BEGIN SELECT 1; END',
    'CREATE VIEW local_v AS SELECT * FROM local_a',
    'CREATE VIEW local_v AS SELECT * FROM agt_credentials',
    'CREATE VIEW agt_loop2 AS SELECT 1',
    'CREATE TEMP TABLE local_t (a)',
    'CREATE TEMPORARY TABLE local_t AS SELECT * FROM local_a',
    'CREATE TEMP VIEW local_v AS SELECT 1',
    'CREATE TEMP TRIGGER local_t AFTER INSERT ON local_a BEGIN SELECT 1; END',
    'CREATE VIRTUAL TABLE local_f USING fts5(body)',
    'CREATE VIRTUAL TABLE local_r USING rtree(id, a, b)',
    'CREATE TABLE agt_evil (a)',
    'CREATE TABLE evil (a)',
    'CREATE TABLE local_copy AS SELECT * FROM agt_credentials',
    'CREATE INDEX local_i ON agt_logs (message)',
    'CREATE INDEX agt_i ON local_a (body)',
    'CREATE INDEX evil_i ON local_a (body)',
    'DROP TABLE agt_logs',
    'DROP TABLE IF EXISTS agt_credentials',
    'DROP INDEX agt_logs_origin',
    'ALTER TABLE agt_logs RENAME TO local_logs',
    'ALTER TABLE agt_credentials RENAME TO local_stolen',
    'ALTER TABLE local_a RENAME TO agt_a',
    'ALTER TABLE local_a RENAME TO evil',
    'ALTER TABLE agt_logs ADD COLUMN x TEXT',
    'ALTER TABLE agt_logs RENAME COLUMN message TO m',
    'ALTER TABLE agt_logs DROP COLUMN data',
  ];
  for (const sql of ddl) {
    for (const hints of [true, false]) {
      const refusal = await b.refused('execute', sql, { hints });
      t.equal(refusal.code, 'forbidden', `${sql} (hints ${hints}): ${refusal.message}`);
      t.equal(fingerprint(b.path), before, `${sql} (hints ${hints}): file unchanged`);
    }
  }
  // A view or trigger "renamed into place": a local table renamed over... nothing can be renamed into a view
  // or trigger, and renaming a local table does not touch agt_* objects.
  await b.execute('CREATE TABLE local_b (a)');
  t.equal((await b.refused('execute', 'ALTER TABLE local_b RENAME TO agt_b')).code, 'forbidden');
  t.equal(
    (await b.refused('execute', 'ALTER TABLE local_b RENAME TO sqlite_b')).code,
    'bad_request',
    'SQLite reserves sqlite_ names itself',
  );
  await b.execute('DROP TABLE local_b');
  t.equal(fingerprint(b.path), before, 'the agent file is unchanged');
  t.equal(integrity(b.path), 'ok');
});

t.test('one statement per call: a second statement never runs', async (t) => {
  const b = await box(t);
  t.match((await b.refused('query', 'SELECT 1; DROP TABLE local_a')).message, /one SQL statement at a time/);
  t.match(
    (await b.refused('execute', 'DELETE FROM local_a WHERE id = 1; PRAGMA user_version = 5')).message,
    /one SQL statement at a time/,
  );
  // Without the friendly check, libsql compiles only the first statement: the second is never run.
  t.same((await b.query('SELECT 1 AS x; DROP TABLE local_a', [], { hints: false })).rows, [{ x: 1 }]);
  t.equal(
    (await b.execute("INSERT INTO local_a (body) VALUES ('x'); DROP TABLE local_a", [], { hints: false })).changes,
    1,
  );
  t.equal((await b.query('SELECT count(*) AS n FROM local_a')).rows[0].n, 3, 'local_a is still there');
  t.same(
    (await b.query("SELECT ';' AS s, 'it''s' AS q -- trailing; comment")).rows,
    [{ s: ';', q: "it's" }],
    'semicolons inside literals and comments are fine',
  );
  t.same((await b.query('SELECT 2 AS y;  ;  ')).rows, [{ y: 2 }], 'trailing semicolons are fine');
});

t.test('db_query only reads, db_execute only writes', async (t) => {
  const b = await box(t);
  t.equal((await b.refused('query', "INSERT INTO local_a (body) VALUES ('x')")).code, 'bad_request');
  t.equal(
    (await b.refused('query', "WITH x AS (SELECT 1) INSERT INTO local_a (body) SELECT 'x' FROM x")).code,
    'bad_request',
  );
  t.equal((await b.refused('query', 'CREATE TABLE local_q (a)')).code, 'bad_request');
  t.equal((await b.refused('execute', 'SELECT * FROM local_a')).code, 'bad_request');
  t.equal((await b.refused('execute', "INSERT INTO local_a (body) VALUES ('x') RETURNING id")).code, 'bad_request');
  t.equal((await b.query('SELECT count(*) AS n FROM local_a')).rows[0].n, 2, 'nothing was written');
});

t.test('legitimate SQL on local_* tables works', async (t) => {
  const b = await box(t);
  const ok = async (mode: 'query' | 'execute', sql: string, params: SqlCall['params'] = []) => {
    try {
      return mode === 'query' ? await b.query(sql, params) : await b.execute(sql, params);
    } catch (error) {
      t.fail(`${sql}: ${(error as Error).message}`);
      return undefined;
    }
  };
  await ok(
    'execute',
    "CREATE TABLE local_notes (id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NOT NULL DEFAULT '', body TEXT, score REAL CHECK (score >= 0), tags TEXT, UNIQUE (title))",
  );
  await ok('execute', 'CREATE TABLE IF NOT EXISTS local_notes (x)');
  await ok('execute', 'CREATE INDEX local_notes_score ON local_notes (score DESC, title)');
  await ok(
    'execute',
    'CREATE UNIQUE INDEX IF NOT EXISTS local_notes_body ON local_notes (body) WHERE body IS NOT NULL',
  );
  await ok('execute', 'CREATE INDEX local_notes_lower ON local_notes (lower(title))');
  const inserted = await ok('execute', 'INSERT INTO local_notes (title, body, score, tags) VALUES (?, ?, ?, ?)', [
    'first',
    'hello',
    1.5,
    '["a","b"]',
  ]);
  t.same(inserted, { changes: 1, lastInsertRowid: 1 });
  await ok(
    'execute',
    "INSERT INTO local_notes (title, score, tags) VALUES ('second', 3, '[\"b\"]'), ('third', 2, '[]')",
  );
  await ok(
    'execute',
    "INSERT INTO local_notes (title, score) VALUES ('first', 9) ON CONFLICT (title) DO UPDATE SET score = excluded.score",
  );
  await ok('execute', "REPLACE INTO local_notes (id, title, score) VALUES (3, 'third', 4)");
  await ok('execute', 'UPDATE local_notes SET body = upper(title) WHERE score > ?', [2]);
  await ok(
    'execute',
    "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 20) INSERT INTO local_a (body, n) SELECT printf('row %d', x), x FROM r",
  );
  await ok('execute', 'DELETE FROM local_a WHERE n > 15');
  const aggregates = await ok(
    'query',
    "SELECT count(*) AS c, sum(score) AS s, avg(score) AS a, min(score) AS lo, max(score) AS hi, group_concat(title, ',') AS titles, total(score) AS t FROM local_notes",
  );
  t.match(aggregates?.rows[0], { c: 3, s: 16, lo: 3, hi: 9 }, 'scores 9 (upserted), 3 and 4 (replaced)');
  const json = await ok(
    'query',
    "SELECT json_extract(tags, '$[0]') AS first, json_array_length(tags) AS n, tags ->> '$[1]' AS second, json_object('t', title) AS o, json_group_array(title) OVER () AS all_titles FROM local_notes WHERE id = 1",
  );
  t.match(json?.rows[0], { first: 'a', n: 2, second: 'b', o: '{"t":"first"}' });
  const windowed = await ok(
    'query',
    'SELECT title, row_number() OVER (ORDER BY score) AS rn, rank() OVER (ORDER BY score DESC) AS rk, lag(title) OVER (ORDER BY id) AS prev FROM local_notes ORDER BY id',
  );
  t.equal(windowed?.rows.length, 3);
  const dates = await ok(
    'query',
    "SELECT date('2024-01-31', '+1 day') AS d, strftime('%Y', 'now') >= '2024' AS recent, unixepoch('1970-01-02') AS e, abs(-2) AS a, round(2.567, 1) AS r, coalesce(NULL, 'c') AS c, iif(1, 'y', 'n') AS i, substr('hello', 2, 3) AS s, hex(randomblob(2)) IS NOT NULL AS rb, typeof(zeroblob(2)) AS z",
  );
  t.match(dates?.rows[0], {
    d: '2024-02-01',
    recent: 1,
    e: 86400,
    a: 2,
    r: 2.6,
    c: 'c',
    i: 'y',
    s: 'ell',
    rb: 1,
    z: 'blob',
  });
  const joined = await ok(
    'query',
    'SELECT a.body, n.title FROM local_a a JOIN local_notes n ON n.id = a.id LEFT JOIN local_notes m ON m.score > n.score WHERE a.id IN (SELECT id FROM local_notes) GROUP BY a.id HAVING count(*) >= 1 ORDER BY a.id LIMIT 2 OFFSET 0',
  );
  t.equal(joined?.rows.length, 2);
  await ok('query', 'SELECT DISTINCT body FROM local_a UNION SELECT title FROM local_notes EXCEPT SELECT NULL');
  await ok('query', 'VALUES (1, 2), (3, 4)');
  await ok('query', "SELECT * FROM local_notes WHERE title LIKE 'f%' AND title GLOB 'f*' AND score BETWEEN 0 AND 10");
  const blob = await ok('query', "SELECT x'00ff' AS b");
  t.equal(blob?.rows[0].b, Buffer.from([0, 255]).toString('base64'), 'BLOBs come back as base64');
  // AUTOINCREMENT keeps its counter in sqlite_sequence, which SQLite maintains and agent SQL never reads.
  t.ok(sequenceOf(b.path, 'local_notes')! >= 3);
  // Foreign keys with cascades (compiled as trigger programs, checked too).
  await ok('execute', 'CREATE TABLE local_parent (id INTEGER PRIMARY KEY)');
  await ok(
    'execute',
    'CREATE TABLE local_child (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES local_parent (id) ON DELETE CASCADE)',
  );
  await ok('execute', 'INSERT INTO local_parent VALUES (1)');
  await ok('execute', 'INSERT INTO local_child VALUES (1, 1)');
  await ok('execute', 'DELETE FROM local_parent');
  await ok('execute', 'CREATE TABLE local_copy AS SELECT id, title FROM local_notes');
  await ok('execute', 'CREATE TABLE local_wr (k TEXT PRIMARY KEY, v) WITHOUT ROWID');
  await ok('execute', "INSERT INTO local_wr VALUES ('a', 1)");
  await ok('execute', 'CREATE TABLE local_gen (a INTEGER, b INTEGER GENERATED ALWAYS AS (a * 2) VIRTUAL)');
  await ok('execute', 'INSERT INTO local_gen (a) VALUES (21)');
  t.match((await ok('query', 'SELECT b FROM local_gen'))?.rows[0], { b: 42 });
  // ALTER TABLE in every form.
  await ok('execute', "ALTER TABLE local_copy ADD COLUMN extra TEXT DEFAULT 'x'");
  await ok('execute', 'ALTER TABLE local_copy RENAME COLUMN title TO name');
  await ok('execute', 'ALTER TABLE local_copy DROP COLUMN extra');
  await ok('execute', 'ALTER TABLE local_copy RENAME TO local_copy2');
  t.same((await ok('query', 'SELECT name FROM local_copy2 ORDER BY id LIMIT 1'))?.rows, [{ name: 'first' }]);
  // DELETE without WHERE (compiles to Clear), then the drops.
  await ok('execute', 'DELETE FROM local_wr');
  await ok('execute', 'DROP INDEX local_notes_score');
  await ok('execute', 'DROP INDEX IF EXISTS local_nothing');
  await ok('execute', 'DROP TABLE IF EXISTS local_nothing');
  // DROP right after a query stopped at the row cap in the same child (statements still pending).
  await ok('query', 'WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 2000) SELECT x FROM r');
  for (const table of ['local_copy2', 'local_gen', 'local_wr', 'local_child', 'local_parent', 'local_notes', 'local_a'])
    await ok('execute', `DROP TABLE ${table}`);
  t.equal(sequenceOf(b.path, 'local_a'), undefined, 'DROP TABLE cleared its sequence');
  t.equal(integrity(b.path), 'ok');
});

t.test("a file carrying a trigger or a view is refused at load; the review lists the file's own objects", async (t) => {
  const h = { d: await runDaemon(t) };
  const dir = tempDir(t, 'agt-unsafe-');
  const make = async (name: string, ddl: string[]) => {
    const path = await createAgentFile(dir, { name });
    const db = new Database(path);
    for (const statement of ddl) db.exec(statement);
    db.close();
    return path;
  };
  const leaked = join(dir, 'leaked');
  mkdirSync(leaked);
  const trigger = await make('with-trigger', [
    "CREATE TRIGGER steal AFTER INSERT ON agt_logs BEGIN INSERT INTO agt_meta (key, value, updated_at) SELECT 'stolen', hex(value), 0 FROM agt_credentials; END",
  ]);
  const view = await make('with-view', ['CREATE VIEW local_v AS SELECT * FROM agt_credentials']);
  const temp = await make('with-trigger-on-local', [
    'CREATE TABLE local_t (a)',
    'CREATE TRIGGER local_tr AFTER INSERT ON local_t BEGIN SELECT 1; END',
  ]);
  const virtual = await make('with-virtual', ['CREATE VIRTUAL TABLE local_fts USING fts5(body)']);
  // The memory's full-text index is accepted only as the daemon makes it (docs/memory.md).
  const otherFts = await make('with-other-memory-fts', [
    'DROP TABLE agt_memory_fts',
    'CREATE VIRTUAL TABLE agt_memory_fts USING fts5(text, secret)',
  ]);
  for (const [path, kind, name] of [
    [trigger, 'trigger', 'steal'],
    [view, 'view', 'local_v'],
    [temp, 'trigger', 'local_tr'],
    [virtual, 'table', 'local_fts'],
    [otherFts, 'table', 'agt_memory_fts'],
  ] as const) {
    const before = fingerprint(path);
    const load = await h.d.request('POST', '/agents/load', { filePath: path });
    t.equal(load.status, 422, `${name}: refused`);
    t.match(load.body, {
      code: 'load_failed',
      reason: 'unsafe_schema',
      filePath: path,
      objects: [{ type: kind, name }],
    });
    t.match(load.body.error, new RegExp(name));
    const review = await h.d.request('GET', `/agents/review?filePath=${encodeURIComponent(path)}`);
    t.equal(review.status, 422, `${name}: the review refuses it too`);
    t.match(review.body, { code: 'load_failed', reason: 'unsafe_schema', objects: [{ type: kind, name }] });
    t.equal(
      fingerprint(path),
      before,
      `${name}: the refused file is untouched (no migration, no lease, no WAL switch)`,
    );
  }
  t.same((await h.d.request('GET', '/agents')).body, [], 'nothing loaded');

  // A file with the agent's own tables and indexes loads, and the review lists them.
  const fine = await make('with-local-tables', [
    'CREATE TABLE local_notes (id INTEGER PRIMARY KEY AUTOINCREMENT, body TEXT UNIQUE)',
    'CREATE INDEX local_notes_body ON local_notes (body)',
  ]);
  const review = await h.d.request('GET', `/agents/review?filePath=${encodeURIComponent(fine)}`);
  t.equal(review.status, 200);
  t.same(review.body.schemaObjects, [
    { type: 'index', name: 'local_notes_body', table: 'local_notes' },
    { type: 'table', name: 'local_notes', table: 'local_notes' },
  ]);
  t.equal((await h.d.request('POST', '/agents/load', { filePath: fine })).status, 200);
  const loadedReview = await h.d.request('GET', `/agents/review?filePath=${encodeURIComponent(fine)}`);
  t.same(loadedReview.body.schemaObjects, review.body.schemaObjects, 'the same for a loaded file');
  const plain = await createAgentFile(dir, { name: 'plain' });
  t.same(
    (await h.d.request('GET', `/agents/review?filePath=${encodeURIComponent(plain)}`)).body.schemaObjects,
    [],
    "a fresh file carries nothing but the daemon's own",
  );
});
