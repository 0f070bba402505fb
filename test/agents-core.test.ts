import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fastJson from 'fast-json-stringify';
import Database from 'libsql';
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { runDaemon, tempDir, type SpawnedDaemon } from './helpers/daemon.js';
import { AgentStatus } from '../kernel/http-api/agents-api.js';
import { forSerializing } from '../kernel/http/serializer-schema.js';

/** One daemon for the file; each test starts from no loaded agent (it unloads what the previous one left). */
let shared: Promise<SpawnedDaemon> | undefined;
async function daemon(): Promise<SpawnedDaemon> {
  const d = await (shared ??= runDaemon(t));
  for (const agent of (await d.request('GET', '/agents')).body) await d.request('POST', `/agents/${agent.id}/unload`);
  return d;
}

t.test('load, list, get, status, stop', async (t) => {
  const d = await daemon();
  const dir = tempDir(t);
  const path = await createAgentFile(
    dir,
    { name: 'alpha', handle: 'alpha-h', autostart: true, state: 'hibernate' },
    {
      seed: (file) => {
        file.loop.append({ role: 'user', content: 'hi' });
        file.loop.append({ role: 'assistant', content: 'hello' });
        file.loop.append({ loop: 'side', role: 'user', content: 'not main' });
      },
    },
  );

  const load = await d.request('POST', '/agents/load', { filePath: path });
  t.equal(load.status, 200);
  t.equal(load.body.filePath, path);
  t.equal(load.body.config.name, 'alpha');
  const id = load.body.id as string;
  t.equal(load.body.config.id, id);

  const again = await d.request('POST', '/agents/load', { filePath: path });
  t.equal(again.status, 200, 'an already loaded file returns the existing reference');
  t.equal(again.body.id, id);

  const list = await d.request('GET', '/agents');
  t.same(list.body, [
    {
      id,
      filePath: path,
      name: 'alpha',
      handle: 'alpha-h',
      autostart: true,
      runtimeState: 'hibernate',
      displayState: 'hibernate',
    },
  ]);

  for (const key of [id, 'alpha-h', 'alpha']) {
    const got = await d.request('GET', `/agents/${key}`);
    t.equal(got.status, 200, `resolves by ${key}`);
    t.equal(got.body.id, id);
  }

  const status = await d.request('GET', '/agents/alpha/status');
  t.equal(status.status, 200);
  const { storage, ...state } = status.body;
  t.same(state, {
    id,
    filePath: path,
    name: 'alpha',
    handle: 'alpha-h',
    autostart: true,
    runtimeState: 'hibernate',
    targetState: null,
    loopCount: 2,
  });
  // The file on disk (docs/backups.md): sizes, no quota, rows per table.
  t.ok(storage.fileBytes > 0);
  t.equal(storage.quotaBytes, null);
  t.equal(storage.tables.agt_config, 1);

  // The route writes the body with JSON.stringify: the same bytes and type as the schema's
  // serializer, with a handle and without.
  const bare = await d.request('POST', '/agents/load', { filePath: await createAgentFile(dir, { name: 'beta' }) });
  const serialize = fastJson(forSerializing(AgentStatus));
  for (const key of [bare.body.id, id]) {
    const response = await fetch(`${d.url}/agents/${key}/status`, { headers: { authorization: `Bearer ${d.token}` } });
    const text = await response.text();
    t.equal(response.headers.get('content-type'), 'application/json; charset=utf-8');
    t.equal(text, serialize(JSON.parse(text)), `status of ${key}: the schema serializer's bytes`);
  }
  t.equal((await d.request('POST', `/agents/${bare.body.id}/unload`)).status, 200);

  const unknown = await d.request('GET', '/agents/nobody/status');
  t.equal(unknown.status, 404);
  t.equal(unknown.body.code, 'not_found');

  const stop = await d.request('POST', `/agents/${id}/stop`);
  t.same([stop.status, stop.body], [200, { success: true }]);
  t.same((await d.request('GET', '/agents')).body, []);
  t.equal((await d.request('POST', `/agents/${id}/unload`)).status, 404, 'gone after stop');

  const reload = await d.request('POST', '/agents/load', { filePath: path });
  t.equal(reload.body.id, id, 'the file stays and loads again');
  const unload = await d.request('POST', '/agents/alpha/unload');
  t.same([unload.status, unload.body], [200, { success: true }]);
});

