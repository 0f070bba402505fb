/**
 * The daemon-wide bound on agent SQL child processes: however many agents run SQL at
 * once, at most `sqlMaxProcesses` children exist (seen by the pool's own counters and in the process
 * table); calls beyond it wait in arrival order, and the wait counts in the call's own time limit.
 *
 * Most cases use SqlSandbox directly, one per agent file, sharing a pool of their own; the last one
 * starts the built daemon to show the owner's setting reaches the daemon's pool.
 */
import { readdirSync, readFileSync } from 'node:fs';
import t from 'tap';
import { SqlSandbox } from '../kernel/runtime/sql-sandbox/sql-runner.js';
import { SQL_DEFAULT_MAX_PROCESSES, SqlSlots } from '../kernel/runtime/sql-sandbox/sql-slots.js';
import { createAgentFile } from './helpers/agent-file.js';
import { tempDir } from './helpers/daemon.js';
import { wireDaemon } from './helpers/wire-daemon.js';

interface Tap {
  teardown(fn: () => unknown): void;
}

/** Runs until killed (its caller's limit or an abort). */
const RUNAWAY = 'WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT count(*) AS n FROM r';
/** Some real work (a few tens of ms), so that calls overlap. */
const WORK =
  'WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 200000) SELECT count(*) AS n FROM r';

/**
 * SQL children of `parent` (this process by default), from the process table (pid → command line has sql-child.mjs).
 */
function sqlChildren(parent = process.pid): number {
  let count = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== parent) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('sql-child.mjs')) count++;
    } catch {
      // Gone meanwhile.
    }
  }
  return count;
}

/** `count` agent files, each with a SqlSandbox on `slots`. */
async function agents(t: Tap, count: number, slots: SqlSlots): Promise<SqlSandbox[]> {
  const dir = tempDir(t, 'agt-sqlp-');
  const sandboxes: SqlSandbox[] = [];
  for (let i = 0; i < count; i++) {
    const path = await createAgentFile(dir, { name: `sql-agent-${i}` }, { sql: ['CREATE TABLE local_n (v INTEGER)'] });
    const sandbox = new SqlSandbox(path, { slots });
    t.teardown(() => sandbox.close());
    sandboxes.push(sandbox);
  }
  return sandboxes;
}

/** Resolves when `check` holds, tested at every change of the pool. */
function when(slots: SqlSlots, check: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    if (check()) return resolve();
    const listener = () => {
      if (!check()) return;
      slots.off('change', listener);
      resolve();
    };
    slots.on('change', listener);
  });
}

t.test('8 agents running SQL at once: at most N children exist, every call completes', async (t) => {
  const slots = new SqlSlots(() => 2);
  const sandboxes = await agents(t, 8, slots);
  let mostSeen = 0;
  let mostWaiting = 0;
  const look = () => {
    mostSeen = Math.max(mostSeen, sqlChildren());
    mostWaiting = Math.max(mostWaiting, slots.waiting);
    t.ok(slots.running <= 2, `running ${slots.running}`);
  };
  slots.on('change', look);
  const calls = sandboxes.flatMap((sandbox, i) => [
    sandbox.query({ sql: WORK, timeoutMs: 60_000 }).then((r) => (look(), r.rows[0]!.n)),
    sandbox
      .execute({ sql: 'INSERT INTO local_n (v) VALUES (?)', params: [i], timeoutMs: 60_000 })
      .then((r) => (look(), r.changes)),
  ]);
  const results = await Promise.all(calls);
  slots.off('change', look);
  t.same(
    results,
    sandboxes.flatMap(() => [200000, 1]),
    'every call ran',
  );
  t.equal(slots.peak, 2, 'the pool was full at some point, never more');
  t.ok(mostSeen <= 2, `at most 2 SQL children in the process table (saw ${mostSeen})`);
  t.ok(mostWaiting >= 1, `calls waited for a slot (up to ${mostWaiting})`);
  t.ok(sandboxes.filter((s) => s.pid !== undefined).length <= 2, 'at most 2 children are left');
});

