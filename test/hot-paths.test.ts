/**
 * What the performance work on the hot paths must not change: the in-memory loop row counts
 * stay equal to `count(*)`, the bearer comparison keeps its answers.
 * (No timing is asserted here: the figures live in `npm run bench`.) Internals, so in process: the
 * stores and helpers directly, and two daemons whose kernel is inspected (how often the runtime wrap is
 * opened, agentStatus against what the status route builds).
 */
import { join } from 'node:path';
import t from 'tap';
import { AgentConfigSchema } from '../kernel/agents/config-schema.js';
import { firstSchemaError } from '../contracts/validate.js';
import { AgentFile } from '../kernel/agents/agent-file.js';
import { secretEquals } from '../kernel/http/guards.js';
import { agentConfig } from './helpers/agent-file.js';
import { bootDaemon, tempDir } from './helpers/daemon.js';

function sqlCounts(file: AgentFile): Record<string, number> {
  const rows = file.raw.all<{ loop: string; n: number }>('SELECT loop, count(*) AS n FROM agt_loop GROUP BY loop');
  return Object.fromEntries(rows.map((row) => [row.loop, Number(row.n)]));
}

t.test(
  'loop row counts kept in memory equal count(*) through appends, deletes, compaction and rollbacks',
  async (t) => {
    const path = join(tempDir(t), 'counts.agt');
    const file = AgentFile.create(path, agentConfig({ name: 'counts' }));
    t.teardown(() => file.close());
    const check = (what: string) => {
      const expected = sqlCounts(file);
      t.same(Object.fromEntries(file.loop.counts()), expected, `${what}: counts()`);
      for (const loop of ['main', 'inner', 'other'])
        t.equal(file.loop.count(loop), expected[loop] ?? 0, `${what}: count(${loop})`);
    };
    check('empty');
    for (let i = 0; i < 5; i++) file.loop.append({ role: 'user', content: `m${i}` });
    file.loop.append({ loop: 'inner', role: 'user', content: 'i0' });
    check('after appends');

    // A rolled-back transaction leaves the counts as they were.
    t.throws(() =>
      file.transaction(() => {
        file.loop.append({ role: 'user', content: 'gone' });
        file.loop.clear('inner');
        throw new Error('roll back');
      }),
    );
    check('after a rollback');

    // A savepoint rolled back inside a committed transaction.
    file.transaction(() => {
      file.loop.append({ role: 'assistant', content: 'kept' });
      try {
        file.transaction(() => {
          file.loop.append({ role: 'assistant', content: 'inner gone' });
          throw new Error('inner');
        });
      } catch {
        // the inner part only
      }
    });
    check('after a savepoint rollback');

    // Compaction: delete through an id, then the summary row under that id.
    const rows = file.loop.list('main');
    const last = rows[3]!;
    file.transaction(() => {
      const removed = file.loop.deleteThrough('main', last.id);
      t.equal(removed, 4);
      file.loop.insertSummary({ id: last.id, loop: 'main', content: { text: 'summary' }, createdAt: last.created_at });
    });
    check('after compaction');
    t.equal(file.loop.list('main')[0]!.kind, 'summary');

    t.equal(file.loop.clear('inner'), 1);
    t.equal(file.loop.clear('other'), 0);
    check('after clear');

    // Reopened: read once from the file.
    await file.close();
    const again = AgentFile.open(path);
    t.teardown(() => again.close());
    t.same(Object.fromEntries(again.loop.counts()), sqlCounts(again));
  },
);

t.test('secretEquals: equal only for the same bytes, whatever the lengths', async (t) => {
  const token = 'bench-token-0123456789abcdef';
  t.ok(secretEquals(token, token));
  t.ok(secretEquals(String(token), token), 'another string with the same text');
  t.notOk(secretEquals('', token));
  t.notOk(secretEquals(token.slice(0, -1), token), 'a prefix');
  t.notOk(secretEquals(`${token}x`, token), 'longer, with the token as its prefix');
  t.notOk(secretEquals(`${token.slice(0, -1)}g`, token), 'last byte differs');
  t.notOk(secretEquals(`${token}\0`, token), 'a trailing NUL');
  t.notOk(secretEquals(token.slice(0, -1), `${token.slice(0, -1)}\0`), 'zero padding never matches a shorter value');
  t.ok(secretEquals('pässwörd-✓', 'pässwörd-✓'), 'multi-byte characters');
  t.notOk(secretEquals('pässwörd-✓', 'passwörd-✓'));
  t.notOk(secretEquals('ä', 'a\u0308'), 'compared as bytes, not normalized');
  t.ok(secretEquals('', ''));
  // Many different expected secrets (the per-secret cache is bounded and still answers right).
  for (let i = 0; i < 40; i++) {
    t.ok(secretEquals(`secret-${i}`, `secret-${i}`));
    t.notOk(secretEquals(`secret-${i}`, `secret-${i + 1}`));
  }
  t.ok(secretEquals(token, token), 'the first secret still matches after the cache was cleared');
});

