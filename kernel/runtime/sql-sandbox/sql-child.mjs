// The child process that runs one agent's SQL (see sql-runner.ts for the daemon side and the design,
// sql-policy.mjs for what is allowed). Plain JavaScript that imports only libsql and the policy: it
// starts without the TypeScript loader and without anything of the daemon.
//
// It opens its own connection to the agent file (argv[2]) and runs one call at a time:
//   {id, sql, params, mode: 'query'|'execute', maxRows, maxBytes, timeoutMs, hints, maxPageCount}
//     -> {id, started: true}   right before the statement's transaction begins (the time limit starts)
//     -> {id, ok: true, columns, rows, truncated, truncatedBy} | {id, ok: true, changes, lastInsertRowid}
//      | {id, ok: false, code, message}
// The daemon SIGKILLs this process when a call overruns its limit (SQLite's WAL keeps the file whole).
// A watchdog thread kills it too, at the limit plus a grace, and as soon as the daemon is gone (a
// runaway statement must not outlive the daemon holding the file's write lock).
import { Worker } from 'node:worker_threads';
import Database from 'libsql';
import { checkProgram, checkSchemaEffect, DDL_KINDS, SqlRefusal, statementKind } from './sql-policy.mjs';

const filePath = process.argv[2];
const BUSY_TIMEOUT_MS = 5_000;
/** SQLite's own allocations in this process (the hard heap limit is process-wide). */
const HEAP_LIMIT_BYTES = 128 * 1024 * 1024;
/** How long after a call's own limit the watchdog kills this process if the daemon did not. */
const WATCHDOG_GRACE_MS = 1_000;
/** SQLite's own largest max_page_count: no quota. */
const NO_PAGE_LIMIT = 4294967294;

// --- watchdog -------------------------------------------------------------------------------------
// shared[0]: generation (bumped on every arm/disarm), shared[1]: armed; deadline[0]: epoch ms.
const sharedBuffer = new SharedArrayBuffer(16);
const shared = new Int32Array(sharedBuffer, 0, 2);
const deadline = new Float64Array(sharedBuffer, 8, 1);
const WATCHDOG = `
const { workerData } = require('node:worker_threads');
const shared = new Int32Array(workerData.buffer, 0, 2);
const deadline = new Float64Array(workerData.buffer, 8, 1);
for (;;) {
  const generation = Atomics.load(shared, 0);
  let wait = 500;
  if (process.ppid !== workerData.ppid) process.kill(process.pid, 'SIGKILL');
  if (Atomics.load(shared, 1) === 1) {
    const left = deadline[0] - Date.now();
    if (left <= 0) process.kill(process.pid, 'SIGKILL');
    wait = Math.min(wait, left);
  }
  Atomics.wait(shared, 0, generation, wait);
}`;
const watchdog = new Worker(WATCHDOG, { eval: true, workerData: { buffer: sharedBuffer, ppid: process.ppid } });
watchdog.unref();

function arm(ms) {
  deadline[0] = Date.now() + ms + WATCHDOG_GRACE_MS;
  Atomics.store(shared, 1, 1);
  Atomics.add(shared, 0, 1);
  Atomics.notify(shared, 0);
}

function disarm() {
  Atomics.store(shared, 1, 0);
  Atomics.add(shared, 0, 1);
  Atomics.notify(shared, 0);
}

// --- connection -----------------------------------------------------------------------------------
let db;
/** The quota in bytes of the call running now (for its error message), null when none. */
let quotaBytes = null;
function connection() {
  if (db) return db;
  db = new Database(filePath, { timeout: BUSY_TIMEOUT_MS });
  // SQLite's hardening guidance: functions not marked innocuous never run from the schema (defaults,
  // CHECK, generated columns, index expressions), and this connection's memory is bounded.
  db.exec(`PRAGMA trusted_schema = OFF; PRAGMA hard_heap_limit = ${HEAP_LIMIT_BYTES}; PRAGMA temp_store = MEMORY`);
  return db;
}

/**
 * libsql never resets a statement it has stepped through EXPLAIN (nor a query stopped at a cap) until
 * the statement object is collected, and SQLite counts such a statement as still running: it refuses
 * DROP TABLE/INDEX meanwhile ("database table is locked": why DROP always failed when the check ran on
 * the daemon's connection) and, when the EXPLAIN was of a write, COMMIT ("SQL statements in
 * progress"). libsql finalizes a statement when its object is collected: collect, then let the
 * finalizers run.
 */
async function releaseStatements() {
  if (typeof globalThis.gc !== 'function') return;
  globalThis.gc();
  await new Promise((resolve) => setImmediate(resolve));
}

