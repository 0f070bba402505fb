/**
 * Backups' in-process parts (docs/backups.md): retention deletes old rows and the file shrinks after the
 * checkpoint, the WAL truncated when idle, the umbilical window trimmed. In process because the rows are
 * made ten days old by writing them into the open file and the maintenance pass is run by the test
 * instead of its timer; and the SQLite worker a shutdown ends, a kernel unit. The rest of backups is
 * tested on the built daemon in backups.test.ts.
 */
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import t from 'tap';
import { endSqliteJobs, runSqliteJob, sqliteJobsRunning } from '../kernel/storage/sqlite-job.js';
import { runtimeHarness, type RuntimeHarness } from './fixtures/runtime/harness.js';
import { createAgentFile } from './helpers/agent-file.js';
import { libsql } from '../kernel/agents/libsql.js';

let h: RuntimeHarness;
let dir: string;

t.before(async () => {
  h = await runtimeHarness(t);
  dir = h.dir;
});

t.test(
  'retention deletes old rows; the file shrinks after the checkpoint; the WAL is truncated when idle',
  async (t) => {
    const old = Date.now() - 10 * 86_400_000;
    const id = await h.agent({}, {});
    const agent = h.d.daemon.kernel.registry.resolve(id);
    agent.file.transaction(() => {
      for (let i = 0; i < 3000; i++)
        agent.file.raw.run(
          'INSERT INTO agt_logs (level, origin, message, created_at) VALUES (?, ?, ?, ?)',
          'info',
          'test',
          'x'.repeat(400),
          old,
        );
    });
    for (let i = 0; i < 5; i++) agent.file.logs.write({ level: 'info', origin: 'test', message: `recent ${i}` });
    const maintenance = h.d.daemon.kernel.storage.maintenance;
    maintenance.runPass();
    const before = (await h.d.request('GET', `/agents/${id}/status`)).body.storage;
    t.ok(before.tables.agt_logs >= 3005);
    t.equal(
      (await h.d.request('PATCH', '/settings', { storage: { retention: { logs: { maxAgeDays: 1 } } } })).status,
      200,
    );
    const report = maintenance.runPass().find((r) => r.agentId === id)!;
    t.ok(report.deleted >= 3000, `${report.deleted} rows deleted`);
    t.equal(report.checkpoint, 'truncate', 'idle: a truncating checkpoint');
    const after = (await h.d.request('GET', `/agents/${id}/status`)).body.storage;
    t.ok(
      after.tables.agt_logs < 50 && after.tables.agt_logs >= 5,
      `old rows gone, recent ones kept (${after.tables.agt_logs})`,
    );
    t.ok(after.fileBytes < before.fileBytes / 2, `the file shrank: ${before.fileBytes} -> ${after.fileBytes} bytes`);
    t.equal(after.walBytes, 0, 'the WAL was truncated');
    t.equal(
      (await h.d.request('PATCH', '/settings', { storage: { retention: { logs: { maxRows: 2 } } } })).status,
      200,
    );
    maintenance.runPass();
    t.equal(agent.file.logs.count(), 2, 'maxRows keeps the newest rows');

    // The in-memory replay window of an agent that records one.
    const recorded = await h.agent({ umbilical: { log: { enabled: true } } } as never);
    for (let i = 0; i < 3; i++)
      await h.ended((await h.d.request('POST', `/agents/${recorded}/chat`, { text: `hi ${i}` })).body.turnId);
    const window = async () =>
      (await h.d.request('GET', `/agents/${recorded}/umbilical/events`)).body.events.length as number;
    t.ok((await window()) > 3);
    t.equal(
      (await h.d.request('PATCH', '/settings', { storage: { retention: { umbilical: { maxRows: 3 } } } })).status,
      200,
    );
    maintenance.runPass();
    t.equal(await window(), 3, 'retention.umbilical keeps the newest events of the window');
    await h.d.request('PATCH', '/settings', { storage: null });
  },
);

t.test('a WAL holding only lease heartbeats is not checkpointed until it grows; any other write is', async (t) => {
  const id = await h.agent({}, {});
  const agent = h.d.daemon.kernel.registry.resolve(id);
  const maintenance = h.d.daemon.kernel.storage.maintenance;
  const leases = h.d.daemon.kernel.registry.leases;
  const wal = async () => (await h.d.request('GET', `/agents/${id}/status`)).body.storage.walBytes as number;
  const pass = () => maintenance.runPass().find((r) => r.agentId === id)!.checkpoint;
  agent.file.logs.write({ level: 'info', origin: 'test', message: 'a row' });
  t.equal(pass(), 'truncate', 'a written row: checkpointed');
  leases.beat();
  t.equal(pass(), 'heartbeats', 'a heartbeat since: left in the WAL');
  t.ok((await wal()) > 0, 'the WAL holds the heartbeat');
  agent.file.logs.write({ level: 'info', origin: 'test', message: 'another row' });
  t.equal(pass(), 'truncate', 'a row written after the heartbeat: checkpointed');
  t.equal(await wal(), 0);
  // Another connection's commit (as the agent's SQL child writes) counts as well.
  leases.beat();
  const other = new (libsql())(agent.file.path);
  other.exec("INSERT INTO agt_meta (key, value, updated_at) VALUES ('other-connection', '1', 0)");
  other.close();
  t.equal(pass(), 'truncate', "another connection's commit: checkpointed");
  // Heartbeats alone past a sixteenth of the bound (the smallest bound, 256 KiB: 16 KiB, four beats).
  t.equal((await h.d.request('PATCH', '/settings', { storage: { walMaxBytes: 262_144 } })).status, 200);
  leases.beat();
  t.equal(pass(), 'heartbeats');
  // Each beat a new time (a beat in the same millisecond leaves the row, and so the page, as it was).
  for (let i = 1; i <= 5; i++) t.ok(agent.file.lease.heartbeat(leases.me.owner, Date.now() + i * 1000));
  t.equal(pass(), 'truncate', 'heartbeats alone, once the WAL grew: checkpointed');
  await h.d.request('PATCH', '/settings', { storage: null });
});

t.test('a backup worker still running at shutdown is ended (the final shutdown step)', async (t) => {
  const path = await createAgentFile(dir, {});
  const job = runSqliteJob({ op: 'copy', src: path, dst: join(dir, 'ended-copy.agt') });
  await endSqliteJobs();
  // Ended at once, before its thread could copy anything (without the step the copy would finish).
  const outcome = await job.then(
    () => 'finished',
    (error: { sqliteCode?: string }) => error.sqliteCode,
  );
  t.equal(outcome, 'WORKER_EXIT', 'the job was ended');
  t.equal(sqliteJobsRunning(), 0, 'no SQLite worker left');
  t.notOk(existsSync(join(dir, 'ended-copy.agt')), 'nothing copied');
});
