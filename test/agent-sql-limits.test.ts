/**
 * Agent SQL never blocks the daemon: a runaway statement runs in the agent's SQL child
 * process, is killed at `limits.sql_timeout_ms` (default 2 s) while `/health` keeps answering, leaves the
 * file whole and the daemon's own writes working; the row and size caps hold; the child goes away on
 * interrupt, unload, idle, and by itself when the daemon is gone.
 */
import { fork, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'libsql';
import t from 'tap';
import { SqlSandbox, SQL_DEFAULT_TIMEOUT_MS } from '../kernel/runtime/sql-sandbox/sql-runner.js';
import { createAgentFile } from './helpers/agent-file.js';
import { tempDir } from './helpers/daemon.js';
import { toolResults } from './helpers/sql-boundary.js';
import { wireDaemon } from './helpers/wire-daemon.js';

/**
 * Generous on purpose: beside the rest of the suite on a loaded 2-core machine /health took up to 2.5 s; a
 * runaway query on the event loop would hold it for the query's whole run (tens of seconds).
 */
const HEALTH_BOUND_MS = 5_000;
const RUNAWAY_QUERY =
  'WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 30000000) SELECT count(*) AS n FROM r';
const RUNAWAY_INSERT =
  'WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 50000000) INSERT INTO local_big (x) SELECT x FROM r';
const CHILD = fileURLToPath(new URL('../kernel/runtime/sql-sandbox/sql-child.mjs', import.meta.url));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until(what: string, check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`failsafe: ${what}`);
    await sleep(20);
  }
}

/** Polls GET /health until stopped; resolves to every answer's latency. */
function pollHealth(url: string): { stop(): Promise<number[]> } {
  const latencies: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      const response = await fetch(`${url}/health`);
      await response.text();
      latencies.push(performance.now() - started);
      await sleep(25);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return latencies;
    },
  };
}

/** The daemon (one per file); each test runs its own agent. */
const h = await wireDaemon(t);

/** The pid of the daemon's SQL child on `path` (its command line names the agent file), if one runs. */
function sqlChildOf(path: string): number | undefined {
  const parent = h.d.child.pid!;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== parent) continue;
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (args.some((arg) => arg.includes('sql-child')) && args.includes(path)) return Number(entry);
    } catch {
      // Gone meanwhile.
    }
  }
  return undefined;
}

function integrity(path: string): string {
  const db = new Database(path, { readonly: true });
  try {
    return String((db.prepare('PRAGMA integrity_check').get() as { integrity_check: string }).integrity_check);
  } finally {
    db.close();
  }
}

t.test(
  'a runaway query: /health keeps answering, the tool fails with the time limit, the next call works',
  async (t) => {
    const id = await h.agent();
    h.model.push(
      {
        toolCalls: [
          { name: 'db_query', args: { sql: RUNAWAY_QUERY } },
          { name: 'db_query', args: { sql: 'SELECT 41 + 1 AS answer' } },
        ],
      },
      { text: 'done' },
    );
    const health = pollHealth(h.d.url);
    await sleep(100);
    const started = performance.now();
    const turn = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'count' })).body.turnId;
    await h.ended(turn);
    const elapsed = performance.now() - started;
    const latencies = await health.stop();
    const [runaway, next] = toolResults(h);
    t.equal(runaway!.isError, true);
    t.match(runaway!.content, new RegExp(`time limit of ${SQL_DEFAULT_TIMEOUT_MS} ms \\(limits.sql_timeout_ms\\)`));
    t.same(JSON.parse(next!.content), { rows: [{ answer: 42 }], truncated: false }, 'the next call gets a fresh child');
    t.ok(
      elapsed >= SQL_DEFAULT_TIMEOUT_MS && elapsed < SQL_DEFAULT_TIMEOUT_MS + 8_000,
      `the statement was stopped at its limit (${Math.round(elapsed)} ms)`,
    );
    t.ok(latencies.length >= 10, `health was polled throughout (${latencies.length} answers)`);
    t.ok(
      Math.max(...latencies) < HEALTH_BOUND_MS,
      `every /health answer within ${HEALTH_BOUND_MS} ms (max ${Math.round(Math.max(...latencies))} ms)`,
    );
  },
);

