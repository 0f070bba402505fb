/**
 * The agent-SQL boundary (issue 9 items 1, 3, 4): every escape class is refused by what SQLite compiled
 * or by the schema effect, not by the text, and leaves the agent file as it was; legitimate SQL on
 * `local_*` tables works (DROP TABLE included); a file carrying triggers or views is refused at load.
 *
 * Most cases talk to the SQL child directly (SqlSandbox on a real agent file); `hints: false` turns the
 * friendly text refusals off, so the case shows the boundary itself holding. The first tests go through
 * the daemon and a model calling the tools, as an agent would.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'libsql';
import t from 'tap';
import { SqlSandbox, type SqlCall } from '../kernel/runtime/sql-sandbox/sql-runner.js';
import { createAgentFile } from './helpers/agent-file.js';
import { tempDir } from './helpers/daemon.js';
import { runtimeHarness, type RuntimeHarness } from './fixtures/runtime/harness.js';

/** What the helpers need of a tap test. */
interface Tap {
  teardown(fn: () => unknown): void;
}

/** JSON without libsql's per-row `_metadata` (it carries timings); BLOBs as hex. */
const stable = (value: unknown) => JSON.stringify(value, (key, v) => (key === '_metadata' ? undefined : v instanceof ArrayBuffer ? Buffer.from(v).toString('hex') : v));

/** Everything in the file that matters: schema, header fields and every table's rows (but `skip`). */
function fingerprint(path: string, skip: readonly string[] = []): string {
  const db = new Database(path, { readonly: true });
  try {
    const hash = createHash('sha256');
    const schema = db.prepare('SELECT type, name, tbl_name, rootpage, sql FROM sqlite_master ORDER BY type, name').all() as Array<{ type: string; name: string; sql: string | null }>;
    hash.update(stable(schema));
    for (const pragma of ['user_version', 'application_id', 'journal_mode', 'page_size']) hash.update(stable(db.prepare(`PRAGMA ${pragma}`).get()));
    for (const table of schema.filter((o) => o.type === 'table' && !skip.includes(o.name))) {
      const rows = db.prepare(`SELECT * FROM "${table.name.replace(/"/g, '""')}"`).all();
      hash.update(table.name).update(stable(rows));
    }
    return hash.digest('hex');
  } finally {
    db.close();
  }
}

function integrity(path: string): string {
  const db = new Database(path, { readonly: true });
  try {
    return String((db.prepare('PRAGMA integrity_check').get() as { integrity_check: string }).integrity_check);
  } finally {
    db.close();
  }
}

