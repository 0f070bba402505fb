/**
 * Built-in tools, approvals and asks on the built daemon, with a fake OpenAI Chat Completions server
 * whose replies each test scripts (tool calls arrive as streamed fragments; tool results go back as
 * `tool` messages). One daemon for the file, a fresh agent per test. Tools that fail (contributed in
 * process) are in runtime-tools-internals.test.ts.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { wireDaemon, type WireDaemon } from './helpers/wire-daemon.js';

let h: WireDaemon;
/** A local server for sys_fetch (`host:port`). */
let base: string;
t.before(async () => {
  const server = createServer((req, res) => {
    if (req.url === '/big') return res.end('x'.repeat(400 * 1024));
    res.setHeader('content-type', 'text/plain');
    res.end(`you asked for ${req.url}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The test server is on loopback: only a host the owner allows (the ceiling in settings, and the file
  // asking for it) is reachable (test/security-fetch.test.ts, test/trust-config-ceiling.test.ts).
  h = await wireDaemon(t, { settings: { agentCeiling: { fetchAllowHosts: [base.slice('http://'.length)] } } });
});

/** The tool results the model saw on its last call, by tool name. */
function lastToolResults(h: WireDaemon): Array<{ name: string; content: string; isError?: boolean }> {
  const messages = h.model.calls.at(-1)!.messages;
  return messages.filter((m) => m.role === 'tool') as never;
}

t.test('restricted tool: approval task, approve with modified args, deny with a reason', async (t) => {
  const id = await h.agent({ tools: [{ name: 'fs_write', enabled: true, restricted: true }] });
  const read = (path: string) => h.d.request('GET', `/agents/${id}/files/content?path=${encodeURIComponent(path)}`);
  h.model.push(
    { toolCalls: [{ name: 'fs_write', args: { path: 'notes/a.txt', content: 'original' } }] },
    { text: 'written' },
  );
  const turn = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'write it' })).body.turnId;
  const requested = await h.waitFor((e) => e.event_type === 'hil.requested' && e.turn_id === turn);
  const { taskId } = requested.payload as any;
  t.match(requested.payload, {
    kind: 'approval',
    tool: 'fs_write',
    args: { path: 'notes/a.txt', content: 'original' },
  });
  t.equal(requested.turn_id, turn);
  t.equal(h.of('task.created', id)[0]!.payload.status, 'pending_approval');
  await h.waitFor(
    (e) =>
      e.event_type === 'agent.state.changed' && e.agent_id === id && (e.payload as any).state === 'awaiting_approval',
  );
  t.equal((await h.d.request('GET', `/agents/${id}/status`)).body.runtimeState, 'awaiting_approval');
  const listed = await h.d.request('GET', `/agents/${id}/tasks?status=pending_approval`);
  t.equal(listed.body.tasks.length, 1);
  t.equal((await read('notes/a.txt')).status, 404, 'nothing ran before approval');

  const resolved = await h.d.request('POST', `/agents/${id}/tasks/${taskId}/resolve`, {
    action: 'approve',
    modifiedArgs: { path: 'notes/a.txt', content: 'edited by owner' },
  });
  t.equal(resolved.status, 200);
  t.equal((await h.ended(turn)).event_type, 'turn.completed');
  t.equal((await read('notes/a.txt')).body.content, 'edited by owner');
  t.match((await h.waitFor((e) => e.event_type === 'hil.resolved' && e.agent_id === id)).payload, {
    kind: 'approval',
    id: taskId,
    resolution: 'approved',
  });
  const task = (await h.d.request('GET', `/agents/${id}/tasks/${taskId}`)).body;
  t.match(task, { status: 'completed', resolution: { action: 'approve' }, tool: 'fs_write' });
  t.equal(
    (await h.d.request('POST', `/agents/${id}/tasks/${taskId}/resolve`, { action: 'deny' })).status,
    409,
    'no longer pending',
  );
  t.equal((await h.d.request('POST', `/agents/${id}/tasks/nope/resolve`, { action: 'deny' })).status, 404);
  t.equal((await h.d.request('GET', `/agents/${id}/tasks/nope`)).status, 404);

  h.model.push(
    { toolCalls: [{ name: 'fs_write', args: { path: 'b.txt', content: 'x' } }] },
    { text: 'ok, not writing' },
  );
  const turn2 = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'again' })).body.turnId;
  const second = await h.waitFor((e) => e.event_type === 'hil.requested' && e.turn_id === turn2);
  await h.d.request('POST', `/agents/${id}/tasks/${(second.payload as any).taskId}/resolve`, {
    action: 'deny',
    reason: 'not now',
  });
  await h.ended(turn2);
  const result = lastToolResults(h).at(-1)!;
  t.match(result.content, /denied.*not now/);
  t.equal(result.isError, true);
  t.equal((await read('b.txt')).status, 404);
  t.equal((await h.d.request('GET', `/agents/${id}/tasks/${(second.payload as any).taskId}`)).body.status, 'denied');
});

t.test('an interrupted approval is cancelled', async (t) => {
  const id = await h.agent({ tools: [{ name: 'fs_delete', enabled: true, restricted: true }] });
  h.model.push({ toolCalls: [{ name: 'fs_delete', args: { path: 'x' } }] });
  const turn = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'delete' })).body.turnId;
  const requested = await h.waitFor((e) => e.event_type === 'hil.requested' && e.turn_id === turn);
  await h.d.request('POST', `/agents/${id}/interrupt`);
  t.equal(((await h.ended(turn)).payload as any).stop_reason, 'interrupted');
  t.equal(
    (await h.d.request('GET', `/agents/${id}/tasks/${(requested.payload as any).taskId}`)).body.status,
    'cancelled',
  );
});

t.test('ask waits for the owner; suspend prompts are answered', async (t) => {
  const id = await h.agent();
  h.model.push({ toolCalls: [{ name: 'ask', args: { question: 'Which colour?' } }] }, { text: 'blue it is' });
  const turn = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'pick a colour' })).body.turnId;
  const requested = await h.waitFor((e) => e.event_type === 'hil.requested' && e.turn_id === turn);
  t.match(requested.payload, { kind: 'ask', question: 'Which colour?' });
  await h.waitFor(
    (e) => e.event_type === 'agent.state.changed' && e.agent_id === id && (e.payload as any).state === 'awaiting_ask',
  );
  const asks = (await h.d.request('GET', `/agents/${id}/asks`)).body.asks;
  t.equal(asks.length, 1);
  t.equal((await h.d.request('POST', `/agents/${id}/asks/nope/respond`, { answer: 'x' })).status, 404);
  await h.d.request('POST', `/agents/${id}/asks/${asks[0].requestId}/respond`, { answer: 'blue' });
  t.equal((await h.ended(turn)).event_type, 'turn.completed');
  t.match(lastToolResults(h)[0]!.content, /The owner answered: blue/);
  t.same((await h.d.request('GET', `/agents/${id}/asks`)).body.asks, []);

  t.equal(
    (await h.d.request('POST', `/agents/${id}/suspend/respond`, { resume: true })).status,
    409,
    'nothing suspended',
  );
  h.model.push(
    { toolCalls: [{ name: 'sys_set_state', args: { state: 'suspended', reason: 'need a break' } }] },
    { text: 'back' },
  );
  const turn2 = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'rest' })).body.turnId;
  const prompt = await h.waitFor(
    (e) => e.event_type === 'hil.requested' && e.turn_id === turn2 && (e.payload as any).kind === 'suspend',
  );
  t.match(prompt.payload, { reason: 'need a break' });
  await h.waitFor(
    (e) =>
      e.event_type === 'agent.state.changed' &&
      e.agent_id === id &&
      (e.payload as any).state === 'suspended' &&
      e.loop === undefined &&
      (e.payload as any).loop === 'main',
  );
  const answer = await h.d.request('POST', `/agents/${id}/suspend/respond`, { resume: true });
  t.match(answer.body, { success: true, resumed: true, requestId: (prompt.payload as any).requestId });
  await h.ended(turn2);
  t.match(lastToolResults(h).at(-1)!.content, /resumed/);
});

t.test('waits for the owner are not cut off by tool_timeout_ms', async (t) => {
  const id = await h.agent({ limits: { tool_timeout_ms: 100 } });
  const pause = () => new Promise((resolve) => setTimeout(resolve, 350)); // several tool time limits
  h.model.push({ toolCalls: [{ name: 'ask', args: { question: 'Still there?' } }] }, { text: 'thanks' });
  const turn = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'ask me' })).body.turnId;
  const asked = await h.waitFor(
    (e) => e.event_type === 'hil.requested' && e.turn_id === turn && (e.payload as any).kind === 'ask',
  );
  await pause();
  const answered = await h.d.request('POST', `/agents/${id}/asks/${(asked.payload as any).requestId}/respond`, {
    answer: 'yes',
  });
  t.equal(answered.status, 200, 'the ask is still pending after the tool time limit');
  t.equal((await h.ended(turn)).event_type, 'turn.completed');
  t.match(lastToolResults(h)[0]!.content, /The owner answered: yes/);

  h.model.push(
    { toolCalls: [{ name: 'sys_set_state', args: { state: 'suspended', reason: 'nap' } }] },
    { text: 'awake' },
  );
  const turn2 = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'rest' })).body.turnId;
  await h.waitFor(
    (e) => e.event_type === 'hil.requested' && e.turn_id === turn2 && (e.payload as any).kind === 'suspend',
  );
  await pause();
  t.match((await h.d.request('POST', `/agents/${id}/suspend/respond`, { resume: true })).body, {
    success: true,
    resumed: true,
  });
  await h.ended(turn2);
  t.match(lastToolResults(h).at(-1)!.content, /resumed/);
});

t.test('enabled, visible and defaults decide what the model sees', async (t) => {
  const id = await h.agent({
    tools: [
      { name: 'fs_delete', enabled: false },
      { name: 'fs_list', enabled: true, visible: false },
    ],
  });
  h.model.push({ toolCalls: [{ name: 'fs_list' }] }, { text: 'done' });
  await h.ended((await h.d.request('POST', `/agents/${id}/chat`, { text: 'x' })).body.turnId);
  const offered = h.model.calls.at(-2)!.tools;
  t.ok(
    offered.includes('fs_read') && offered.includes('ask') && offered.includes('db_query'),
    'undeclared built-ins are on',
  );
  t.notOk(offered.includes('fs_delete'), 'declared disabled');
  t.notOk(offered.includes('fs_list'), 'invisible');
  t.notOk(offered.includes('sys_update_config'), 'off unless declared');
  t.match(
    lastToolResults(h)[0]!.content,
    /Unknown or disabled tool: fs_list/,
    'an invisible tool cannot be called by the model',
  );
  const listed = (await h.d.request('GET', `/agents/${id}/tools`)).body.tools;
  const names = listed.map((x: any) => x.name);
  for (const name of [
    'ask',
    'say',
    'fs_read',
    'fs_write',
    'fs_list',
    'fs_delete',
    'db_query',
    'db_execute',
    'msg_send',
    'msg_list',
    'msg_read',
    'sys_get_meta',
    'sys_set_meta',
    'sys_delete_meta',
    'sys_set_timer',
    'sys_list_timers',
    'sys_delete_timer',
    'sys_set_state',
    'sys_get_config',
    'sys_update_config',
    'sys_fetch',
    'loop_send',
    'loop_list',
    'loop_compact',
    'loop_clear',
  ]) {
    if (!names.includes(name)) t.fail(`built-in ${name} missing from GET tools`);
  }
  t.match(
    listed.find((x: any) => x.name === 'db_query'),
    { source: 'builtin', schema: { type: 'object', properties: { sql: { type: 'string' } } } },
  );
});

t.test('files, tables, messages, meta and timers through the tools', async (t) => {
  const id = await h.agent({ tools: [{ name: 'sys_update_config', enabled: true }], locked_fields: ['instructions'] });
  h.model.push(
    {
      toolCalls: [
        {
          name: 'db_execute',
          args: { sql: 'CREATE TABLE local_notes (id INTEGER PRIMARY KEY AUTOINCREMENT, body TEXT)' },
        },
        { name: 'db_execute', args: { sql: 'INSERT INTO local_notes (body) VALUES (?)', params: ['hello'] } },
        { name: 'db_query', args: { sql: 'SELECT body FROM local_notes' } },
        { name: 'db_query', args: { sql: 'SELECT * FROM agt_loop' } },
        { name: 'db_query', args: { sql: 'SELECT * FROM local_notes, agt_meta' } },
        { name: 'fs_write', args: { path: 'a/b.txt', content: 'file body' } },
        { name: 'fs_read', args: { path: 'a/b.txt' } },
        { name: 'msg_send', args: { text: 'hi there', channel: 'mesh', recipient: 'bob' } },
        { name: 'sys_set_meta', args: { key: 'mood', value: 'good' } },
        { name: 'sys_set_timer', args: { mode: 'once_delay', delay_ms: 3_600_000, payload: 'later' } },
        { name: 'sys_update_config', args: { patch: { instructions: 'be evil' } } },
        { name: 'sys_update_config', args: { patch: { description: 'updated by itself' } } },
      ],
    },
    { text: 'all done' },
  );
  await h.ended((await h.d.request('POST', `/agents/${id}/chat`, { text: 'work' })).body.turnId);
  const r = lastToolResults(h).map((x) => x.content);
  t.match(r[2], /"body": "hello"/);
  t.match(r[3], /local_\* tables/);
  t.match(r[4], /agt_|local_\*/);
  t.equal(r[6], 'file body');
  t.match(r[7], /queued message 1 to mesh/);
  t.match(r[10], /owner lock: instructions is locked/);
  t.match(r[11], /updated description/);
  const outbox = (await h.d.request('GET', `/agents/${id}/outbox`)).body.messages;
  t.match(outbox[0], { channel: 'mesh', recipient: 'bob', text: 'hi there' });
  // Queued by the tool; the shipped mesh extension may already have tried it (no peer "bob": failed).
  t.match(outbox[0].status, /^(queued|failed)$/);
  t.equal(h.of('outbox.queued', id).length, 1);
  t.match((await h.d.request('GET', `/agents/${id}/meta`)).body.entries, [{ key: 'mood', value: 'good' }]);
  t.match((await h.d.request('GET', `/agents/${id}/timers`)).body.timers, [{ payload: 'later', mode: 'once_delay' }]);
  const config = (await h.d.request('GET', `/agents/${id}/config`)).body.config;
  t.equal(config.description, 'updated by itself');
  t.equal(config.instructions, 'Be brief.');
});

t.test('sys_fetch does real HTTP with a size cap', async (t) => {
  const id = await h.agent({ security: { fetch_allow_hosts: [base.slice('http://'.length)] } });
  h.model.push(
    {
      toolCalls: [
        { name: 'sys_fetch', args: { url: `${base}/hello` } },
        { name: 'sys_fetch', args: { url: `${base}/big` } },
        { name: 'sys_fetch', args: { url: 'file:///etc/passwd' } },
      ],
    },
    { text: 'fetched' },
  );
  await h.ended((await h.d.request('POST', `/agents/${id}/chat`, { text: 'fetch' })).body.turnId);
  const [small, big, file] = lastToolResults(h);
  t.equal(
    small!.content,
    'status: 200\ncontent-type: text/plain\ncontent-length: 20\ntruncated: false\n\nyou asked for /hello',
  );
  t.match(big!.content, /^status: 200\n[\s\S]*truncated: true\n\n/);
  t.equal(big!.content.split('\n\n')[1]!.length, 24 * 1024, 'body cut at the cap');
  t.match(file!.content, /only http and https/);
});
