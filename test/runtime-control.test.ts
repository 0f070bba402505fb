/**
 * Run control (interrupt, display state) and failures on the built daemon, with a fake OpenAI Chat
 * Completions server whose replies each test scripts. One daemon for the file, a fresh agent per test.
 * Abort and off/unload with a turn held before its model call, and a model client with a bug (both only
 * in process), are in runtime-control-internals.test.ts.
 */
import t from 'tap';
import { modelCalls, wireDaemon, type WireDaemon } from './helpers/wire-daemon.js';

let h: WireDaemon;
t.before(async () => {
  h = await wireDaemon(t);
});

t.test('interrupt: false when idle, stops the running turn, keeps queued chats', async (t) => {
  const id = await h.agent();
  const idle = await h.d.request('POST', `/agents/${id}/interrupt`);
  t.same(idle.body, { success: true, interrupted: false, loop: 'main' });
  h.model.push({ hang: true }, { text: 'second answer' });
  const calls = h.fake.chatRequests().length;
  const first = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'one' })).body.turnId;
  await modelCalls(h, calls + 1);
  const res = await h.d.request('POST', `/agents/${id}/interrupt`, { loop: 'main' });
  t.same(res.body, { success: true, interrupted: true, loop: 'main' });
  const second = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'two' })).body.turnId;
  t.equal(((await h.ended(first)).payload as any).stop_reason, 'interrupted');
  await h.fake.chatRequests()[calls]!.done;
  t.equal(h.fake.chatRequests()[calls]!.clientAborted, true, 'the interrupted HTTP request was cancelled');
  const next = await h.ended(second);
  t.equal(next.event_type, 'turn.completed');
  t.equal((next.payload as any).text, 'second answer');
  t.equal((await h.d.request('POST', `/agents/${id}/interrupt?loop=nope`)).status, 404);
});

t.test('a provider failure ends the turn in agent.error, logs it, and the next chat recovers', async (t) => {
  const id = await h.agent();
  h.model.push(
    { error: { code: 'upstream_error', message: 'provider said 500', status: 500 } },
    { text: 'fine again' },
  );
  const failed = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'one' })).body.turnId;
  const end = await h.ended(failed);
  t.equal(end.event_type, 'agent.error');
  t.match(end.payload, { code: 'upstream_error', status: 500, turn_id: failed, absorbed_turn_ids: [] });
  t.equal((await h.d.request('GET', `/agents/${id}/status`)).body.runtimeState, 'error');
  t.equal((await h.d.request('POST', `/agents/${id}/interrupt`)).status, 409, 'interrupt on an errored loop');
  const logs = (await h.d.request('GET', `/agents/${id}/logs`)).body.logs;
  t.ok(
    logs.some((l: any) => l.level === 'error' && /provider said 500/.test(l.message)),
    'logged to agt_logs',
  );
  const ok = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'two' })).body.turnId;
  t.equal((await h.ended(ok)).event_type, 'turn.completed');
  t.equal((await h.d.request('GET', `/agents/${id}/status`)).body.runtimeState, 'idle');
});

t.test('no model provider for the agent: the turn ends in agent.error unavailable', async (t) => {
  const id = await h.agent({ model: { provider: 'not-configured', model_id: 'any' } });
  const turnId = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'hi' })).body.turnId;
  const end = await h.ended(turnId);
  t.equal(end.event_type, 'agent.error');
  t.equal((end.payload as any).code, 'unavailable');
});

t.test('display state: not persisted; off discards queued chats and interrupts the running turn', async (t) => {
  const id = await h.agent();
  const res = await h.d.request('POST', `/agents/${id}/state`, { state: 'hibernate' });
  t.same(res.body, { agentId: id, success: true, state: 'hibernate' });
  t.equal((await h.d.request('GET', `/agents/${id}/status`)).body.runtimeState, 'hibernate');
  t.equal((await h.d.request('GET', `/agents/${id}/config`)).body.config.state, 'idle', 'not persisted');
  t.equal((await h.d.request('POST', `/agents/${id}/state`, { state: 'sleepy' })).status, 400);
  h.model.push({ hang: true });
  const running = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'one' })).body.turnId;
  await h.waitFor((e) => e.event_type === 'turn.started' && e.turn_id === running);
  // A queued trigger turn (triggers queue without interrupting) is discarded by off.
  const queued = (await h.d.request('POST', `/agents/${id}/trigger`, { type: 'inbox', data: { text: 'hello' } })).body
    .turnId;
  await h.d.request('POST', `/agents/${id}/state`, { state: 'off' });
  const discarded = await h.waitFor((e) => e.event_type === 'chat.discarded' && e.agent_id === id);
  t.same(discarded.payload, { turn_ids: [queued], reason: 'off' });
  const end = await h.ended(running);
  t.equal((end.payload as any).stop_reason, 'off');
  const change = h.of('agent.state.changed', id).find((e) => (e.payload as any).state === 'off')!;
  t.same(change.payload, { state: 'off', previous: 'hibernate' });
  // A chat sent directly still runs while off (the owner asked for it).
  const direct = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'three' })).body.turnId;
  t.equal((await h.ended(direct)).event_type, 'turn.completed');
});