t.test(
  'envelope state: a record that opened through the runtime wrap is not opened again, a changed record is',
  async (t) => {
    const d = await bootDaemon(t);
    await d.request('POST', '/identity/create', { passphrase: 'owner passphrase' });
    const created = await d.request('POST', '/agents/create', { name: 'Keys', directory: tempDir(t) });
    t.equal(created.status, 201);
    const { credentials, registry } = d.daemon.kernel;
    const agent = registry.resolve(created.body.agentId);
    let opens = 0;
    const identity = d.daemon.kernel.identity;
    const runtimeBoxOpen = identity.runtimeBoxOpen.bind(identity);
    identity.runtimeBoxOpen = (sealed) => {
      opens++;
      return runtimeBoxOpen(sealed);
    };
    t.teardown(() => {
      identity.runtimeBoxOpen = runtimeBoxOpen;
    });
    t.match(credentials.state(agent), { exists: true, locked: false, reason: null });
    t.match(credentials.state(agent), { exists: true, locked: false, reason: null });
    t.equal(opens, 0, 'checked at load already: not opened again');

    const original = agent.file.identity.get('envelope')!.toString('utf8');
    const foreign = JSON.parse(original);
    foreign.wraps.runtime.did = 'did:key:z6MkOtherRuntime';
    foreign.wraps.owner.did = 'did:key:z6MkOtherOwner';
    agent.file.identity.put('envelope', JSON.stringify(foreign));
    t.match(credentials.state(agent), { locked: true, reason: 'foreign' }, 'a changed record is judged again');
    agent.file.identity.put('envelope', original);
    t.match(credentials.state(agent), { locked: false });
    t.equal(opens, 0, 'the record that opened before: the same answer without opening');
    agent.file.identity.put('envelope', JSON.stringify(JSON.parse(original), null, 1));
    t.match(credentials.state(agent), { locked: false });
    t.equal(opens, 1, 'the same envelope stored as other text: opened once, then remembered');
    t.match(credentials.state(agent), { locked: false });
    t.equal(opens, 1);
    t.equal(credentials.sealPending(agent), 0, 'nothing pending: the envelope is not opened');
    t.equal(opens, 1);
  },
);

t.test('firstSchemaError answers the same before and after its schema is compiled', async (t) => {
  const config = agentConfig({ name: 'checked' });
  const answers = [];
  for (let i = 0; i < 4; i++) {
    answers.push([
      firstSchemaError(AgentConfigSchema, config),
      firstSchemaError(AgentConfigSchema, { ...config, name: 42 }),
      firstSchemaError(AgentConfigSchema, { ...config, model: { provider: 'x' } }),
      firstSchemaError(AgentConfigSchema, { ...config, extra: true }),
    ]);
  }
  t.equal(answers[0]![0], null, 'valid');
  t.match(answers[0]![1], /^\/name: /);
  t.match(answers[0]![2], /^\/model/);
  for (const later of answers.slice(1)) t.same(later, answers[0]);
});