t.test('ambiguous names answer 409 with candidates', async (t) => {
  const d = await daemon();
  const dir = tempDir(t);
  const a = await createAgentFile(dir, { name: 'twin' }, { fileName: 'a.agt' });
  const b = await createAgentFile(dir, { name: 'twin' }, { fileName: 'b.agt' });
  t.equal((await d.request('POST', '/agents/load', { filePath: a })).status, 200);
  t.equal((await d.request('POST', '/agents/load', { filePath: b })).status, 200);
  const res = await d.request('GET', '/agents/twin');
  t.equal(res.status, 409);
  t.equal(res.body.code, 'ambiguous_agent');
  t.same(res.body.candidates.map((c: { filePath: string }) => c.filePath).sort(), [a, b].sort());
  t.same(Object.keys(res.body.candidates[0]).sort(), ['filePath', 'handle', 'id', 'name']);
});

t.test('load refusals are clear 4xx', async (t) => {
  const d = await daemon();
  const dir = tempDir(t);
  const load = (body: unknown) => d.request('POST', '/agents/load', body);

  const relative = await load({ filePath: 'agents/a.agt' });
  t.same([relative.status, relative.body.code], [400, 'bad_request']);
  const noPath = await load({});
  t.same([noPath.status, noPath.body.code], [400, 'bad_request']);
  const missing = await load({ filePath: join(dir, 'missing.agt') });
  t.same([missing.status, missing.body.code], [404, 'not_found']);

  const corrupt = join(dir, 'corrupt.agt');
  writeFileSync(corrupt, Buffer.from(Array.from({ length: 8192 }, (_, i) => (i * 7919 + 13) % 256)));
  const c = await load({ filePath: corrupt });
  t.same([c.status, c.body.code, c.body.reason], [422, 'load_failed', 'corrupt']);

  const damaged = join(dir, 'damaged.agt');
  writeFileSync(damaged, Buffer.concat([Buffer.from('SQLite format 3\0'), Buffer.alloc(4080, 0xab)]));
  const dmg = await load({ filePath: damaged });
  t.same([dmg.status, dmg.body.code, dmg.body.reason], [422, 'load_failed', 'corrupt']);

  const empty = join(dir, 'empty.agt');
  writeFileSync(empty, '');
  t.same((await load({ filePath: empty })).body.reason, 'foreign');

  const foreign = join(dir, 'foreign.agt');
  const db = new Database(foreign);
  db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); PRAGMA user_version = 1');
  db.close();
  const f = await load({ filePath: foreign });
  t.same([f.status, f.body.code, f.body.reason], [422, 'load_failed', 'foreign']);

  const newer = await createAgentFile(dir, { name: 'future' });
  const ndb = new Database(newer);
  ndb.exec('PRAGMA user_version = 999');
  ndb.close();
  const n = await load({ filePath: newer });
  t.same([n.status, n.body.code, n.body.reason], [422, 'load_failed', 'newer']);
  t.match(n.body.error, /newer/);

  const bad = await createAgentFile(
    dir,
    { name: 'bad' },
    { seed: (file) => file.config.setValue('config', { agt_version: '0.2', id: 'x' }) },
  );
  const b = await load({ filePath: bad });
  t.same([b.status, b.body.code, b.body.reason], [422, 'load_failed', 'invalid_config']);

  const dirLoad = await load({ filePath: dir });
  t.same([dirLoad.status, dirLoad.body.code], [422, 'load_failed']);

  const first = await createAgentFile(dir, { id: 'same-id', name: 'one' }, { fileName: 'one.agt' });
  const second = await createAgentFile(dir, { id: 'same-id', name: 'two' }, { fileName: 'two.agt' });
  t.equal((await load({ filePath: first })).status, 200);
  const dup = await load({ filePath: second });
  t.same([dup.status, dup.body.code], [409, 'conflict']);
  t.same((await d.request('GET', '/agents')).body.length, 1, 'refused loads leave nothing behind');
});