t.test('a queued call waits inside its own time limit: past it, the usual timeout and no child', async (t) => {
  const slots = new SqlSlots(() => 1);
  const [busy, queued, unloaded, interrupted] = await agents(t, 4, slots);
  const stop = new AbortController();
  const runaway = busy!.query({ sql: RUNAWAY, timeoutMs: 60_000, signal: stop.signal }).then(
    () => 'finished',
    (error: { code: string }) => error.code,
  );
  t.equal(slots.running, 1, 'the runaway holds the only slot');
  const waited = queued!.query({ sql: 'SELECT 1 AS one', timeoutMs: 300 });
  t.equal(slots.waiting, 1, 'the second agent waits');
  await t.rejects(
    waited,
    { code: 'timeout', message: /ran past its time limit of 300 ms \(limits\.sql_timeout_ms\)/ },
    'the wait counted: the usual timeout',
  );
  t.equal(queued!.pid, undefined, 'no child was started for it');
  t.equal(slots.waiting, 0, 'it left the queue');
  t.equal(slots.peak, 1);
  // A waiting call leaves the queue when its agent unloads or its turn is interrupted.
  const interrupt = new AbortController();
  const closing = unloaded!.query({ sql: 'SELECT 1', timeoutMs: 60_000 });
  const stopping = interrupted!.query({ sql: 'SELECT 1', timeoutMs: 60_000, signal: interrupt.signal });
  t.equal(slots.waiting, 2);
  await unloaded!.close();
  interrupt.abort();
  await t.rejects(closing, { code: 'unavailable', message: /unloading/ });
  await t.rejects(stopping, { code: 'conflict', details: { aborted: true } });
  t.equal(slots.waiting, 0, 'both left the queue');
  stop.abort();
  t.equal(await runaway, 'conflict', 'the runaway was stopped by its abort');
  t.same(
    (await queued!.query({ sql: 'SELECT 1 AS one', timeoutMs: 10_000 })).rows,
    [{ one: 1 }],
    'with the slot free the call runs',
  );
  t.equal(slots.peak, 1, 'never two children');
});

t.test('an idle child leaves at once for a waiting agent; a busy agent goes to the back of the queue', async (t) => {
  const slots = new SqlSlots(() => 1);
  const [a, b] = await agents(t, 2, slots);
  await a!.query({ sql: 'SELECT 1 AS x' });
  t.ok(a!.pid, 'a keeps its idle child');
  t.same(
    (await b!.query({ sql: 'SELECT 2 AS x', timeoutMs: 10_000 })).rows,
    [{ x: 2 }],
    'b got the slot without waiting out the idle time',
  );
  t.equal(a!.pid, undefined, "a's idle child left");
  await when(slots, () => slots.running === 1);

  // b holds the slot (idle). a queues two calls, then b one: b's idle child leaves for a's first call;
  // when that call ends, a's child leaves too (b waits), so the order is a1, b1, a2.
  const order: string[] = [];
  const a1 = a!.query({ sql: WORK, timeoutMs: 60_000 }).then(() => order.push('a1'));
  const a2 = a!.query({ sql: 'SELECT 1', timeoutMs: 60_000 }).then(() => order.push('a2'));
  await when(slots, () => b!.pid === undefined && slots.running === 1);
  const b1 = b!.query({ sql: 'SELECT 1', timeoutMs: 60_000 }).then(() => order.push('b1'));
  await Promise.all([a1, a2, b1]);
  t.same(order, ['a1', 'b1', 'a2']);
  t.equal(slots.peak, 1);
});

t.test("the owner's sqlMaxProcesses bounds the daemon's pool", async (t) => {
  const h = await wireDaemon(t, { settings: { sqlMaxProcesses: 1 } });
  const first = await h.agent({ name: 'sql-one' });
  const second = await h.agent({ name: 'sql-two' });
  for (const id of [first, second]) {
    h.model.push({ toolCalls: [{ name: 'db_query', args: { sql: 'SELECT 6 * 7 AS answer' } }] }, { text: 'done' });
    await h.ended((await h.d.request('POST', `/agents/${id}/chat`, { text: 'go' })).body.turnId);
    t.match(
      h.model.calls
        .at(-1)!
        .messages.filter((m) => m.role === 'tool')
        .at(-1),
      { content: /"answer": 42/ },
    );
  }
  // Each agent ran a statement in its own SQL child; with a pool of one the first child left for the second.
  t.equal(sqlChildren(h.d.child.pid!), 1, "one SQL child runs: the setting reached the daemon's pool");
  t.ok(SQL_DEFAULT_MAX_PROCESSES >= 2, 'the default is at least 2');
});