const stillRunning = (error) => /statements in progress|database table is locked/.test(String(error?.message ?? ''));

/** Runs `fn`; when a statement not yet finalized is in the way, releases statements and tries again. */
async function retryReleased(fn) {
  for (let attempt = 0; ; attempt++) {
    try {
      return fn();
    } catch (error) {
      if (attempt >= 3 || !stillRunning(error)) throw error;
      await releaseStatements();
    }
  }
}

const schemaRows = (conn) =>
  conn
    .prepare('SELECT type, name, tbl_name, sql FROM main.sqlite_master')
    .all()
    .map(({ type, name, tbl_name, sql }) => ({ type, name, tbl_name, sql }));
const schemaVersion = (conn) => Number(conn.prepare('PRAGMA schema_version').all()[0].schema_version);

/** root page → object, for the program check. */
function objectsByRoot(conn) {
  const map = new Map();
  for (const row of conn
    .prepare('SELECT type, name, tbl_name, rootpage FROM main.sqlite_master WHERE rootpage > 0')
    .all()) {
    map.set(Number(row.rootpage), { type: row.type, name: row.name, tbl_name: row.tbl_name });
  }
  return map;
}

function explain(conn, sql) {
  try {
    return conn
      .prepare(`EXPLAIN ${sql}`)
      .all()
      .map(({ opcode, p1, p2, p3, p4, p5 }) => ({ opcode, p1, p2, p3, p4, p5 }));
  } catch (error) {
    throw sqlError(error);
  }
}

function sqlError(error) {
  if (error instanceof SqlRefusal) return error;
  const message = String(error?.message ?? error);
  const code = String(error?.code ?? '');
  if (/^SQLITE_(BUSY|LOCKED)/.test(code) && !/table is locked/.test(message))
    return new SqlRefusal('conflict', `the agent file is busy (${message}); try again`);
  // The owner's storage quota (max_page_count on this connection, set before every call): SQLite refused to grow the
  // file.
  if (/^SQLITE_FULL/.test(code))
    return new SqlRefusal(
      'storage_quota_exceeded',
      `the statement would pass this agent's storage quota (${quotaBytes} bytes, the owner's settings storage.quotaBytes); nothing it did was kept: delete data first`,
    );
  if (/^SQLITE_NOMEM/.test(code) || /out of memory/i.test(message))
    return new SqlRefusal(
      'bad_request',
      `SQL error: out of memory (agent SQL may use ${HEAP_LIMIT_BYTES / 1024 / 1024} MB)`,
    );
  return new SqlRefusal('bad_request', `SQL error: ${message}`);
}

/** A row as JSON-safe values: BLOBs become base64 text, libsql's `_metadata` goes. */
function cleanRow(raw) {
  const out = {};
  for (const [key, value] of Object.entries(raw)) {
    if (key === '_metadata') continue;
    if (value instanceof ArrayBuffer) out[key] = Buffer.from(value).toString('base64');
    else if (Buffer.isBuffer(value)) out[key] = value.toString('base64');
    else out[key] = value;
  }
  return out;
}

/** Reads rows until the row cap or the byte cap (JSON size) is reached; stops the statement there. */
function collect(statement, params, maxRows, maxBytes) {
  const columns = statement.columns().map((column) => column.name);
  const rows = [];
  let bytes = 2;
  let truncatedBy = null;
  for (const raw of statement.iterate(...params)) {
    if (rows.length >= maxRows) {
      truncatedBy = 'rows';
      break;
    }
    // Cheap pre-check so that a single huge value is never stringified.
    let rough = 0;
    for (const value of Object.values(raw)) {
      if (typeof value === 'string') rough += value.length;
      else if (value instanceof ArrayBuffer || Buffer.isBuffer(value)) rough += value.byteLength;
    }
    if (bytes + rough > maxBytes) {
      truncatedBy = 'bytes';
      break;
    }
    const row = cleanRow(raw);
    const size = Buffer.byteLength(JSON.stringify(row)) + 1;
    if (bytes + size > maxBytes) {
      truncatedBy = 'bytes';
      break;
    }
    bytes += size;
    rows.push(row);
  }
  return { columns, rows, truncated: truncatedBy !== null, truncatedBy };
}

/**
 * Opens the call's transaction; a connection left holding an old snapshot gets its statements released, then is
 * replaced.
 */
async function begin(mode) {
  for (let attempt = 0; ; attempt++) {
    const conn = connection();
    try {
      conn.exec(mode === 'query' ? 'BEGIN' : 'BEGIN IMMEDIATE');
      return conn;
    } catch (error) {
      if (!/^SQLITE_BUSY_SNAPSHOT/.test(String(error?.code ?? '')) || attempt >= 2) throw error;
      if (attempt === 0) await releaseStatements();
      else db = undefined; // a fresh connection (the old one closes once its statements are collected)
    }
  }
}