t.test(
  'a runaway INSERT ... SELECT under a configured limit: killed, nothing kept, the daemon writes on, the file is whole',
  async (t) => {
    const id = await h.agent({ name: 'filler', limits: { sql_timeout_ms: 1_500 } });
    const file = { path: join(h.dir, 'filler.agt') };
    h.model.push(
      {
        toolCalls: [
          { name: 'db_execute', args: { sql: 'CREATE TABLE local_big (x INTEGER)' } },
          { name: 'db_execute', args: { sql: RUNAWAY_INSERT } },
          { name: 'db_query', args: { sql: 'SELECT count(*) AS n FROM local_big' } },
          { name: 'db_execute', args: { sql: 'INSERT INTO local_big (x) VALUES (1)' } },
        ],
      },
      { text: 'done' },
    );
    const health = pollHealth(h.d.url);
    await sleep(100);
    const turn = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'fill' })).body.turnId;
    t.equal((await h.ended(turn)).event_type, 'turn.completed');
    const latencies = await health.stop();
    const results = toolResults(h);
    t.match(results[1]!.content, /time limit of 1500 ms \(limits.sql_timeout_ms\) and was stopped/);
    t.same(
      JSON.parse(results[2]!.content),
      { rows: [{ n: 0 }], truncated: false },
      'nothing of the killed statement was kept',
    );
    t.match(results[3]!.content, /"changes": 1/, 'writes work again');
    t.ok(
      Math.max(...latencies) < HEALTH_BOUND_MS,
      `every /health answer within ${HEALTH_BOUND_MS} ms (max ${Math.round(Math.max(...latencies))} ms)`,
    );
    // The daemon's own writes to this agent.
    t.equal((await h.d.request('PUT', `/agents/${id}/meta/after`, { value: 'written' })).status, 200);
    t.match((await h.d.request('GET', `/agents/${id}/meta`)).body.entries, [{ key: 'after', value: 'written' }]);
    t.match(
      (await h.d.request('GET', `/agents/${id}/logs`)).body.logs.map((l: { message: string }) => l.message).join('\n'),
      /tool db_execute failed \(tool_error\)|tool db_execute failed/,
    );
    t.equal(integrity(file.path), 'ok');
  },
);

t.test('the row cap and the result-size cap are applied in the child', async (t) => {
  const dir = tempDir(t);
  const path = await createAgentFile(dir);
  const sandbox = new SqlSandbox(path);
  t.teardown(() => sandbox.close());
  const many = await sandbox.query({
    sql: 'WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 100000) SELECT x FROM r',
  });
  t.equal(many.rows.length, 500);
  t.match(many, { truncated: true, truncatedBy: 'rows' });
  t.same(many.rows.slice(0, 2), [{ x: 1 }, { x: 2 }]);
  const wide = await sandbox.query({
    sql: "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 400) SELECT x, printf('%.10000c', 'a') AS pad FROM r",
  });
  t.match(wide, { truncated: true, truncatedBy: 'bytes' });
  t.ok(wide.rows.length > 10 && wide.rows.length < 30, `about 256 KB of rows (${wide.rows.length})`);
  t.ok(Buffer.byteLength(JSON.stringify(wide.rows)) <= 256 * 1024);
  const huge = await sandbox.query({ sql: 'SELECT zeroblob(50000000) AS b' });
  t.match(
    huge,
    { rows: [], truncated: true, truncatedBy: 'bytes' },
    'a single value over the cap never crosses the pipe',
  );
  const exact = await sandbox.query({
    sql: 'WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 500) SELECT x FROM r',
  });
  t.match(exact, { truncated: false, truncatedBy: null });
  t.equal(exact.rows.length, 500);
  const memory = await sandbox
    .query({ sql: 'SELECT length(zeroblob(1000000000)) AS n, length(randomblob(400000000)) AS m' })
    .catch((error: Error) => error);
  t.match(memory, { code: 'bad_request', message: /out of memory|too big/ }, 'SQLite memory in the child is bounded');
  t.same((await sandbox.query({ sql: 'SELECT 1 AS ok' })).rows, [{ ok: 1 }], 'the child goes on');
});

