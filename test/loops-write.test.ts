import { join } from 'node:path';
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { readFile } from './helpers/sql-boundary.js';
import { wireDaemon } from './helpers/wire-daemon.js';

const h = await wireDaemon(t);

/** What the agent's file holds, read on the test's own connection. */
const fromFile = <T>(name: string, sql: string, ...params: unknown[]) =>
  readFile(join(h.dir, `${name}.agt`), (db) => db.prepare(sql).all(...params) as T[]);

t.test('create: defaults, attenuation, kickoff, persistence and refusals', async (t) => {
  const id = await h.agent({
    name: 'pool',
    tools: [
      { name: 'sys_set_state', enabled: false },
      { name: 'fs_read', enabled: false },
    ],
  });
  const post = (body: unknown, agent = 'pool') => h.d.request('POST', `/agents/${agent}/loops`, body);

  h.model.push({ text: 'on it' });
  const created = await post({ name: 'research', goal: 'dig into the archive' });
  t.equal(created.status, 201);
  t.match(created.body, {
    agentId: id,
    name: 'research',
    goal: 'dig into the archive',
    enabled: true,
    autostart: true,
    excludedTools: [],
  });
  t.same(
    created.body.tools,
    ['loop_send', 'loop_list'],
    'defaults filtered to what the host grants (sys_set_state is disabled)',
  );
  t.same([...created.body.effectiveTools].sort(), ['loop_list', 'loop_send']);
  t.match(created.body.kickoff, { delivered: true, woke: true });
  const kicked = await h.ended(created.body.kickoff.turnId);
  t.equal(kicked.event_type, 'turn.completed');
  t.equal(kicked.loop, 'research');
  const call = h.model.calls.at(-1)!;
  t.match(call.system, /dig into the archive/, 'the goal is the loop instructions');
  t.match(
    call.messages[0]!.content,
    /\[trigger loop_send\].*dig into the archive/,
    'the goal is delivered as a first message',
  );

  const config = (await h.d.request('GET', '/agents/pool/config')).body.config;
  t.same(
    config.loops.map((l: any) => l.name),
    ['research'],
    'persisted through updateConfig',
  );
  const stored = fromFile<{ value: string }>('pool', "SELECT value FROM agt_config WHERE key = 'config'");
  t.same(
    JSON.parse(stored[0]!.value).loops.map((l: { name: string }) => l.name),
    ['research'],
    'committed to the file',
  );

  const reader = await post({
    name: 'reader',
    goal: 'read',
    autostart: false,
    tools: ['fs_read', 'loop_send'],
    compact_threshold: 5000,
    model: { temperature: 0.2 },
  });
  t.equal(reader.status, 201);
  t.same(reader.body.excludedTools, ['fs_read'], 'requested tool the host disabled');
  t.same(reader.body.effectiveTools, ['loop_send']);
  t.match(reader.body, { compact_threshold: 5000, model: { temperature: 0.2 }, kickoff: null });
  t.equal(
    (await post({ name: 'dormant', goal: 'wait', enabled: false })).body.kickoff,
    null,
    'a disabled loop is not started',
  );

  for (const [body, why] of [
    [{ name: 'Bad Name', goal: 'x' }, 'bad name'],
    [{ name: 'x'.repeat(33), goal: 'x' }, 'name too long'],
    [{ name: 'ok', goal: 'x', tools: ['no_such_tool'] }, 'unknown tool'],
    [{ name: 'ok', goal: 'x', tools: ['sys_update_config'] }, 'never-grantable tool'],
    [{ name: 'ok' }, 'goal missing'],
    [{ name: 'ok', goal: 'x', extra: 1 }, 'unknown field'],
  ] as const) {
    const res = await post(body);
    t.equal(res.status, 400, why);
    t.equal(res.body.code, 'bad_request', why);
  }
  for (const [body, why] of [
    [{ name: 'main', goal: 'x' }, 'main'],
    [{ name: 'research', goal: 'again' }, 'duplicate'],
  ] as const) {
    const res = await post(body);
    t.equal(res.status, 409, why);
    t.equal(res.body.code, 'conflict', why);
  }
  for (let i = 0; i < 5; i++) t.equal((await post({ name: `extra-${i}`, goal: 'x', enabled: false })).status, 201);
  const capped = await post({ name: 'one-too-many', goal: 'x', enabled: false });
  t.equal(capped.status, 409, 'the cap of 8 inner loops');
  t.match(capped.body.error, /at most 8/);

  await h.agent({ name: 'locked', locked_fields: ['loops'] });
  const locked = await post({ name: 'side', goal: 'x' }, 'locked');
  t.equal(locked.status, 409, 'owner lock');
  t.equal(locked.body.code, 'conflict');
  t.equal((await post({ name: 'side', goal: 'x' }, 'nobody')).status, 404);
});