/** Reads the file on a connection of the test's own (closed afterwards). */
function readFile<T>(path: string, read: (db: Database.Database) => T): T {
  const db = new Database(path, { readonly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/** A table's AUTOINCREMENT counter, read from the file by the test itself (agent SQL cannot). */
const sequenceOf = (path: string, table: string) =>
  readFile(path, (db) => (db.prepare('SELECT seq FROM sqlite_sequence WHERE name = ?').get(table) as { seq: number } | undefined)?.seq);

interface Box {
  path: string;
  dir: string;
  sandbox: SqlSandbox;
  query(sql: string, params?: SqlCall['params'], extra?: Partial<SqlCall>): Promise<any>;
  execute(sql: string, params?: SqlCall['params'], extra?: Partial<SqlCall>): Promise<any>;
  /** The error a call ends with (fails the test when it succeeds). */
  refused(mode: 'query' | 'execute', sql: string, extra?: Partial<SqlCall>): Promise<{ code: string; message: string }>;
}

async function box(t: Tap, seed?: (db: Database.Database) => void): Promise<Box> {
  const dir = tempDir(t, 'agt-sql-');
  const path = await createAgentFile(dir, {}, {
    seed: (file) => {
      file.credentials.write('api', Buffer.from('sealed-secret'), { sealed: true, length: 13 });
      file.meta.set('mood', 'good', { actor: 'owner' });
      file.raw.exec('CREATE TABLE local_a (id INTEGER PRIMARY KEY AUTOINCREMENT, body TEXT, n INTEGER)');
      file.raw.exec("INSERT INTO local_a (body, n) VALUES ('one', 1), ('two', 2)");
      if (seed) seed(file.raw.db);
    },
  });
  const sandbox = new SqlSandbox(path);
  t.teardown(() => sandbox.close());
  const call = (mode: 'query' | 'execute') => (sql: string, params: SqlCall['params'] = [], extra: Partial<SqlCall> = {}) =>
    mode === 'query' ? sandbox.query({ sql, params, ...extra }) : sandbox.execute({ sql, params, ...extra });
  return {
    path,
    dir,
    sandbox,
    query: call('query'),
    execute: call('execute'),
    async refused(mode, sql, extra = {}) {
      try {
        const result = await call(mode)(sql, [], extra);
        return { code: 'none', message: `succeeded: ${JSON.stringify(result).slice(0, 200)}` };
      } catch (error) {
        return { code: (error as { code: string }).code, message: (error as Error).message };
      }
    },
  };
}

/** The tool results the model saw on its last call. */
const toolResults = (h: RuntimeHarness) => h.model.calls.at(-1)!.messages.filter((m) => m.role === 'tool') as Array<{ content: string; isError?: boolean }>;

t.test('through the tools: readfile of the daemon token and of another agent file, writefile, ATTACH', async (t) => {
  const h = await runtimeHarness(t);
  const other = await createAgentFile(h.dir, { name: 'other-agent' });
  const id = await h.agent();
  const file = h.d.daemon.kernel.registry.resolve(id).file;
  // The turn itself writes the conversation, the log and the queue; everything else must stay.
  const turnTables = ['agt_loop', 'agt_logs', 'agt_queue', 'agt_idempotency', 'agt_usage'];
  const before = fingerprint(file.path, turnTables);
  const token = join(h.d.dataDir, 'daemon-token');
  const dropped = join(h.dir, 'pwned.txt');
  h.model.push(
    {
      toolCalls: [
        { name: 'db_query', args: { sql: `SELECT readfile('${token}') AS t` } },
        { name: 'db_query', args: { sql: 'SELECT readfile(?) AS t', params: [token] } },
        { name: 'db_query', args: { sql: 'SELECT hex(readfile(?)) AS t', params: [other] } },
        { name: 'db_query', args: { sql: `SELECT writefile('${dropped}', 'owned') AS w` } },
        { name: 'db_execute', args: { sql: `ATTACH '${other}' AS o` } },
        { name: 'db_query', args: { sql: 'SELECT * FROM agt_config' } },
      ],
    },
    { text: 'done' },
  );
  await h.ended((await h.d.request('POST', `/agents/${id}/chat`, { text: 'go' })).body.turnId);
  const results = toolResults(h);
  t.equal(results.length, 6);
  for (const result of results) {
    t.equal(result.isError, true, 'refused');
    t.notMatch(result.content, h.d.token, 'the token never appears');
  }
  t.match(results[0]!.content, /readfile\(\) is not available/);
  t.match(results[1]!.content, /readfile\(\) is not available/);
  t.match(results[2]!.content, /readfile\(\) is not available/);
  t.match(results[3]!.content, /writefile\(\) is not available/);
  t.match(results[4]!.content, /ATTACH statements are not available/);
  t.match(results[5]!.content, /reaches table agt_config/);
  t.notOk(existsSync(dropped), 'writefile wrote nothing');
  t.equal(fingerprint(file.path, turnTables), before, 'the agent file is unchanged');
});

t.test('through the tools: local tables work end to end, DROP TABLE included', async (t) => {
  const h = await runtimeHarness(t);
  const id = await h.agent();
  h.model.push(
    {
      toolCalls: [
        { name: 'db_execute', args: { sql: 'CREATE TABLE local_z (id INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT, ok INTEGER)' } },
        { name: 'db_execute', args: { sql: 'INSERT INTO local_z (v, ok) VALUES (?, ?)', params: ['x', true] } },
        { name: 'db_query', args: { sql: 'SELECT v, ok FROM local_z' } },
        { name: 'db_execute', args: { sql: 'DROP TABLE local_z' } },
        { name: 'db_query', args: { sql: "SELECT count(*) AS n FROM local_z" } },
      ],
    },
    { text: 'done' },
  );
  await h.ended((await h.d.request('POST', `/agents/${id}/chat`, { text: 'go' })).body.turnId);
  const results = toolResults(h).map((r) => r.content);
  t.match(results[1], /"changes": 1/);
  t.same(JSON.parse(results[2]!), { rows: [{ v: 'x', ok: 1 }], truncated: false }, 'a boolean parameter is bound as 1');
  t.match(results[3], /"changes": 0/, 'DROP TABLE works (no "database table is locked")');
  t.match(results[4], /no such table: local_z/);
  const tables = (await h.d.request('GET', `/agents/${id}/tables`)).body;
  t.notOk(JSON.stringify(tables).includes('local_z'));
});

t.test('file functions, extensions, ATTACH/DETACH, table-valued functions and other functions', async (t) => {
  const b = await box(t);
  const before = fingerprint(b.path);
  const secretFile = join(b.dir, 'daemon-token');
  writeFileSync(secretFile, 'the-daemon-token');
  const target = join(b.dir, 'written.txt');
  const attached = join(b.dir, 'attached.db');
  const cases: Array<[mode: 'query' | 'execute', sql: string, message: RegExp]> = [
    ['query', `SELECT readfile('${secretFile}')`, /readfile\(\) is not available/],
    ['query', `SELECT length(readfile('${b.path}'))`, /readfile\(\) is not available/],
    ['query', `SELECT writefile('${target}', 'x')`, /writefile\(\) is not available/],
    ['execute', `INSERT INTO local_a (body) VALUES (writefile('${target}', 'x'))`, /writefile\(\) is not available/],
    ['execute', `UPDATE local_a SET body = readfile('${secretFile}')`, /readfile\(\) is not available/],
    ['query', "SELECT * FROM fsdir('/')", /virtual tables and table-valued functions/],
    ['query', "SELECT name FROM fsdir('.') LIMIT 1", /virtual tables and table-valued functions/],
    ['query', "SELECT load_extension('/tmp/nothing.so')", /load_extension\(\) is not available/],
    ['query', "SELECT edit('x', 'vi')", /no such function: edit|edit\(\) is not available/],
    ['query', "SELECT sha3_query('SELECT 1')", /sha3_query\(\) is not available/],
    ['query', "SELECT fts3_tokenizer('simple')", /fts3_tokenizer\(\) is not available/],
    ['query', "SELECT sqlite3mc_config('cipher')", /sqlite3mc_config\(\) is not available/],
    ['query', "SELECT sqlite_compileoption_get(0)", /not available/],
    ['query', "SELECT 'a' REGEXP 'a'", /regexp\(\) is not available/],
    ['execute', `ATTACH '${attached}' AS x`, /ATTACH statements are not available/],
    ['execute', 'DETACH main', /DETACH statements are not available/],
    ['query', `SELECT sqlite_attach('${attached}', 'x', NULL)`, /no such function: sqlite_attach/],
    ['query', "SELECT * FROM json_each('[1,2]')", /table-valued functions/],
    ['query', "SELECT * FROM json_tree('{}')", /table-valued functions/],
    ['query', 'SELECT * FROM generate_series(1, 3)', /table-valued functions/],
    ['query', "SELECT * FROM pragma_table_info('agt_credentials')", /table-valued functions/],
    ['query', 'SELECT * FROM pragma_function_list', /table-valued functions/],
    ['query', 'SELECT * FROM sqlite_dbpage', /table-valued functions/],
    ['query', 'SELECT * FROM dbstat', /table-valued functions/],
  ];
  for (const [mode, sql, message] of cases) {
    for (const hints of [true, false]) {
      const refusal = await b.refused(mode, sql, { hints });
      t.match(refusal.message, message, `${sql} (hints ${hints})`);
      t.ok(['forbidden', 'bad_request'].includes(refusal.code), `${sql}: ${refusal.code}`);
    }
  }
  t.notOk(existsSync(target), 'writefile wrote nothing');
  t.notOk(existsSync(attached), 'ATTACH created nothing');
  t.equal(fingerprint(b.path), before, 'the agent file is unchanged');
});

t.test('PRAGMA, VACUUM, ANALYZE, transaction control and EXPLAIN never compile', async (t) => {
  const b = await box(t);
  const before = fingerprint(b.path);
  const copy = join(b.dir, 'copy.agt');
  const statements = [
    'PRAGMA user_version = 99',
    'PRAGMA writable_schema = ON',
    "PRAGMA key = 'attacker'",
    "PRAGMA rekey = 'attacker'",
    "PRAGMA cipher = 'chacha20'",
    'PRAGMA locking_mode = EXCLUSIVE',
    "PRAGMA temp_store_directory = '/tmp'",
    'PRAGMA journal_mode = DELETE',
    'pragma   trusted_schema=on',
    '/* a comment first */ PRAGMA user_version = 7',
    '-- a line comment\nPRAGMA user_version = 7',
    ';PRAGMA user_version = 7',
    `VACUUM INTO '${copy}'`,
    'VACUUM',
    'ANALYZE',
    'REINDEX',
    'BEGIN',
    'COMMIT',
    'SAVEPOINT x',
    'EXPLAIN SELECT 1',
    'EXPLAIN QUERY PLAN SELECT * FROM agt_config',
  ];
  for (const sql of statements) {
    for (const mode of ['query', 'execute'] as const) {
      const refusal = await b.refused(mode, sql, { hints: false });
      t.ok(refusal.code === 'forbidden' || refusal.code === 'bad_request', `${JSON.stringify(sql)} ${mode}: ${refusal.code} ${refusal.message}`);
    }
  }
  t.notOk(existsSync(copy), 'VACUUM INTO wrote nothing');
  t.equal(fingerprint(b.path), before, 'the agent file is unchanged (header, schema and rows)');
  t.equal((await b.query('SELECT count(*) AS n FROM local_a')).rows[0].n, 2, 'the file still opens with no key');
});

t.test('agt_* tables and sqlite_master are unreachable, for reading and writing', async (t) => {
  const b = await box(t);
  const before = fingerprint(b.path);
  const cases: Array<['query' | 'execute', string]> = [
    ['query', 'SELECT * FROM agt_config'],
    ['query', 'SELECT * FROM main.agt_credentials'],
    ['query', 'SELECT * FROM local_a, agt_meta'],
    ['query', 'SELECT (SELECT value FROM agt_credentials LIMIT 1) AS v'],
    ['query', 'SELECT body FROM local_a WHERE id IN (SELECT id FROM agt_logs)'],
    ['query', 'SELECT count(*) FROM agt_logs'],
    ['query', 'WITH c AS (SELECT * FROM agt_identity) SELECT * FROM c'],
    ['query', 'SELECT * FROM sqlite_master'],
    ['query', 'SELECT * FROM sqlite_schema'],
    ['query', 'SELECT * FROM temp.sqlite_master'],
    ['query', 'SELECT * FROM sqlite_temp_master'],
    ['execute', "INSERT INTO agt_logs (level, message, created_at) VALUES ('info', 'forged', 0)"],
    ['execute', "UPDATE agt_config SET value = '{}'"],
    ['execute', 'DELETE FROM agt_logs'],
    ['execute', 'DELETE FROM agt_credentials WHERE 1'],
    ['execute', 'REPLACE INTO agt_meta (key, value, updated_at) VALUES (?, ?, 0)'],
    ['execute', 'INSERT INTO local_a (body) SELECT value FROM agt_credentials'],
    ['execute', 'UPDATE local_a SET body = (SELECT value FROM agt_config LIMIT 1)'],
  ];
  for (const [mode, sql] of cases) {
    const refusal = await b.refused(mode, sql, { hints: false });
    t.equal(refusal.code, 'forbidden', `${sql}: ${refusal.message}`);
  }
  // SQLite itself refuses to compile writes to its schema table (bad_request), before any check.
  for (const sql of ["UPDATE sqlite_master SET sql = 'x'", "INSERT INTO sqlite_master VALUES ('trigger', 't', 'agt_logs', 0, 'CREATE TRIGGER t ...')", 'DELETE FROM sqlite_master']) {
    t.match(await b.refused('execute', sql, { hints: false }), { code: 'bad_request', message: /may not be modified/ }, sql);
  }
  t.equal(fingerprint(b.path), before, 'the agent file is unchanged');
});

t.test('SQLite\'s own tables: no statement reads sqlite_master/sqlite_schema/sqlite_temp_master/sqlite_sequence or writes sqlite_sequence (issue 22 item 4)', async (t) => {
  // A daemon-side AUTOINCREMENT table puts a row that is not the agent's into sqlite_sequence.
  const b = await box(t, (db) => {
    db.exec('CREATE TABLE agt_counter (id INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT)');
    db.exec("INSERT INTO agt_counter (v) VALUES ('a'), ('b'), ('c')");
  });
  const before = fingerprint(b.path);
  const sequence = () => readFile(b.path, (db) => stable(db.prepare('SELECT name, seq FROM sqlite_sequence ORDER BY name').all()));
  const sequenceBefore = sequence();
  const schemaQueries = [
    'SELECT * FROM sqlite_master',
    'SELECT * FROM sqlite_schema',
    'SELECT * FROM main.sqlite_schema',
    'SELECT * FROM "SQLITE_MASTER"',
    'SELECT * FROM [sqlite_master]',
    'SELECT * FROM temp.sqlite_schema',
    'SELECT * FROM sqlite_temp_master',
    'SELECT count(*) FROM sqlite_master',
    "SELECT name FROM sqlite_master WHERE type = 'table'",
    'WITH s AS (SELECT * FROM sqlite_master) SELECT * FROM s',
    'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r, sqlite_master WHERE n < 2) SELECT * FROM r',
    'SELECT (SELECT group_concat(name) FROM sqlite_master) AS names',
    "SELECT 1 WHERE EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'agt_credentials')",
    'SELECT * FROM local_a WHERE body IN (SELECT name FROM sqlite_master)',
    'SELECT * FROM local_a JOIN sqlite_schema s ON s.rootpage = local_a.id',
    'VALUES ((SELECT count(*) FROM sqlite_master))',
    'SELECT * FROM json_each((SELECT json_group_array(name) FROM sqlite_master))',
    'SELECT value FROM json_each((SELECT json_group_array(sql) FROM sqlite_schema))',
    "SELECT * FROM pragma_table_info('agt_credentials')",
    'SELECT * FROM pragma_table_list',
    "SELECT * FROM pragma_index_list('agt_logs')",
    'SELECT * FROM sqlite_sequence',
    "SELECT seq FROM sqlite_sequence WHERE name = 'local_a'",
    'SELECT count(*) FROM sqlite_sequence',
    'SELECT (SELECT max(seq) FROM sqlite_sequence) AS m',
    'WITH s AS (SELECT * FROM sqlite_sequence) SELECT * FROM s',
    'SELECT * FROM local_a WHERE id IN (SELECT seq FROM sqlite_sequence)',
    'SELECT * FROM json_each((SELECT json_group_object(name, seq) FROM sqlite_sequence))',
  ];
  const statements = [
    'CREATE TABLE local_m AS SELECT type, name, tbl_name, sql FROM sqlite_master',
    'CREATE TABLE local_m AS SELECT * FROM sqlite_schema',
    'CREATE TABLE local_m AS SELECT * FROM temp.sqlite_master',
    'CREATE TABLE local_m AS SELECT * FROM sqlite_sequence',
    'CREATE TABLE local_m AS WITH s AS (SELECT name FROM sqlite_master) SELECT * FROM s',
    'CREATE TABLE local_m AS SELECT (SELECT count(*) FROM sqlite_master) AS n',
    'CREATE TABLE local_m AS SELECT * FROM local_a WHERE body IN (SELECT name FROM sqlite_master)',
    'CREATE TABLE local_m AS SELECT value FROM json_each((SELECT json_group_array(name) FROM sqlite_master))',
    "CREATE TABLE local_m AS SELECT * FROM pragma_table_info('agt_credentials')",
    'CREATE TABLE local_m AS SELECT name, seq FROM sqlite_sequence',
    'CREATE TABLE local_m (a DEFAULT (SELECT name FROM sqlite_master))',
    'CREATE TABLE local_m (a CHECK (a IN (SELECT name FROM sqlite_master)))',
    'CREATE INDEX local_i ON local_a (body) WHERE body IN (SELECT name FROM sqlite_master)',
    'ALTER TABLE local_a ADD COLUMN z DEFAULT (SELECT count(*) FROM sqlite_master)',
    'CREATE VIEW local_v AS SELECT * FROM sqlite_master',
    'CREATE TRIGGER local_t AFTER INSERT ON local_a BEGIN INSERT INTO local_a (body) SELECT name FROM sqlite_master; END',
    'CREATE TRIGGER local_t AFTER INSERT ON local_a BEGIN UPDATE sqlite_sequence SET seq = 0; END',
    'INSERT INTO local_a (body) SELECT name FROM sqlite_master',
    "INSERT INTO local_a (body) SELECT sql FROM sqlite_schema WHERE name = 'agt_credentials'",
    'INSERT INTO local_a (body) VALUES ((SELECT count(*) FROM sqlite_master))',
    'WITH s AS (SELECT name FROM sqlite_master) INSERT INTO local_a (body) SELECT name FROM s',
    'UPDATE local_a SET body = (SELECT group_concat(name) FROM sqlite_master)',
    'DELETE FROM local_a WHERE body IN (SELECT name FROM sqlite_master)',
    // local_a is AUTOINCREMENT: SQLite's own sqlite_sequence code is in these programs beside the agent's read.
    'INSERT INTO local_a (body, n) SELECT name, seq FROM sqlite_sequence',
    "INSERT INTO local_a (body) VALUES ((SELECT name FROM sqlite_sequence WHERE name LIKE 'agt%'))",
    'WITH s AS (SELECT * FROM sqlite_sequence) INSERT INTO local_a (body, n) SELECT name, seq FROM s',
    "UPDATE local_a SET n = (SELECT seq FROM sqlite_sequence WHERE name = 'agt_counter')",
    'DELETE FROM local_a WHERE n IN (SELECT seq FROM sqlite_sequence)',
    "INSERT INTO sqlite_sequence (name, seq) VALUES ('agt_counter', 0)",
    "INSERT INTO sqlite_sequence (name, seq) VALUES ('local_a', 1000)",
    "REPLACE INTO sqlite_sequence VALUES ('local_a', 5)",
    'INSERT INTO sqlite_sequence SELECT name, seq FROM sqlite_sequence',
    'UPDATE sqlite_sequence SET seq = 0',
    "UPDATE sqlite_sequence SET seq = 0 WHERE name = 'local_a'",
    'WITH s AS (SELECT 1) UPDATE sqlite_sequence SET seq = seq + 1',
    'DELETE FROM sqlite_sequence',
    "DELETE FROM sqlite_sequence WHERE name = 'agt_counter'",
    'EXPLAIN SELECT * FROM sqlite_master',
    'EXPLAIN DELETE FROM sqlite_sequence',
  ];
  const cases = [...schemaQueries.map((sql) => ['query', sql] as const), ...statements.map((sql) => ['execute', sql] as const)];
  for (const [mode, sql] of cases) {
    for (const hints of [true, false]) {
      const refusal = await b.refused(mode, sql, { hints });
      // forbidden: the compiled program or the schema effect; bad_request: SQLite refuses to compile it
      // (no subqueries in DEFAULT, CHECK or index WHERE) or the statement kind never compiles (EXPLAIN).
      t.ok(['forbidden', 'bad_request'].includes(refusal.code), `${sql} (hints ${hints}): ${refusal.code} ${refusal.message}`);
      t.notMatch(refusal.message, /agt_credentials|agt_logs|agt_counter|CREATE TABLE/, `${sql}: the refusal shows nothing of the schema`);
    }
  }
  // The two that got through before, by their own reason.
  t.match(await b.refused('execute', 'CREATE TABLE local_m AS SELECT type, name, tbl_name, sql FROM sqlite_master', { hints: false }), { code: 'forbidden', message: /sqlite_master \(sqlite_schema\) is not reachable/ });
  t.match(await b.refused('execute', "UPDATE sqlite_sequence SET seq = 0 WHERE name = 'local_a'", { hints: false }), { code: 'forbidden', message: /sqlite_sequence is not reachable/ });
  t.match(await b.refused('execute', 'INSERT INTO local_a (body, n) SELECT name, seq FROM sqlite_sequence', { hints: false }), { code: 'forbidden', message: /sqlite_sequence is not reachable/ });
  t.equal(fingerprint(b.path), before, 'the agent file is unchanged (no local_m, no view, no trigger)');
  t.equal(sequence(), sequenceBefore, 'sqlite_sequence is unchanged');
});

t.test('AUTOINCREMENT on local_* tables works without reaching sqlite_sequence (SQLite keeps the counter)', async (t) => {
  // A fresh agent file has no sqlite_sequence (agt_* tables use no AUTOINCREMENT): the first such table creates it.
  const path = await createAgentFile(tempDir(t, 'agt-sql-'), {});
  const hasSequence = () => readFile(path, (db) => db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'sqlite_sequence'").get() as { n: number });
  t.equal(hasSequence().n, 0, 'no sqlite_sequence yet');
  const sandbox = new SqlSandbox(path);
  t.teardown(() => sandbox.close());
  const b = { path, execute: (sql: string) => sandbox.execute({ sql }), query: (sql: string) => sandbox.query({ sql }) };
  await b.execute('CREATE TABLE local_s (id INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT UNIQUE, n INTEGER DEFAULT 0)');
  t.equal(hasSequence().n, 1, 'SQLite created sqlite_sequence');
  await b.execute("INSERT INTO local_s (v) VALUES ('a'), ('b'), ('c')");
  await b.execute("DELETE FROM local_s WHERE v = 'c'");
  const again = await b.execute("INSERT INTO local_s (v) VALUES ('d')");
  t.equal(again.lastInsertRowid, 4, 'a deleted top id is not reused');
  await b.execute("INSERT INTO local_s (v) VALUES ('a') ON CONFLICT (v) DO UPDATE SET n = n + 1");
  await b.execute("REPLACE INTO local_s (id, v) VALUES (10, 'e')");
  await b.execute('WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 5) INSERT INTO local_s (v) SELECT printf(\'r%d\', x) FROM r');
  await b.execute('CREATE TABLE local_t (id INTEGER PRIMARY KEY AUTOINCREMENT, w)');
  await b.execute('INSERT INTO local_t (w) SELECT v FROM local_s');
  t.equal(sequenceOf(b.path, 'local_s'), 15);
  t.equal(sequenceOf(b.path, 'local_t'), 9);
  await b.execute('ALTER TABLE local_s RENAME TO local_s2');
  t.equal(sequenceOf(b.path, 'local_s2'), 15, 'a rename carries the counter');
  t.same((await b.query('SELECT max(id) AS m, count(*) AS c FROM local_s2')).rows, [{ m: 15, c: 9 }]);
  await b.execute('DELETE FROM local_s2');
  t.equal((await b.execute("INSERT INTO local_s2 (v) VALUES ('z')")).lastInsertRowid, 16, 'the counter survives an emptied table');
  await b.execute('DROP TABLE local_s2');
  t.equal(sequenceOf(b.path, 'local_s2'), undefined, 'DROP TABLE removes its counter');
  t.equal(sequenceOf(b.path, 'local_t'), 9);
  t.equal(integrity(b.path), 'ok');
});

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
  t.equal((await b.refused('execute', 'ALTER TABLE local_b RENAME TO sqlite_b')).code, 'bad_request', 'SQLite reserves sqlite_ names itself');
  await b.execute('DROP TABLE local_b');
  t.equal(fingerprint(b.path), before, 'the agent file is unchanged');
  t.equal(integrity(b.path), 'ok');
});

t.test('one statement per call: a second statement never runs', async (t) => {
  const b = await box(t);
  t.match((await b.refused('query', 'SELECT 1; DROP TABLE local_a')).message, /one SQL statement at a time/);
  t.match((await b.refused('execute', "DELETE FROM local_a WHERE id = 1; PRAGMA user_version = 5")).message, /one SQL statement at a time/);
  // Without the friendly check, libsql compiles only the first statement: the second is never run.
  t.same((await b.query('SELECT 1 AS x; DROP TABLE local_a', [], { hints: false })).rows, [{ x: 1 }]);
  t.equal((await b.execute("INSERT INTO local_a (body) VALUES ('x'); DROP TABLE local_a", [], { hints: false })).changes, 1);
  t.equal((await b.query('SELECT count(*) AS n FROM local_a')).rows[0].n, 3, 'local_a is still there');
  t.same((await b.query("SELECT ';' AS s, 'it''s' AS q -- trailing; comment")).rows, [{ s: ';', q: "it's" }], 'semicolons inside literals and comments are fine');
  t.same((await b.query('SELECT 2 AS y;  ;  ')).rows, [{ y: 2 }], 'trailing semicolons are fine');
});

t.test('db_query only reads, db_execute only writes', async (t) => {
  const b = await box(t);
  t.equal((await b.refused('query', "INSERT INTO local_a (body) VALUES ('x')")).code, 'bad_request');
  t.equal((await b.refused('query', "WITH x AS (SELECT 1) INSERT INTO local_a (body) SELECT 'x' FROM x")).code, 'bad_request');
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
  await ok('execute', 'CREATE TABLE local_notes (id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NOT NULL DEFAULT \'\', body TEXT, score REAL CHECK (score >= 0), tags TEXT, UNIQUE (title))');
  await ok('execute', 'CREATE TABLE IF NOT EXISTS local_notes (x)');
  await ok('execute', 'CREATE INDEX local_notes_score ON local_notes (score DESC, title)');
  await ok('execute', 'CREATE UNIQUE INDEX IF NOT EXISTS local_notes_body ON local_notes (body) WHERE body IS NOT NULL');
  await ok('execute', 'CREATE INDEX local_notes_lower ON local_notes (lower(title))');
  const inserted = await ok('execute', 'INSERT INTO local_notes (title, body, score, tags) VALUES (?, ?, ?, ?)', ['first', 'hello', 1.5, '["a","b"]']);
  t.same(inserted, { changes: 1, lastInsertRowid: 1 });
  await ok('execute', "INSERT INTO local_notes (title, score, tags) VALUES ('second', 3, '[\"b\"]'), ('third', 2, '[]')");
  await ok('execute', "INSERT INTO local_notes (title, score) VALUES ('first', 9) ON CONFLICT (title) DO UPDATE SET score = excluded.score");
  await ok('execute', "REPLACE INTO local_notes (id, title, score) VALUES (3, 'third', 4)");
  await ok('execute', 'UPDATE local_notes SET body = upper(title) WHERE score > ?', [2]);
  await ok('execute', 'WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 20) INSERT INTO local_a (body, n) SELECT printf(\'row %d\', x), x FROM r');
  await ok('execute', 'DELETE FROM local_a WHERE n > 15');
  const aggregates = await ok('query', 'SELECT count(*) AS c, sum(score) AS s, avg(score) AS a, min(score) AS lo, max(score) AS hi, group_concat(title, \',\') AS titles, total(score) AS t FROM local_notes');
  t.match(aggregates?.rows[0], { c: 3, s: 16, lo: 3, hi: 9 }, 'scores 9 (upserted), 3 and 4 (replaced)');
  const json = await ok('query', "SELECT json_extract(tags, '$[0]') AS first, json_array_length(tags) AS n, tags ->> '$[1]' AS second, json_object('t', title) AS o, json_group_array(title) OVER () AS all_titles FROM local_notes WHERE id = 1");
  t.match(json?.rows[0], { first: 'a', n: 2, second: 'b', o: '{"t":"first"}' });
  const windowed = await ok('query', 'SELECT title, row_number() OVER (ORDER BY score) AS rn, rank() OVER (ORDER BY score DESC) AS rk, lag(title) OVER (ORDER BY id) AS prev FROM local_notes ORDER BY id');
  t.equal(windowed?.rows.length, 3);
  const dates = await ok('query', "SELECT date('2024-01-31', '+1 day') AS d, strftime('%Y', 'now') >= '2024' AS recent, unixepoch('1970-01-02') AS e, abs(-2) AS a, round(2.567, 1) AS r, coalesce(NULL, 'c') AS c, iif(1, 'y', 'n') AS i, substr('hello', 2, 3) AS s, hex(randomblob(2)) IS NOT NULL AS rb, typeof(zeroblob(2)) AS z");
  t.match(dates?.rows[0], { d: '2024-02-01', recent: 1, e: 86400, a: 2, r: 2.6, c: 'c', i: 'y', s: 'ell', rb: 1, z: 'blob' });
  const joined = await ok('query', 'SELECT a.body, n.title FROM local_a a JOIN local_notes n ON n.id = a.id LEFT JOIN local_notes m ON m.score > n.score WHERE a.id IN (SELECT id FROM local_notes) GROUP BY a.id HAVING count(*) >= 1 ORDER BY a.id LIMIT 2 OFFSET 0');
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
  await ok('execute', 'CREATE TABLE local_child (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES local_parent (id) ON DELETE CASCADE)');
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
  for (const table of ['local_copy2', 'local_gen', 'local_wr', 'local_child', 'local_parent', 'local_notes', 'local_a']) await ok('execute', `DROP TABLE ${table}`);
  t.equal(sequenceOf(b.path, 'local_a'), undefined, 'DROP TABLE cleared its sequence');
  t.equal(integrity(b.path), 'ok');
});

t.test('a file carrying a trigger or a view is refused at load; the review lists the file\'s own objects', async (t) => {
  const h = await runtimeHarness(t, { noModel: true });
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
  const trigger = await make('with-trigger', ["CREATE TRIGGER steal AFTER INSERT ON agt_logs BEGIN INSERT INTO agt_meta (key, value, updated_at) SELECT 'stolen', hex(value), 0 FROM agt_credentials; END"]);
  const view = await make('with-view', ['CREATE VIEW local_v AS SELECT * FROM agt_credentials']);
  const temp = await make('with-trigger-on-local', ['CREATE TABLE local_t (a)', 'CREATE TRIGGER local_tr AFTER INSERT ON local_t BEGIN SELECT 1; END']);
  const virtual = await make('with-virtual', ['CREATE VIRTUAL TABLE local_fts USING fts5(body)']);
  for (const [path, kind, name] of [[trigger, 'trigger', 'steal'], [view, 'view', 'local_v'], [temp, 'trigger', 'local_tr'], [virtual, 'table', 'local_fts']] as const) {
    const before = fingerprint(path);
    const load = await h.d.request('POST', '/agents/load', { filePath: path });
    t.equal(load.status, 422, `${name}: refused`);
    t.match(load.body, { code: 'load_failed', reason: 'unsafe_schema', filePath: path, objects: [{ type: kind, name }] });
    t.match(load.body.error, new RegExp(name));
    const review = await h.d.request('GET', `/agents/review?filePath=${encodeURIComponent(path)}`);
    t.equal(review.status, 422, `${name}: the review refuses it too`);
    t.match(review.body, { code: 'load_failed', reason: 'unsafe_schema', objects: [{ type: kind, name }] });
    t.equal(fingerprint(path), before, `${name}: the refused file is untouched (no migration, no lease, no WAL switch)`);
  }
  t.same((await h.d.request('GET', '/agents')).body, [], 'nothing loaded');

  // A file with the agent's own tables and indexes loads, and the review lists them.
  const fine = await make('with-local-tables', ['CREATE TABLE local_notes (id INTEGER PRIMARY KEY AUTOINCREMENT, body TEXT UNIQUE)', 'CREATE INDEX local_notes_body ON local_notes (body)']);
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
  t.same((await h.d.request('GET', `/agents/review?filePath=${encodeURIComponent(plain)}`)).body.schemaObjects, [], 'a fresh file carries nothing but the daemon\'s own');
});