t.test(
  'the time limit: a fresh child after a kill, calls queue in order, and the limit starts when the call starts',
  async (t) => {
    const dir = tempDir(t);
    const path = await createAgentFile(dir);
    const sandbox = new SqlSandbox(path);
    t.teardown(() => sandbox.close());
    await sandbox.execute({ sql: 'CREATE TABLE local_t (x)' });
    const first = sandbox.pid!;
    t.ok(first && alive(first));
    const runaway = sandbox.query({ sql: RUNAWAY_QUERY, timeoutMs: 300 }).catch((error: Error) => error);
    // Queued behind the runaway: its own 300 ms limit does not run while it waits.
    const queued = sandbox.execute({ sql: 'INSERT INTO local_t VALUES (1)', timeoutMs: 300 });
    const after = sandbox.query({ sql: 'SELECT count(*) AS n FROM local_t' });
    t.match(await runaway, { code: 'timeout', message: /time limit of 300 ms/ });
    t.same(await queued, { changes: 1, lastInsertRowid: 1 });
    t.same((await after).rows, [{ n: 1 }]);
    t.notOk(alive(first), 'the killed child is gone');
    t.not(sandbox.pid, first, 'a fresh child runs the next calls');
  },
);

t.test(
  "a call killed by its child's own watchdog, the daemon held up past the grace, still fails with the time limit",
  async (t) => {
    const dir = tempDir(t);
    const sandbox = new SqlSandbox(await createAgentFile(dir));
    t.teardown(() => sandbox.close());
    await sandbox.execute({ sql: 'CREATE TABLE local_t (x)' });
    const child = sandbox.pid!;
    const runaway = sandbox.query({ sql: RUNAWAY_QUERY, timeoutMs: 300 }).catch((error: Error) => error);
    await new Promise((resolve) => setImmediate(resolve));
    // A daemon too busy to run its timer: past the limit and the watchdog's 1 s grace, the child kills itself.
    const until = performance.now() + 2_500;
    while (performance.now() < until) {
      // Holding the event loop, as a loaded machine can.
    }
    t.match(await runaway, { code: 'timeout', message: /time limit of 300 ms/ });
    t.notOk(alive(child), 'the child is gone');
    t.same(
      (await sandbox.query({ sql: 'SELECT count(*) AS n FROM local_t' })).rows,
      [{ n: 0 }],
      'a fresh child goes on',
    );
  },
);

t.test('interrupting the turn kills the running statement at once', async (t) => {
  const id = await h.agent({ name: 'interrupted', limits: { sql_timeout_ms: 60_000 } });
  h.model.push({ toolCalls: [{ name: 'db_query', args: { sql: RUNAWAY_QUERY.replace('30000000', '3000000000') } }] });
  const turn = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'count' })).body.turnId;
  await h.waitFor((e) => e.event_type === 'tool.started' && e.agent_id === id);
  await until('the SQL child started', () => sqlChildOf(join(h.dir, 'interrupted.agt')) !== undefined);
  await sleep(300);
  const pid = sqlChildOf(join(h.dir, 'interrupted.agt'))!;
  t.ok(pid && alive(pid), 'the statement runs in the child');
  const stopped = performance.now();
  await h.d.request('POST', `/agents/${id}/interrupt`);
  const end = await h.ended(turn);
  t.ok(performance.now() - stopped < 5_000, 'the turn ended without waiting for the statement');
  await until('the child is killed', () => !alive(pid));
  t.match(end.payload, { stop_reason: 'interrupted' });
  // A new statement runs at once (the killed one held nothing).
  h.model.push({ toolCalls: [{ name: 'db_query', args: { sql: 'SELECT 7 AS seven' } }] }, { text: 'ok' });
  await h.ended((await h.d.request('POST', `/agents/${id}/chat`, { text: 'again' })).body.turnId);
  const results = toolResults(h);
  t.match(results[0]!.content, /stopped/, 'the interrupted call was answered as stopped');
  t.equal(
    results.at(-1)!.content,
    JSON.stringify({ rows: [{ seven: 7 }], truncated: false }, null, 1),
    results.at(-1)!.content,
  );
});

