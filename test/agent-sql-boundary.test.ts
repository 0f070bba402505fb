/**
 * The agent-SQL boundary: every escape class is refused by what SQLite compiled
 * or by the schema effect, not by the text, and leaves the agent file as it was; legitimate SQL on
 * `local_*` tables works (DROP TABLE included); a file carrying triggers or views is refused at load.
 *
 * Most cases talk to the SQL child directly (SqlSandbox on a real agent file); `hints: false` turns the
 * friendly text refusals off, so the case shows the boundary itself holding. The first tests go through
 * the daemon and a model calling the tools, as an agent would.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { fingerprint, readFile, box, toolResults, stable } from './helpers/sql-boundary.js';
import { wireDaemon } from './helpers/wire-daemon.js';

const h = await wireDaemon(t);

t.test('through the tools: readfile of the daemon token and of another agent file, writefile, ATTACH', async (t) => {
  const other = await createAgentFile(h.dir, { name: 'other-agent' });
  const id = await h.agent({ name: 'escaper' });
  const file = { path: join(h.dir, 'escaper.agt') };
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
  const id = await h.agent({ name: 'tabler' });
  h.model.push(
    {
      toolCalls: [
        {
          name: 'db_execute',
          args: { sql: 'CREATE TABLE local_z (id INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT, ok INTEGER)' },
        },
        { name: 'db_execute', args: { sql: 'INSERT INTO local_z (v, ok) VALUES (?, ?)', params: ['x', true] } },
        { name: 'db_query', args: { sql: 'SELECT v, ok FROM local_z' } },
        { name: 'db_execute', args: { sql: 'DROP TABLE local_z' } },
        { name: 'db_query', args: { sql: 'SELECT count(*) AS n FROM local_z' } },
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
    ['query', 'SELECT sqlite_compileoption_get(0)', /not available/],
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
    // libsql's vector functions, which the memory uses (docs/memory.md).
    ['query', "SELECT vector_distance_cos(vector32('[1,2]'), vector32('[2,1]'))", /vector32\(\) is not available/],
    ['query', "SELECT vector_extract(vector1bit('[1,-1]'))", /vector1bit\(\) is not available/],
    ['query', "SELECT * FROM vector_top_k('agt_memory_idx', vector32('[1,2]'), 3)", /table-valued functions/],
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
      t.ok(
        refusal.code === 'forbidden' || refusal.code === 'bad_request',
        `${JSON.stringify(sql)} ${mode}: ${refusal.code} ${refusal.message}`,
      );
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
    // The long-term memory (docs/memory.md): its rows, full-text index, vectors and changelog.
    ['query', 'SELECT text FROM agt_memory'],
    ['query', "SELECT rowid FROM agt_memory_fts WHERE agt_memory_fts MATCH 'tea'"],
    ['query', 'SELECT embedding FROM agt_memory_vectors'],
    ['execute', "INSERT INTO agt_memory_fts (rowid, text) VALUES (1, 'planted')"],
    ['execute', 'DELETE FROM agt_memory_changelog'],
  ];
  for (const [mode, sql] of cases) {
    const refusal = await b.refused(mode, sql, { hints: false });
    t.equal(refusal.code, 'forbidden', `${sql}: ${refusal.message}`);
  }
  // SQLite itself refuses to compile writes to its schema table (bad_request), before any check.
  for (const sql of [
    "UPDATE sqlite_master SET sql = 'x'",
    "INSERT INTO sqlite_master VALUES ('trigger', 't', 'agt_logs', 0, 'CREATE TRIGGER t ...')",
    'DELETE FROM sqlite_master',
  ]) {
    t.match(
      await b.refused('execute', sql, { hints: false }),
      { code: 'bad_request', message: /may not be modified/ },
      sql,
    );
  }
  t.equal(fingerprint(b.path), before, 'the agent file is unchanged');
});

t.test(
  "SQLite's own tables: no statement reads sqlite_master/sqlite_schema/sqlite_temp_master/sqlite_sequence or writes sqlite_sequence",
  async (t) => {
    // A daemon-side AUTOINCREMENT table puts a row that is not the agent's into sqlite_sequence.
    const b = await box(t, (db) => {
      db.exec('CREATE TABLE agt_counter (id INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT)');
      db.exec("INSERT INTO agt_counter (v) VALUES ('a'), ('b'), ('c')");
    });
    const before = fingerprint(b.path);
    const sequence = () =>
      readFile(b.path, (db) => stable(db.prepare('SELECT name, seq FROM sqlite_sequence ORDER BY name').all()));
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
    const cases = [
      ...schemaQueries.map((sql) => ['query', sql] as const),
      ...statements.map((sql) => ['execute', sql] as const),
    ];
    for (const [mode, sql] of cases) {
      for (const hints of [true, false]) {
        const refusal = await b.refused(mode, sql, { hints });
        // forbidden: the compiled program or the schema effect; bad_request: SQLite refuses to compile it
        // (no subqueries in DEFAULT, CHECK or index WHERE) or the statement kind never compiles (EXPLAIN).
        t.ok(
          ['forbidden', 'bad_request'].includes(refusal.code),
          `${sql} (hints ${hints}): ${refusal.code} ${refusal.message}`,
        );
        t.notMatch(
          refusal.message,
          /agt_credentials|agt_logs|agt_counter|CREATE TABLE/,
          `${sql}: the refusal shows nothing of the schema`,
        );
      }
    }
    // The two that got through before, by their own reason.
    t.match(
      await b.refused('execute', 'CREATE TABLE local_m AS SELECT type, name, tbl_name, sql FROM sqlite_master', {
        hints: false,
      }),
      { code: 'forbidden', message: /sqlite_master \(sqlite_schema\) is not reachable/ },
    );
    t.match(await b.refused('execute', "UPDATE sqlite_sequence SET seq = 0 WHERE name = 'local_a'", { hints: false }), {
      code: 'forbidden',
      message: /sqlite_sequence is not reachable/,
    });
    t.match(
      await b.refused('execute', 'INSERT INTO local_a (body, n) SELECT name, seq FROM sqlite_sequence', {
        hints: false,
      }),
      { code: 'forbidden', message: /sqlite_sequence is not reachable/ },
    );
    t.equal(fingerprint(b.path), before, 'the agent file is unchanged (no local_m, no view, no trigger)');
    t.equal(sequence(), sequenceBefore, 'sqlite_sequence is unchanged');
  },
);
