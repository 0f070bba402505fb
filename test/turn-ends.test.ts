/**
 * Every accepted turn ends on the stream exactly once, across SIGTERM and kill -9 at any moment:
 *
 * - the kill test: real `agtd` processes killed with SIGTERM or SIGKILL at random moments under a
 *   stream of chats and dispatches, restarted on the same files, one SSE client following every
 *   lifetime: each accepted turnId ends exactly once over all the streams, and at SIGTERM every
 *   running turn's end is on the stream before it closes (`AGT_TURN_ENDS_KILLS`, `AGT_TURN_ENDS_SEED`;
 *   bench/turn-ends-soak.ts runs it longer);
 * - an end committed but not yet written to the streams when the process dies is emitted again after the
 *   restart: test/turn-ends-internals.test.ts (it holds the kernel's delivery, which only works in process);
 * - SIGTERM during start-up (in an extension's register, before the listening line; in an extension's
 *   start, after it) shuts down cleanly: exit 0, pid file removed, one "agt daemon stopped" line;
 * - a pid file naming a dead process, a zombie, a live process that is not agtd, or another process
 *   with the same pid is stale; one naming a running daemon is not.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'libsql';
import t from 'tap';
import { claimPidFile, staleReason } from '../kernel/pidfile.js';
import { ROOT, tempDir } from './helpers/daemon.js';
import { killRun, startAgtd, until } from './helpers/turn-ends.js';

t.test('SIGTERM or SIGKILL at random moments: every accepted turnId ends exactly once on the streams', async (t) => {
  const seed = Number(process.env.AGT_TURN_ENDS_SEED ?? Date.now() % 100_000);
  const kills = Number(process.env.AGT_TURN_ENDS_KILLS ?? 3);
  t.comment(`seed ${seed} (AGT_TURN_ENDS_SEED repeats a run), ${kills} kills`);
  const run = await killRun(t, { kills, seed });
  const wrong: string[] = [];
  for (const [turnId, info] of run.accepted) {
    const seen = run.ends.get(turnId) ?? [];
    if (seen.length !== 1)
      wrong.push(
        `${turnId} (${info.agent}, accepted in lifetime ${info.lifetime}) ended ${seen.length} times: ${JSON.stringify(seen.map((end) => [end.lifetime, end.event.event_type, end.event.payload.code ?? end.event.payload.stop_reason]))}`,
      );
  }
  t.same(
    wrong,
    [],
    `${run.accepted.size} accepted turn ids, each ended exactly once over ${run.lifetimes} lifetimes (${run.signals.join(', ')})`,
  );
  const twice = [...run.ends].filter(([, list]) => list.length > 1).map(([turnId]) => turnId);
  t.same(twice, [], 'no turn id (accepted or internal) ended twice');
  t.same(run.unendedAtSigterm, [], 'at SIGTERM every running turn ended on the stream before it closed');
  t.ok(run.signals.includes('SIGTERM') && run.signals.includes('SIGKILL'), 'both signals were sent');
  t.ok(
    run.unloaded >= run.signals.filter((s) => s === 'SIGTERM').length,
    `a turn mid-call at each SIGTERM ended in agent.error unloaded (${run.unloaded})`,
  );
  t.ok(
    run.restarted >= run.signals.filter((s) => s === 'SIGKILL').length,
    `a turn mid-call at each SIGKILL ended in daemon_restart after it (${run.restarted})`,
  );
  t.notOk(existsSync(join(run.dataDir, 'agtd.pid')), 'the last shutdown removed the pid file');
  const stopped = run.lastStderr.split('\n').filter((line) => line.includes('"msg":"agt daemon stopped'));
  t.equal(stopped.length, 1, 'the last daemon logged one line when it stopped');
  t.match(stopped[0], /"msg":"agt daemon stopped \(SIGTERM\)"/);
  for (const path of run.files) {
    const db = new Database(path, { readonly: true });
    try {
      t.equal((db.prepare('PRAGMA integrity_check').get() as { integrity_check: string }).integrity_check, 'ok');
      t.equal(
        (db.prepare('SELECT count(*) AS n FROM agt_queue').get() as { n: number }).n,
        0,
        'nothing is left in agt_queue',
      );
    } finally {
      db.close();
    }
  }
});

const HELD = join(ROOT, 'test/fixtures/extensions/held-start/index.ts');
const stoppedLines = (stderr: string) =>
  stderr.split('\n').filter((line) => line.includes('"msg":"agt daemon stopped'));

/** The start time (field 22 of /proc/<pid>/stat) of a process. */
const startTimeOf = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
};

const stateOf = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return undefined;
  }
};