/** Runs the statement's program; the statement object is not kept (see releaseStatements). */
async function execute(conn, sql, params, mode, maxRows, maxBytes) {
  let statement;
  try {
    statement = conn.prepare(sql);
  } catch (error) {
    throw sqlError(error);
  }
  if (mode === 'query' && !statement.reader)
    throw new SqlRefusal('bad_request', 'db_query only reads; use db_execute to change data');
  if (mode === 'execute' && statement.reader)
    throw new SqlRefusal(
      'bad_request',
      'db_execute changes data and returns no rows (no RETURNING); use db_query to read',
    );
  try {
    if (mode === 'query') return collect(statement, params, maxRows, maxBytes);
    const outcome = await retryReleased(() => statement.run(...params));
    return { changes: Number(outcome.changes), lastInsertRowid: Number(outcome.lastInsertRowid) };
  } catch (error) {
    throw sqlError(error);
  }
}

/**
 * One call, in one transaction: kind, compiled program, run, schema effect; then every statement of the
 * call is released before the transaction ends (a statement still counted as running would keep the
 * connection's read snapshot open past COMMIT/ROLLBACK, and the next write would fail with BUSY_SNAPSHOT).
 */
async function run({ sql, params, mode, maxRows, maxBytes, hints, maxPageCount }) {
  const kind = statementKind(sql, mode, hints !== false);
  const ddl = DDL_KINDS.has(kind);
  // The quota holds on this connection only (the daemon's own writes go on): SQLite never grows the file
  // past max_page_count pages through it, and agent SQL cannot run a PRAGMA to lift it (sql-policy.mjs).
  const pages = Number.isInteger(maxPageCount) && maxPageCount > 0 ? maxPageCount : NO_PAGE_LIMIT;
  connection().exec(`PRAGMA max_page_count = ${pages}`);
  // .all(): a statement stepped to its end is reset (see releaseStatements on libsql's unreset statements).
  quotaBytes =
    pages === NO_PAGE_LIMIT ? null : pages * Number(connection().prepare('PRAGMA page_size').all()[0].page_size);
  const conn = await begin(mode);
  let failure;
  let result;
  try {
    if (mode === 'query') conn.exec('PRAGMA query_only = 1');
    const before = ddl ? schemaRows(conn) : undefined;
    const version = schemaVersion(conn);
    checkProgram(explain(conn, sql), { kind, objects: objectsByRoot(conn) });
    // The EXPLAIN statement must be gone before a write runs (DROP refuses to run beside it).
    if (mode === 'execute') await releaseStatements();
    result = await execute(conn, sql, params, mode, maxRows, maxBytes);
    if (ddl)
      checkSchemaEffect(
        before,
        schemaRows(conn),
        Number(conn.prepare('SELECT count(*) AS n FROM temp.sqlite_master').all()[0].n),
      );
    else if (schemaVersion(conn) !== version) throw new SqlRefusal('forbidden', 'the statement changed the schema');
  } catch (error) {
    failure = error;
  }
  await releaseStatements();
  try {
    if (failure !== undefined || mode === 'query') {
      if (conn.inTransaction) conn.exec('ROLLBACK');
    } else await retryReleased(() => conn.exec('COMMIT'));
  } catch (error) {
    failure ??= error;
    if (conn.inTransaction) conn.exec('ROLLBACK');
  } finally {
    if (mode === 'query') conn.exec('PRAGMA query_only = 0');
  }
  if (failure !== undefined) throw failure;
  return result;
}

const queue = [];
let busy = false;

async function pump() {
  if (busy) return;
  busy = true;
  while (queue.length > 0) {
    const message = queue.shift();
    // Opening the file is the child's setup, not the call's time (a fresh child after a kill opens it here);
    // a failure to open is the call's own, reported by its begin().
    try {
      connection();
    } catch {}
    process.send({ id: message.id, started: true });
    arm(message.timeoutMs);
    let reply;
    try {
      reply = { id: message.id, ok: true, ...(await run(message)) };
    } catch (error) {
      const refusal = sqlError(error);
      reply = { id: message.id, ok: false, code: refusal.code, message: refusal.message };
    } finally {
      disarm();
    }
    process.send(reply);
  }
  busy = false;
}

process.on('message', (message) => {
  if (message?.op !== 'run') return;
  queue.push(message);
  void pump();
});
// The daemon went away or closed the channel (idle, unload): nothing is running, leave.
process.on('disconnect', () => process.exit(0));
