import t, { type Test } from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { join } from 'node:path';
import { agentConfig } from './helpers/agent-file.js';
import { runDaemon, tempDir, type DaemonClient, type SpawnedDaemon } from './helpers/daemon.js';
import { startToolDriver, type ToolDriver } from './helpers/tool-driver.js';
import { AgentFile } from '../kernel/agents/agent-file.js';

/**
 * One daemon for the file (each test loads agents of its own); its provider `local` (the agents' default)
 * is the tool driver, a fake model that makes an agent call the tool a test names.
 */
let shared: Promise<{ d: SpawnedDaemon; driver: ToolDriver }> | undefined;
const daemon = () =>
  (shared ??= startToolDriver(t, undefined, 'local').then(async (driver) => ({
    driver,
    d: await runDaemon(t, { settings: { providers: [driver.provider] } }),
  })));

async function loaded(t: Test, d: DaemonClient, partial = {}, seed?: (file: AgentFile) => void) {
  const path = await createAgentFile(tempDir(t), { name: 'res', ...partial }, { seed });
  const res = await d.request('POST', '/agents/load', { filePath: path });
  t.equal(res.status, 200);
  return res.body.id as string;
}

t.test('meta CRUD and protection', async (t) => {
  const h = await daemon();
  const d = h.d;
  const id = await loaded(t, d);
  const meta = (method: string, path = '', body?: unknown) => d.request(method, `/agents/${id}/meta${path}`, body);

  t.same((await meta('GET')).body, { agentId: id, entries: [] });
  t.same((await meta('PUT', '/b', { value: 'two' })).body, { agentId: id, success: true });
  t.same((await meta('PUT', '/a', { value: '1', protection: 'increment' })).body, { agentId: id, success: true });
  t.same((await meta('GET')).body.entries, [
    { key: 'a', value: '1', protection: 'increment' },
    { key: 'b', value: 'two', protection: 'none' },
  ]);
  const notInt = await meta('PUT', '/b', { value: 'x', protection: 'increment' });
  t.same([notInt.status, notInt.body.code], [400, 'bad_request']);
  t.equal((await meta('PUT', '/a', { value: '0' })).status, 200, 'the owner may lower an increment key');
  t.equal((await meta('PUT', '/a', { value: '5' })).body.success, true);
  t.equal((await meta('GET')).body.entries[0].protection, 'increment', 'protection kept when absent');
  t.equal((await meta('PUT', '/a', {})).status, 400, 'value required');
  t.equal((await meta('PUT', '/a', { value: 'v', protection: 'sealed' })).status, 400);

  t.same((await meta('PATCH', '/b/protection', { protection: 'readonly' })).body, { agentId: id, success: true });
  t.same((await meta('PATCH', '/nope/protection', { protection: 'readonly' })).status, 404);
  t.same(
    (await meta('PATCH', '/b/protection', { protection: 'increment' })).status,
    400,
    'non-integer value cannot become increment',
  );
  t.same((await meta('PATCH', '/b/protection', {})).status, 400);

  // The agent's own tools are bound by protection.
  t.match(
    await h.driver.run(d, id, 'sys_set_meta', { key: 'b', value: 'x' }),
    /^Error: .*readonly/,
    'a readonly key refuses',
  );
  t.match(
    await h.driver.run(d, id, 'sys_set_meta', { key: 'a', value: '5' }),
    /^Error: /,
    'an increment key must grow',
  );
  t.same(JSON.parse(await h.driver.run(d, id, 'sys_set_meta', { key: 'a', value: '6' })), {
    key: 'a',
    value: '6',
    protection: 'increment',
  });
  t.match(await h.driver.run(d, id, 'sys_delete_meta', { key: 'a' }), /^Error: /, 'an increment key is not deleted');
  t.same(
    (await meta('GET')).body.entries.map((entry: { key: string; value: string }) => [entry.key, entry.value]),
    [
      ['a', '6'],
      ['b', 'two'],
    ],
  );

  t.same((await meta('DELETE', '/b')).body, { agentId: id, success: true }, 'the owner deletes a readonly key');
  t.same((await meta('DELETE', '/b')).body, { agentId: id, success: false });
  t.equal((await d.request('GET', '/agents/nobody/meta')).status, 404);
});

