/**
 * kernel/agents/group-commit.ts on a real agent file: writes asked for in one event-loop turn share one
 * transaction, each caller's promise settles only once its write is committed (a second connection sees the
 * row by then, not before) with what its `committed` callback returned (all of them run right after the
 * commit, before any caller resumes), and a write that fails rejects only its own caller.
 */
import { join } from 'node:path';
import Database from 'libsql';
import t, { type Test } from 'tap';
import { AgentFile } from '../kernel/agents/agent-file.js';
import { COMMIT_SLICE, GroupCommit } from '../kernel/agents/group-commit.js';
import { agentConfig } from './helpers/agent-file.js';
import { tempDir } from './helpers/daemon.js';

function openFile(t: Test): AgentFile {
  const file = AgentFile.create(join(tempDir(t), 'group.agt'), agentConfig({ name: 'group' }));
  file.finishCreation();
  t.teardown(() => file.close());
  return file;
}

const row = (turnId: string) => ({
  turnId,
  loop: 'main',
  kind: 'chat' as const,
  payload: { text: turnId },
  createdAt: 1,
});

t.test('writes of one event-loop turn share one transaction; each resolves once committed', async (t) => {
  const file = openFile(t);
  const reader = new Database(file.path, { readonly: true });
  t.teardown(() => reader.close());
  const count = () => (reader.prepare('SELECT count(*) AS n FROM agt_queue').get() as { n: number }).n;
  const transactions: number[] = [];
  const group = new GroupCommit(() => file);
  const original = file.transaction.bind(file);
  file.transaction = ((fn: (f: AgentFile) => unknown) => {
    transactions.push(1);
    return original(fn as never);
  }) as typeof file.transaction;

  const seenAtResolve: number[] = [];
  const after: string[] = [];
  const writes = ['a', 'b', 'c'].map((id) =>
    group
      .add(
        (f) => f.queue.insert(row(id)),
        () => {
          after.push(id);
          return `${id} committed`;
        },
      )
      .then((value) => {
        seenAtResolve.push(count());
        t.equal(after.length, 3, `every committed callback ran before ${id}'s caller resumed`);
        return value;
      }),
  );
  t.equal(group.pending, 3, 'three writes wait for the batch');
  t.equal(count(), 0, 'nothing is committed before the batch runs');
  t.same(await Promise.all(writes), ['a committed', 'b committed', 'c committed']);
  t.equal(transactions.length, 1, 'one transaction for the three writes');
  t.same(after, ['a', 'b', 'c'], 'the committed callbacks run in order');
  t.same(seenAtResolve, [3, 3, 3], 'every caller resolves after all three rows are visible to another connection');
});

t.test('a failing write fails only its own caller', async (t) => {
  const file = openFile(t);
  const group = new GroupCommit(() => file);
  file.queue.insert(row('taken'));
  const results = await Promise.allSettled([
    group.add(
      (f) => f.queue.insert(row('one')),
      () => undefined,
    ),
    group.add(
      (f) => f.queue.insert(row('taken')),
      () => t.fail('no committed callback for a failed write'),
    ),
    group.add(
      (f) => f.queue.insert(row('two')),
      () => undefined,
    ),
  ]);
  t.same(
    results.map((r) => r.status),
    ['fulfilled', 'rejected', 'fulfilled'],
  );
  const ids = (file.raw.all('SELECT turn_id FROM agt_queue ORDER BY id') as Array<{ turn_id: string }>).map(
    (r) => r.turn_id,
  );
  t.same(ids, ['taken', 'one', 'two'], 'the other writes are committed, the failed one is not');
});

t.test('a large batch releases its callers a slice per event-loop turn', async (t) => {
  const file = openFile(t);
  const group = new GroupCommit(() => file);
  const resumed: number[] = [];
  const turns = eventLoopTurns();
  const count = () => (file.raw.one('SELECT count(*) AS n FROM agt_queue') as { n: number }).n;
  const writes = Array.from({ length: 70 }, (_, i) =>
    group
      .add(
        (f) => f.queue.insert(row(`r${i}`)),
        () => undefined,
      )
      .then(() => resumed.push(turns.now())),
  );
  await Promise.all(writes);
  await turns.counted;
  t.equal(count(), 70, 'all 70 rows committed');
  t.ok(new Set(resumed).size >= 2, `callers resumed over ${new Set(resumed).size} event-loop turns`);
});

t.test('a batch larger than a slice commits in slices, in order, one per event-loop turn', async (t) => {
  const file = openFile(t);
  const group = new GroupCommit(() => file);
  const transactions: number[] = [];
  const turns = eventLoopTurns();
  const original = file.transaction.bind(file);
  file.transaction = ((fn: (f: AgentFile) => unknown) => {
    transactions.push(turns.now());
    return original(fn as never);
  }) as typeof file.transaction;
  const writes = Array.from({ length: COMMIT_SLICE * 2 + 10 }, (_, i) =>
    group.add(
      (f) => f.queue.insert(row(`s${i}`)),
      () => undefined,
    ),
  );
  await Promise.all(writes);
  await turns.counted;
  t.equal(transactions.length, 3, `${COMMIT_SLICE * 2 + 10} writes in 3 transactions`);
  t.equal(new Set(transactions).size, 3, 'each in an event-loop turn of its own');
  const ids = (file.raw.all('SELECT turn_id FROM agt_queue ORDER BY id') as Array<{ turn_id: string }>).map(
    (r) => r.turn_id,
  );
  t.same(
    ids,
    writes.map((_, i) => `s${i}`),
    'committed in the order asked',
  );
});

/** Counts ten event-loop turns (check phases) from now: `now()` is the turn the caller is in. */
function eventLoopTurns() {
  let turn = 0;
  const counted = (async () => {
    for (let i = 0; i < 10; i++) {
      await new Promise((done) => setImmediate(done));
      turn++;
    }
  })();
  return { now: () => turn, counted };
}