/** A process that stays a zombie (its parent never reaps it) and the parent to kill afterwards. */
async function zombie(t: { teardown(fn: () => unknown): void }): Promise<number> {
  const parent = spawn('sh', ['-c', 'sleep 0.05 & echo $!; exec sleep 60'], { stdio: ['ignore', 'pipe', 'ignore'] });
  t.teardown(() => parent.kill('SIGKILL'));
  let out = '';
  parent.stdout!.on('data', (chunk) => (out += chunk));
  const pid = await until(() => Number.parseInt(out, 10) || undefined, 'the zombie pid', 5_000);
  await until(() => stateOf(pid) === 'Z', 'the zombie', 5_000);
  return pid;
}

function liveSleep(t: { teardown(fn: () => unknown): void }): number {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  t.teardown(() => child.kill('SIGKILL'));
  return child.pid!;
}

t.test('SIGTERM during start-up shuts down cleanly, whatever the moment', async (t) => {
  const linux = existsSync('/proc/self/stat');
  for (const moment of ['registering', 'starting'] as const) {
    const dataDir = tempDir(t, `agt-ends-start-${moment}-`);
    const release = join(tempDir(t, 'agt-ends-release-'), 'go');
    // Start-up replaces a pid file that names a process which is not an agt daemon / a zombie.
    if (linux)
      writeFileSync(join(dataDir, 'agtd.pid'), `${moment === 'registering' ? liveSleep(t) : await zombie(t)}\n`);
    // To be signalled in start, the extension's register is let through at once (not after its 6 s cap).
    if (moment === 'starting') writeFileSync(`${release}.register`, '');
    let signalled = false;
    const started = startAgtd(
      t,
      dataDir,
      { extensions: [{ name: 'held-start', module: HELD, config: { release } }] },
      { AGT_LOG_LEVEL: 'info' },
      (line, child) => {
        if (line === `held-start: ${moment}` && !signalled) {
          signalled = true;
          child.kill('SIGTERM');
        }
        // A register is never cut short: once the daemon has the signal, it finishes and start-up stops at its next
        // step.
        if (line === 'held-start: got SIGTERM' && moment === 'registering') writeFileSync(`${release}.register`, '');
      },
    );
    const exited = new Promise<{ code: number | null }>((done) => started.child.once('exit', (code) => done({ code })));
    let err = '';
    started.child.stderr!.on('data', (chunk) => (err += chunk));
    let out = '';
    started.child.stdout!.on('data', (chunk) => (out += chunk));
    if (moment === 'starting') await started.ready;
    t.equal((await exited).code, 0, `${moment}: exit 0`);
    t.ok(signalled, `${moment}: the signal came at that moment`);
    t.equal(
      /agt daemon listening/.test(out),
      moment !== 'registering',
      `${moment}: ${moment === 'registering' ? 'before' : 'after'} the listening line`,
    );
    t.notOk(existsSync(join(dataDir, 'agtd.pid')), `${moment}: pid file removed`);
    t.notOk(existsSync(join(dataDir, 'daemon-url')), `${moment}: daemon-url removed`);
    t.equal(stoppedLines(err).length, 1, `${moment}: one "agt daemon stopped" line`);
    t.match(stoppedLines(err)[0], /"reason":"SIGTERM".*"msg":"agt daemon stopped \(SIGTERM during start-up\)"/);
  }
});

t.test(
  'a pid file is stale when its process is gone, a zombie, or not this agt daemon',
  { skip: existsSync('/proc/self/stat') ? false : 'needs /proc' },
  async (t) => {
    t.equal(staleReason('garbage\n'), 'garbled');
    t.equal(staleReason('4194305\n'), 'process gone', 'beyond the pid range');
    t.equal(staleReason(`${await zombie(t)}\n`), 'zombie');
    const sleeper = liveSleep(t);
    t.equal(staleReason(`${sleeper}\n`), 'not an agt daemon', 'a live process whose command line is not agtd');
    t.equal(
      staleReason(`${sleeper}\nagtd start=${startTimeOf(sleeper)}\n`),
      undefined,
      'the process that wrote the file (pid and start time) is running',
    );
    t.equal(staleReason(`${sleeper}\nagtd start=1\n`), 'pid reused by another process', 'same pid, another start time');

    const dataDir = tempDir(t);
    writeFileSync(join(dataDir, 'agtd.pid'), `${sleeper}\nagtd start=${startTimeOf(sleeper)}\n`);
    t.throws(
      () => claimPidFile(dataDir),
      /another agt daemon \(pid \d+\) is running/,
      'a running daemon keeps its data directory',
    );
    writeFileSync(join(dataDir, 'agtd.pid'), `${sleeper}\n`);
    const claimed = claimPidFile(dataDir);
    t.same(
      readFileSync(claimed.path, 'utf8').split('\n').slice(0, 2),
      [String(process.pid), `agtd start=${startTimeOf(process.pid)}`],
      'pid and start time recorded',
    );
    claimed.release();
    t.notOk(existsSync(claimed.path), 'released');
  },
);