t.test(
  'a file made from the template is the file the migrations make, complete in the main file once finished',
  async (t) => {
    const dir = tempDir(t);
    const schemaOf = (file: AgentFile) => ({
      version: file.version,
      objects: file.raw.all('SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name'),
      journal: file.raw.one<{ journal_mode: string }>('PRAGMA journal_mode')!.journal_mode,
      integrity: file.raw.one<{ integrity_check: string }>('PRAGMA integrity_check')!.integrity_check,
    });
    const fromTemplate = AgentFile.create(join(dir, 'template.agt'), agentConfig({ name: 'from-template' }));
    const second = AgentFile.create(join(dir, 'second.agt'), agentConfig({ name: 'second' }));
    // The migrations from version 1 up, as an old file opening.
    const old = AgentFile.create(join(dir, 'migrated.agt'), agentConfig({ name: 'migrated' }), { version: 1 });
    await old.close();
    const migrated = AgentFile.open(join(dir, 'migrated.agt'));
    t.teardown(() => Promise.all([fromTemplate.close(), second.close(), migrated.close()]));
    // Until it is finished a created file is written in place (rollback journal in memory); then a WAL file.
    t.equal(schemaOf(second).journal, 'memory', 'written in place while being created');
    second.finishCreation();
    t.same(schemaOf(second).journal, 'wal', 'a WAL file once finished');
    t.same({ ...schemaOf(fromTemplate), journal: 'wal' }, schemaOf(migrated));
    t.same(schemaOf(second), { ...schemaOf(fromTemplate), journal: 'wal' });
    t.equal(schemaOf(fromTemplate).integrity, 'ok');
    t.equal(fromTemplate.openedAtVersion, fromTemplate.version, 'a created file did not migrate');
    t.equal(fromTemplate.loop.count(), 0);
    t.throws(
      () => AgentFile.create(join(dir, 'template.agt'), agentConfig()),
      { code: 'conflict' },
      'an existing path is refused',
    );

    fromTemplate.loop.append({ role: 'user', content: 'hello' });
    fromTemplate.finishCreation();
    const { existsSync, statSync, copyFileSync } = await import('node:fs');
    const wal = join(dir, 'template.agt-wal');
    t.equal(
      existsSync(wal) ? statSync(wal).size : 0,
      0,
      'every row in the main file: the WAL is empty or not made yet',
    );
    copyFileSync(join(dir, 'template.agt'), join(dir, 'alone.agt'));
    const alone = AgentFile.open(join(dir, 'alone.agt'), { readonly: true });
    t.teardown(() => alone.close());
    t.equal(alone.config.get()?.name, 'from-template', 'the main file alone holds the config');
    t.equal(alone.loop.count(), 1);
    t.equal(
      fromTemplate.raw.one<{ synchronous: number }>('PRAGMA synchronous')!.synchronous,
      1,
      'NORMAL after creation',
    );
  },
);

t.test('loop append returns the row as it reads back from the file', async (t) => {
  const file = AgentFile.create(join(tempDir(t), 'rows.agt'), agentConfig({ name: 'rows' }));
  t.teardown(() => file.close());
  const inputs = [
    { role: 'user' as const, content: { text: 'hi', nested: [1, 'two', null, { deep: true }] } },
    {
      role: 'assistant' as const,
      kind: 'message',
      content: 'plain text',
      turnId: 'turn-1',
      model: 'm',
      provider: 'p',
      usage: { input: 12, output: 5 },
      cost: 0.25,
    },
    {
      loop: 'inner',
      role: 'tool' as const,
      kind: 'tool_result',
      content: undefined,
      usage: { input: 1, output: 2, cacheRead: 3, cacheWrite: 4 },
      cost: 3,
      createdAt: 1234,
    },
    { role: 'system' as const, content: { when: new Date(0), big: 2 ** 40, unicode: 'é✓' } },
  ];
  for (const input of inputs) {
    const appended = file.loop.append(input);
    t.same(appended, file.loop.get(appended.id), `${input.role} ${input.kind ?? 'message'}`);
    t.strictSame(appended, file.loop.get(appended.id));
  }
});

t.test('agentStatus answers what the status route built so far', async (t) => {
  const { statusOf } = await import('../kernel/routes/agents.js');
  const { agentStatus } = await import('../kernel/agents/agent-status.js');
  const d = await bootDaemon(t);
  await d.request('POST', '/identity/create', { passphrase: 'owner passphrase' });
  const created = await d.request('POST', '/agents/create', { name: 'Status', directory: tempDir(t) });
  const services = d.daemon.kernel;
  const agent = services.registry.resolve(created.body.agentId);
  t.strictSame(agentStatus(services.runtime, agent, services.storage), statusOf(services, agent));
  t.ok(statusOf(services, agent).storage!.fileBytes > 0, 'with the storage of the file (docs/backups.md)');
  agent.setConfig({ ...agent.config, handle: 'status-handle' } as typeof agent.config);
  agent.degraded = 'CREDENTIALS_LOCKED';
  t.same(agentStatus(services.runtime, agent, services.storage), statusOf(services, agent));
  t.match(agentStatus(services.runtime, agent), { handle: 'status-handle', degraded: 'CREDENTIALS_LOCKED' });
  t.same(
    agentStatus(undefined, agent, services.storage),
    statusOf({ ...services, runtime: undefined } as never, agent),
    'without a runtime',
  );
  agent.degraded = null;
});