t.test('patch: replace wholesale, null removes overrides, refusals, disabling aborts the running turn', async (t) => {
  await h.agent({
    name: 'patcher',
    loops: [
      {
        name: 'worker',
        goal: 'work',
        enabled: true,
        model: { model_id: 'other', temperature: 0.5 },
        compact_threshold: 5000,
        tools: ['loop_send'],
      },
    ],
  });
  const patch = (body: unknown, loop = 'worker') => h.d.request('PATCH', `/agents/patcher/loops/${loop}`, body);

  t.equal((await patch({})).status, 400, 'empty patch');
  t.equal((await patch({})).body.code, 'bad_request');
  t.equal((await patch({ goal: 'x' }, 'main')).status, 409, 'main');
  t.equal((await patch({ goal: 'x' }, 'nope')).status, 404, 'unknown loop');
  t.equal((await patch({ name: 'renamed' })).status, 400, 'loops cannot be renamed');
  t.equal((await patch({ tools: ['no_such_tool'] })).status, 400, 'unknown tool');
  t.equal((await patch({ tools: ['sys_update_config'] })).status, 400, 'never-grantable tool');
  t.equal((await patch({ compact_threshold: 0 })).status, 400);

  const goal = await patch({ goal: 'new goal', tools: ['loop_list', 'loop_send'] });
  t.equal(goal.status, 200);
  t.match(goal.body, {
    name: 'worker',
    goal: 'new goal',
    tools: ['loop_list', 'loop_send'],
    model: { model_id: 'other', temperature: 0.5 },
    compact_threshold: 5000,
  });
  const model = await patch({ model: { temperature: 1 } });
  t.same(model.body.model, { temperature: 1 }, 'a present key replaces wholesale');
  const params = await patch({ params: [{ key: 'a', value: 'b' }], provider_params: { x: 1 } });
  t.same(
    params.body.model,
    { temperature: 1, params: [{ key: 'a', value: 'b' }], provider_params: { x: 1 } },
    'params and provider_params patch the model override',
  );
  const cleared = await patch({ model: null, compact_threshold: null });
  t.equal(cleared.status, 200);
  t.notOk('model' in cleared.body, 'model: null removes the override');
  t.notOk('compact_threshold' in cleared.body, 'compact_threshold: null removes the override');
  t.notOk('model' in (await patch({ params: null })).body);

  h.model.push({ hang: true });
  const turn = (await h.d.request('POST', '/agents/patcher/chat', { text: 'go', loop: 'worker' })).body.turnId;
  await h.waitFor((e) => e.event_type === 'turn.started' && e.turn_id === turn);
  const disabled = await patch({ enabled: false });
  t.equal(disabled.body.enabled, false);
  const ended = await h.ended(turn);
  t.equal(ended.event_type, 'agent.error');
  t.equal((ended.payload as any).code, 'loop_disabled', 'the running turn is aborted at once');
  t.equal(
    (await h.d.request('POST', '/agents/patcher/chat', { text: 'hi', loop: 'worker' })).status,
    409,
    'a disabled loop takes no chat',
  );

  t.equal((await patch({ enabled: true })).status, 200);
  const again = (await h.d.request('POST', '/agents/patcher/chat', { text: 'hi', loop: 'worker' })).body.turnId;
  t.equal((await h.ended(again)).event_type, 'turn.completed');
  t.match(h.model.calls.at(-1)!.system, /new goal/, 're-derived from the patched declaration');
  t.same(h.model.calls.at(-1)!.tools.sort(), ['loop_list', 'loop_send']);
});

t.test('delete: archived to agt_audit, timers dropped except locked, running turn stopped', async (t) => {
  const path = await createAgentFile(
    h.dir,
    { name: 'deleter', loops: [{ name: 'scratch', goal: 's', enabled: true }] },
    {
      seed(file) {
        for (const text of ['one', 'two', 'three'])
          file.loop.append({ loop: 'scratch', role: 'user', content: { text } });
        file.loop.append({ role: 'user', content: { text: 'main stays' } });
      },
    },
  );
  const id = (await h.d.request('POST', '/agents/load', { filePath: path })).body.id as string;
  const timer = (body: Record<string, unknown>) =>
    h.d.request('POST', '/agents/deleter/timers', { mode: 'once_delay', delay_ms: 3_600_000, ...body });
  t.equal((await timer({ loop: 'scratch' })).status, 200);
  t.equal((await timer({ loop: 'scratch', locked: true })).status, 200);
  t.equal((await timer({})).status, 200);

  h.model.push({ hang: true });
  const turn = (await h.d.request('POST', '/agents/deleter/chat', { text: 'four', loop: 'scratch' })).body.turnId;
  await h.waitFor((e) => e.event_type === 'turn.started' && e.turn_id === turn);

  t.equal((await h.d.request('DELETE', '/agents/deleter/loops/main')).status, 409);
  t.equal((await h.d.request('DELETE', '/agents/deleter/loops/nope')).status, 404);
  const deleted = await h.d.request('DELETE', '/agents/deleter/loops/scratch');
  t.equal(deleted.status, 200);
  t.match(deleted.body, { agentId: id, deleted: 'scratch', archivedRows: 4, droppedTimers: 1 });
  t.equal(((await h.ended(turn)).payload as any).code, 'loop_disabled');

  const count = (loop: string) =>
    fromFile<{ n: number }>('deleter', 'SELECT count(*) AS n FROM agt_loop WHERE loop = ?', loop)[0]!.n;
  t.equal(count('scratch'), 0, 'removed from agt_loop');
  t.equal(count('main'), 1, 'other loops untouched');
  const audit = (await h.d.request('GET', '/agents/deleter/tables/agt_audit')).body.rows.filter(
    (row: any) => row.subject === 'loop:scratch',
  );
  t.equal(audit.length, 4);
  t.same(
    audit.map((row: any) => JSON.parse(row.data).content.text),
    ['one', 'two', 'three', 'four'],
    'archived in order',
  );
  const timers = (await h.d.request('GET', '/agents/deleter/timers')).body.timers;
  t.same(
    timers.map((tm: any) => [tm.loop ?? 'main', tm.locked]).sort(),
    [
      ['main', false],
      ['scratch', true],
    ],
    'the locked timer stays',
  );
  t.same(
    (await h.d.request('GET', '/agents/deleter/loops')).body.loops.map((l: any) => l.name),
    ['main'],
  );
  t.same((await h.d.request('GET', '/agents/deleter/config')).body.config.loops, []);
  t.equal((await h.d.request('GET', '/agents/deleter/loops/scratch')).status, 404);
});