t.test('config GET and PUT', async (t) => {
  const d = await daemon();
  const dir = tempDir(t);
  const path = await createAgentFile(dir, { name: 'cfg', state: 'idle' });
  const { body: ref } = await d.request('POST', '/agents/load', { filePath: path });
  const id = ref.id as string;

  const got = await d.request('GET', `/agents/${id}/config`);
  t.same(got.body, { agentId: id, config: ref.config });

  const next = { ...ref.config, description: 'changed', state: 'off', tools: [{ name: 'say', enabled: true }] };
  const put = await d.request('PUT', `/agents/${id}/config`, next);
  t.equal(put.status, 200);
  t.same(put.body, { agentId: id, success: true, config: next });
  t.equal((await d.request('GET', `/agents/${id}/config`)).body.config.description, 'changed');
  t.equal(
    (await d.request('GET', `/agents/${id}/status`)).body.runtimeState,
    'idle',
    'a changed state does not move the agent',
  );

  const badModel = await d.request('PUT', `/agents/${id}/config`, { ...next, model: { provider: 'x' } });
  t.equal(badModel.status, 400);
  t.match(badModel.body.error, /model/, 'names the bad field');
  const badTrigger = await d.request('PUT', `/agents/${id}/config`, {
    ...next,
    triggers: { on_nothing: { enabled: true, targets: [] } },
  });
  t.equal(badTrigger.status, 400);
  const badLoop = await d.request('PUT', `/agents/${id}/config`, {
    ...next,
    loops: [{ name: 'Bad Name', goal: 'g', enabled: true }],
  });
  t.equal(badLoop.status, 400);
  t.match(badLoop.body.error, /loops\/0\/name/);
  const newId = await d.request('PUT', `/agents/${id}/config`, { ...next, id: 'other' });
  t.same([newId.status, newId.body.code], [400, 'bad_request']);
  t.match(newId.body.error, /\/id/);

  // Persisted: survives unload and load.
  await d.request('POST', `/agents/${id}/unload`);
  const reloaded = await d.request('POST', '/agents/load', { filePath: path });
  t.equal(reloaded.body.config.description, 'changed');
  t.equal(reloaded.body.config.state, 'off');
});

t.test('tools: declared, built-in and contributed, sorted', async (t) => {
  const d = await daemon();
  const dir = tempDir(t);
  const path = await createAgentFile(dir, {
    name: 'tooly',
    tools: [
      { name: 'zeta', enabled: true, locked: true },
      { name: 'say', enabled: false, visible: false },
    ],
  });
  const { body: ref } = await d.request('POST', '/agents/load', { filePath: path });
  const res = await d.request('GET', `/agents/${ref.id}/tools`);
  t.equal(res.status, 200);
  const names = res.body.tools.map((tool: { name: string }) => tool.name);
  t.same(names, [...names].sort(), 'sorted by name');
  const byName = (name: string) => res.body.tools.find((tool: { name: string }) => tool.name === name);
  for (const name of ['ask', 'say', 'sys_update_config', 'compute_exec', 'zeta']) t.ok(byName(name), `${name} listed`);
  // compute_exec (the compute extension's): restricted and off by default, undeclared here.
  const exec = byName('compute_exec');
  t.same(Object.keys(exec).sort(), [
    'description',
    'enabled',
    'locked',
    'name',
    'restricted',
    'restrictions',
    'schema',
    'source',
    'visible',
  ]);
  t.match(exec, {
    enabled: false,
    visible: true,
    restricted: true,
    locked: false,
    source: 'ext:compute',
    description: /shell command/,
    schema: { type: 'object', required: ['command'] },
    restrictions: { restricted: true, locked: false },
  });
  t.same(
    [byName('sys_update_config').enabled, byName('sys_update_config').source],
    [false, 'builtin'],
    'a built-in off by default',
  );
  t.same([byName('ask').enabled, byName('ask').restricted], [true, false], 'a built-in on by default');
  const say = byName('say');
  t.same([say.enabled, say.visible, say.source], [false, false, 'builtin'], 'the declaration wins over the definition');
  const zeta = byName('zeta');
  t.same(
    [zeta.source, zeta.locked, zeta.restrictions],
    ['declared', true, { restricted: false, locked: true }],
    'declared without a definition',
  );
});

t.test('concurrent loads of one file share one agent', async (t) => {
  const d = await daemon();
  const path = await createAgentFile(tempDir(t), { name: 'racy' });
  const results = await Promise.all(
    Array.from({ length: 5 }, () => d.request('POST', '/agents/load', { filePath: path })),
  );
  t.ok(results.every((res) => res.status === 200));
  t.equal(new Set(results.map((res) => res.body.id)).size, 1);
  t.equal((await d.request('GET', '/agents')).body.length, 1);
  const stops = await Promise.all([d.request('POST', '/agents/racy/stop'), d.request('POST', '/agents/racy/unload')]);
  t.ok(stops.some((res) => res.status === 200));
  t.same((await d.request('GET', '/agents')).body, []);
});