t.test('tables: list, read local_* and agt_audit, drop local_* only', async (t) => {
  const { d } = await daemon();
  const id = await loaded(t, d, {}, (file) => {
    file.raw.exec('CREATE TABLE local_notes (id INTEGER PRIMARY KEY, body TEXT, raw BLOB)');
    for (let i = 1; i <= 150; i++)
      file.raw.run('INSERT INTO local_notes (body, raw) VALUES (?, ?)', `n${i}`, i === 1 ? Buffer.from('hi') : null);
    file.audit.append('test', 'subject', { a: 1 });
    file.inbox.insert({ source: 'api', text: 'secret-ish' });
  });
  const list = await d.request('GET', `/agents/${id}/tables`);
  t.equal(list.status, 200);
  const counts = Object.fromEntries(
    list.body.tables.map((x: { name: string; row_count: number }) => [x.name, x.row_count]),
  );
  t.equal(counts.local_notes, 150);
  t.equal(counts.agt_audit, 1);
  t.equal(counts.agt_config, 1);

  const page = await d.request('GET', `/agents/${id}/tables/local_notes`);
  t.same(page.body.columns, ['id', 'body', 'raw']);
  t.equal(page.body.rows.length, 100, 'default limit 100');
  t.same(page.body.rows[0], { id: 1, body: 'n1', raw: Buffer.from('hi').toString('base64') });
  const tail = await d.request('GET', `/agents/${id}/tables/local_notes?limit=1000&offset=140`);
  t.equal(tail.body.rows.length, 10);
  t.equal(tail.body.rows[0].id, 141);
  for (const query of ['limit=0', 'limit=1001', 'offset=-1', 'limit=abc']) {
    t.equal((await d.request('GET', `/agents/${id}/tables/local_notes?${query}`)).status, 400, query);
  }
  const audit = await d.request('GET', `/agents/${id}/tables/agt_audit`);
  t.same(audit.body.columns, ['id', 'kind', 'subject', 'data', 'created_at']);
  t.equal(audit.body.rows[0].kind, 'test');

  for (const name of [
    'agt_inbox',
    'agt_outbox',
    'agt_credentials',
    'agt_config',
    'sqlite_master',
    'local_x;DROP TABLE agt_loop',
    'local_"x"',
    'notes',
  ]) {
    const res = await d.request('GET', `/agents/${id}/tables/${encodeURIComponent(name)}`);
    t.same([res.status, res.body.code], [400, 'bad_request'], `read ${name}`);
    t.match(res.body.error, /Invalid table name/);
  }
  t.equal((await d.request('GET', `/agents/${id}/tables/local_missing`)).status, 404);

  t.same((await d.request('DELETE', `/agents/${id}/tables/agt_audit`)).status, 400, 'only local_* can be dropped');
  t.same((await d.request('DELETE', `/agents/${id}/tables/agt_loop`)).status, 400);
  t.same((await d.request('DELETE', `/agents/${id}/tables/local_notes`)).body, { agentId: id, success: true });
  t.same((await d.request('DELETE', `/agents/${id}/tables/local_notes`)).body, { agentId: id, success: false });
  const after = await d.request('GET', `/agents/${id}/tables`);
  t.notOk(after.body.tables.some((x: { name: string }) => x.name === 'local_notes'));
});

t.test('logs: clamp, filters, newest last, after, delete', async (t) => {
  const { d } = await daemon();
  const id = await loaded(t, d, {}, (file) => {
    for (let i = 1; i <= 600; i++) {
      file.logs.write({
        level: 'info',
        message: `m${i}`,
        origin: i % 2 ? 'odd' : 'even',
        event: i % 3 ? 'tick' : 'tock',
        data: { i },
      });
    }
  });
  const logs = (query = '') => d.request('GET', `/agents/${id}/logs${query}`);
  const def = await logs();
  t.equal(def.body.logs.length, 50, 'default 50');
  t.equal(def.body.logs.at(-1).message, 'm600', 'newest last');
  t.equal(def.body.logs[0].message, 'm551');
  t.same(Object.keys(def.body.logs[0]).sort(), [
    'created_at',
    'data',
    'event',
    'id',
    'level',
    'message',
    'origin',
    'target',
  ]);
  t.equal(def.body.logs[0].data, '{"i":551}');
  t.equal((await logs('?limit=100000')).body.logs.length, 500, 'clamped to 500');
  t.equal((await logs('?limit=0')).body.logs.length, 1, 'clamped to 1');
  t.equal((await logs('?limit=-5')).body.logs.length, 1);
  t.equal((await logs('?limit=x')).status, 400);
  const odd = await logs('?origin=odd&event=tock&limit=500');
  t.ok(odd.body.logs.every((row: { origin: string; event: string }) => row.origin === 'odd' && row.event === 'tock'));
  t.equal(odd.body.logs.length, 100);

  const after = await d.request('GET', `/agents/${id}/logs/after?afterId=595`);
  t.same(
    after.body.logs.map((row: { message: string }) => row.message),
    ['m596', 'm597', 'm598', 'm599', 'm600'],
  );
  const afterLimited = await d.request('GET', `/agents/${id}/logs/after?afterId=0&limit=3&origin=even`);
  t.same(
    afterLimited.body.logs.map((row: { message: string }) => row.message),
    ['m2', 'm4', 'm6'],
  );
  t.equal((await d.request('GET', `/agents/${id}/logs/after`)).status, 400, 'afterId required');

  t.same((await d.request('DELETE', `/agents/${id}/logs`)).body, { agentId: id, success: true });
  t.same((await logs()).body.logs, []);
});

