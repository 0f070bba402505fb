/**
 * kernel/agents/group-commit.ts on a real agent file: writes asked for in one event-loop turn share one
 * transaction, each caller's promise settles only once its write is committed (a second connection sees the
 * row by then, not before), and a write that fails rejects only its own caller.
 */
import { join } from 'node:path';
import Database from 'libsql';
import t, { type Test } from 'tap';
import { AgentFile } from '../kernel/agents/agent-file.js';
import { GroupCommit } from '../kernel/agents/group-commit.js';
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
  const writes = ['a', 'b', 'c'].map((id) =>
    group.add((f) => f.queue.insert(row(id))).then(() => seenAtResolve.push(count())),
  );
  t.equal(group.pending, 3, 'three writes wait for the batch');
  t.equal(count(), 0, 'nothing is committed before the batch runs');
  await Promise.all(writes);
  t.equal(transactions.length, 1, 'one transaction for the three writes');
  t.same(seenAtResolve, [3, 3, 3], 'every caller resolves after all three rows are visible to another connection');
});

t.test('a failing write fails only its own caller', async (t) => {
  const file = openFile(t);
  const group = new GroupCommit(() => file);
  file.queue.insert(row('taken'));
  const results = await Promise.allSettled([
    group.add((f) => f.queue.insert(row('one'))),
    group.add((f) => f.queue.insert(row('taken'))),
    group.add((f) => f.queue.insert(row('two'))),
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