t.test('the child ends with the agent: unload, idle, close', async (t) => {
  const id = await h.agent({ name: 'unloaded' });
  h.model.push({ toolCalls: [{ name: 'db_query', args: { sql: 'SELECT 1 AS one' } }] }, { text: 'ok' });
  await h.ended((await h.d.request('POST', `/agents/${id}/chat`, { text: 'q' })).body.turnId);
  const pid = sqlChildOf(join(h.dir, 'unloaded.agt'));
  t.ok(pid !== undefined && alive(pid), 'the agent has a SQL child');
  t.equal((await h.d.request('POST', `/agents/${id}/unload`)).status, 200);
  await until('child gone after unload', () => !alive(pid!));
  t.pass('unload ended the child');

  const dir = tempDir(t);
  const path = await createAgentFile(dir);
  const idle = new SqlSandbox(path, { idleMs: 200 });
  t.teardown(() => idle.close());
  await idle.query({ sql: 'SELECT 1' });
  const idlePid = idle.pid!;
  await until('idle child exits', () => !alive(idlePid));
  t.equal(idle.pid, undefined, 'an idle child exits');
  t.same((await idle.query({ sql: 'SELECT 2 AS two' })).rows, [{ two: 2 }], 'and a new one starts on the next call');

  const closing = new SqlSandbox(path);
  const running = closing.query({ sql: RUNAWAY_QUERY, timeoutMs: 30_000 }).catch((error: Error) => error);
  const waiting = closing.query({ sql: 'SELECT 1' }).catch((error: Error) => error);
  await until('child started', () => closing.pid !== undefined);
  const closingPid = closing.pid!;
  await sleep(200);
  await closing.close();
  t.match(await running, { code: 'unavailable' });
  t.match(await waiting, { code: 'unavailable' });
  t.notOk(alive(closingPid), 'close killed the running statement');
  t.match(await closing.query({ sql: 'SELECT 1' }).catch((error: Error) => error), { code: 'unavailable' });
});

t.test('the child kills itself at its limit, and when the daemon is gone', async (t) => {
  const dir = tempDir(t);
  const path = await createAgentFile(dir);
  // Its parent never kills it: the watchdog thread does, at the limit plus 1 s.
  const child = fork(CHILD, [path], {
    execArgv: ['--expose-gc'],
    env: {},
    stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once('exit', (_code, signal) => resolve(signal)),
  );
  const started = performance.now();
  child.send({
    op: 'run',
    id: 1,
    sql: RUNAWAY_QUERY.replace('30000000', '3000000000'),
    params: [],
    mode: 'query',
    maxRows: 500,
    maxBytes: 1024,
    timeoutMs: 200,
    hints: true,
  });
  t.equal(await exited, 'SIGKILL');
  const took = performance.now() - started;
  t.ok(took >= 1_000 && took < 8_000, `killed itself after its limit plus the grace (${Math.round(took)} ms)`);

  // Orphaned mid-statement (the daemon died): gone within about a second, long before its own limit.
  const script = `
    const { fork } = require('node:child_process');
    const child = fork(${JSON.stringify(CHILD)}, [${JSON.stringify(path)}], { execArgv: ['--expose-gc'], env: {}, stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
    child.on('message', (m) => { if (m.started) { process.stdout.write(String(child.pid) + '\\n'); setTimeout(() => process.kill(process.pid, 'SIGKILL'), 100); } });
    child.send({ op: 'run', id: 1, sql: ${JSON.stringify(RUNAWAY_QUERY.replace('30000000', '3000000000'))}, params: [], mode: 'query', maxRows: 500, maxBytes: 1024, timeoutMs: 600000, hints: true });
  `;
  const parent = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  parent.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  await new Promise((resolve) => parent.once('exit', resolve));
  const orphan = Number(out.trim());
  t.ok(orphan > 0, 'the child started its statement');
  await until('orphan gone', () => !alive(orphan), 5_000);
  t.pass('the orphaned child killed itself');
  t.equal(integrity(path), 'ok');
});