t.test('usage rollup follows the section 2 rules', async (t) => {
  const { d } = await daemon();
  const id = await loaded(t, d, {}, (file) => {
    file.loop.append({ role: 'user', content: 'hi' });
    file.loop.append({
      role: 'assistant',
      content: 'a',
      model: 'm1',
      usage: { input: 100, output: 10, cacheRead: 30, cacheWrite: 5 },
    });
    file.loop.append({ loop: 'side', role: 'assistant', content: 'b', model: 'm2', usage: { input: 50, output: 5 } });
    file.loop.append({
      role: 'assistant',
      kind: 'model_invoke',
      content: null,
      model: 'm1',
      usage: { input: 1000, output: 1000 },
    });
  });
  const res = await d.request('GET', `/agents/${id}/usage`);
  t.equal(res.status, 200);
  t.same(res.body.totals, { input: 150, output: 15, cacheRead: 30, cacheWrite: 5, total: 165 });
  t.same([res.body.agentId, res.body.source, res.body.loopRows, res.body.usageRows], [id, 'agt_loop', 4, 2]);
  t.same(res.body.byModel, [
    { model: 'm1', rows: 1, input: 100, output: 10, cacheRead: 30, cacheWrite: 5, total: 110 },
    { model: 'm2', rows: 1, input: 50, output: 5, cacheRead: 0, cacheWrite: 0, total: 55 },
  ]);
  t.type(res.body.note, 'string');
});

t.test('inbox and outbox listings, inbox clear with and without audit', async (t) => {
  const { d } = await daemon();
  const seed = (file: AgentFile) => {
    file.inbox.insert({ source: 'api', sender: 'bob', text: 'one', data: { k: 1 } });
    file.inbox.insert({ source: 'mesh', text: 'two', status: 'read' });
    file.outbox.insert({ channel: 'mesh', recipient: 'carol', text: 'out' });
  };
  const plain = await loaded(t, d, { name: 'plain' }, seed);
  const audited = await loaded(t, d, { name: 'audited', context: { audit: { inbox: true } } }, seed);

  const inbox = await d.request('GET', `/agents/${plain}/inbox`);
  t.equal(inbox.body.agentId, plain);
  t.same(
    inbox.body.messages.map((m: { text: string }) => m.text),
    ['one', 'two'],
  );
  t.same(inbox.body.messages[0].data, { k: 1 });
  t.equal(inbox.body.messages[0].status, 'unread');
  t.same(
    (await d.request('GET', `/agents/${plain}/inbox?status=read`)).body.messages.map((m: { text: string }) => m.text),
    ['two'],
  );
  t.same((await d.request('GET', `/agents/${plain}/inbox?status=gone`)).body.messages, []);
  const outbox = await d.request('GET', `/agents/${plain}/outbox?status=queued`);
  t.same(
    outbox.body.messages.map((m: { text: string; recipient: string }) => [m.text, m.recipient]),
    [['out', 'carol']],
  );

  const cleared = await d.request('DELETE', `/agents/${plain}/inbox`);
  t.same(cleared.body, { agentId: plain, success: true, cleared: 2, audited: 0 });
  t.same((await d.request('GET', `/agents/${plain}/inbox`)).body.messages, []);
  t.equal((await d.request('GET', `/agents/${plain}/tables/agt_audit`)).body.rows.length, 0);

  const auditedClear = await d.request('DELETE', `/agents/${audited}/inbox`);
  t.same(auditedClear.body, { agentId: audited, success: true, cleared: 2, audited: 2 });
  const snapshots = await d.request('GET', `/agents/${audited}/tables/agt_audit`);
  t.same(
    snapshots.body.rows.map((row: { kind: string; subject: string }) => [row.kind, row.subject]),
    [
      ['inbox_snapshot', 'inbox:1'],
      ['inbox_snapshot', 'inbox:2'],
    ],
  );
});

t.test('the store refuses the agent a protection of its own choosing', async (t) => {
  // No tool offers it (sys_set_meta takes a key and a value): the store's own rule for actor `agent`.
  const file = AgentFile.create(join(tempDir(t), 'meta.agt'), agentConfig({ name: 'meta' }));
  t.teardown(() => file.close());
  t.throws(() => file.meta.set('c', '1', { actor: 'agent', protection: 'readonly' }), { code: 'forbidden' });
  t.same(file.meta.set('c', '1', { actor: 'agent' }), { key: 'c', value: '1', protection: 'none' });
});
