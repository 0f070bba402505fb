/**
 * Run control (interrupt, abort, display state) and failure isolation, through the real providers
 * extension and a fake OpenAI Chat Completions server whose replies each test scripts.
 */
import t from 'tap';
import { endsTurn, runtimeHarness } from './fixtures/runtime/harness.js';
import { Gate, ScriptedModel } from './fixtures/runtime/scripted-model.js';

t.test('interrupt: false when idle, stops the running turn, keeps queued chats', async (t) => {
  const h = await runtimeHarness(t, { wire: true });
  const id = await h.agent();
  const idle = await h.d.request('POST', `/agents/${id}/interrupt`);
  t.same(idle.body, { success: true, interrupted: false, loop: 'main' });
  h.model.push({ hang: true }, { text: 'second answer' });
  const first = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'one' })).body.turnId;
  await h.modelCalls(1);
  const res = await h.d.request('POST', `/agents/${id}/interrupt`, { loop: 'main' });
  t.same(res.body, { success: true, interrupted: true, loop: 'main' });
  const second = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'two' })).body.turnId;
  t.equal(((await h.ended(first)).payload as any).stop_reason, 'interrupted');
  await h.fake!.chatRequests()[0]!.done;
  t.equal(h.fake!.chatRequests()[0]!.clientAborted, true, 'the interrupted HTTP request was cancelled');
  const next = await h.ended(second);
  t.equal(next.event_type, 'turn.completed');
  t.equal((next.payload as any).text, 'second answer');
  t.equal((await h.d.request('POST', `/agents/${id}/interrupt?loop=nope`)).status, 404);
});

t.test('abort: running turn errors, queued chats discarded with a notice, loop stopped until reload', async (t) => {
  const h = await runtimeHarness(t, { wire: true });
  const id = await h.agent({ loops: [{ name: 'side', goal: 'g', enabled: true }] });
  // Held before its model call: the chats below queue behind it (a chat turn absorbs, never interrupted).
  const gate = h.holdTurns();
  const running = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'one' })).body.turnId;
  await h.waitFor((e) => e.event_type === 'turn.started' && e.turn_id === running);
  const queued = [];
  for (const text of ['two', 'three']) queued.push((await h.d.request('POST', `/agents/${id}/chat`, { text })).body.turnId);
  const res = await h.d.request('POST', `/agents/${id}/abort`);
  t.same(res.body, { success: true });
  const discarded = await h.waitFor((e) => e.event_type === 'chat.discarded');
  t.same(discarded.payload, { turn_ids: queued, reason: 'abort' });
  gate.release();
  const end = await h.ended(running);
  t.equal(end.event_type, 'agent.error');
  t.equal((end.payload as any).code, 'aborted');
  await h.waitFor((e) => e.event_type === 'agent.state.changed' && (e.payload as any).state === 'stopped');
  const rows = (await h.d.request('GET', `/agents/${id}/chat`)).body.llmMessages;
  const notice = rows.find((m: any) => m.role === 'system');
  t.match(notice.content, /aborted/);
  t.match(notice.content, queued[0]);
  t.equal((await h.d.request('GET', `/agents/${id}/status`)).body.runtimeState, 'stopped');
  t.equal((await h.d.request('POST', `/agents/${id}/abort`)).status, 409, 'already stopped');
  t.equal((await h.d.request('POST', `/agents/${id}/chat`, { text: 'x' })).status, 409, 'no further turns');
  t.equal((await h.d.request('POST', `/agents/${id}/interrupt`)).status, 409, 'interrupt on a stopped loop');
  t.equal((await h.d.request('POST', `/agents/${id}/trigger`, { type: 'timer', data: null })).status, 409);
  // Other loops are untouched; a loop never woken has no executor to abort.
  t.equal((await h.d.request('POST', `/agents/${id}/abort?loop=side`)).status, 409);
  t.equal((await h.d.request('POST', `/agents/${id}/abort`, { loop: 'nope' })).status, 404);
  const side = await h.d.request('POST', `/agents/${id}/chat?loop=side`, { text: 'still alive' });
  t.equal((await h.ended(side.body.turnId)).event_type, 'turn.completed');
  const echoed = await h.d.request('POST', `/agents/${id}/abort`, { loop: 'side' });
  t.same(echoed.body, { success: true, loop: 'side' });
});

t.test('a provider failure ends the turn in agent.error, logs it, and the next chat recovers', async (t) => {
  const h = await runtimeHarness(t, { wire: true });
  const id = await h.agent();
  h.model.push({ error: { code: 'upstream_error', message: 'provider said 500', status: 500 } }, { text: 'fine again' });
  const failed = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'one' })).body.turnId;
  const end = await h.ended(failed);
  t.equal(end.event_type, 'agent.error');
  t.match(end.payload, { code: 'upstream_error', status: 500, turn_id: failed, absorbed_turn_ids: [] });
  t.equal((await h.d.request('GET', `/agents/${id}/status`)).body.runtimeState, 'error');
  t.equal((await h.d.request('POST', `/agents/${id}/interrupt`)).status, 409, 'interrupt on an errored loop');
  const logs = (await h.d.request('GET', `/agents/${id}/logs`)).body.logs;
  t.ok(logs.some((l: any) => l.level === 'error' && /provider said 500/.test(l.message)), 'logged to agt_logs');
  const ok = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'two' })).body.turnId;
  t.equal((await h.ended(ok)).event_type, 'turn.completed');
  t.equal((await h.d.request('GET', `/agents/${id}/status`)).body.runtimeState, 'idle');
});

t.test('no model provider loaded: the turn ends in agent.error unavailable', async (t) => {
  const h = await runtimeHarness(t, { noModel: true });
  const id = await h.agent();
  const turnId = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'hi' })).body.turnId;
  const end = await h.ended(turnId);
  t.equal(end.event_type, 'agent.error');
  t.equal((end.payload as any).code, 'unavailable');
});

t.test('a crash in one agent while another completes its turn', async (t) => {
  const h = await runtimeHarness(t, { wire: true });
  // The broken agent's model client has a bug (it throws); the healthy one talks to the server.
  const buggy = new ScriptedModel('buggy').push({ throws: 'kaboom: a bug in the client' });
  h.d.daemon.kernel.contributions.forExtension('test-buggy-client').modelClients(buggy);
  const broken = await h.agent({ model: { provider: 'buggy', model_id: 'explodes' } });
  const healthy = await h.agent({ model: { provider: 'local', model_id: 'fine' } });
  const gate = new Gate();
  h.model.push({ gate, then: { text: 'all good' } });
  const good = (await h.d.request('POST', `/agents/${healthy}/chat`, { text: 'hi' })).body.turnId;
  await h.waitFor((e) => e.event_type === 'turn.started' && e.turn_id === good);
  const bad = (await h.d.request('POST', `/agents/${broken}/chat`, { text: 'hi' })).body.turnId;
  const badEnd = await h.ended(bad);
  t.equal(badEnd.event_type, 'agent.error');
  t.equal((badEnd.payload as any).code, 'internal_error');
  gate.release();
  const goodEnd = await h.ended(good);
  t.equal(goodEnd.event_type, 'turn.completed');
  t.equal((goodEnd.payload as any).text, 'all good');
  t.equal((await h.d.request('GET', '/health')).status, 200, 'the daemon is still up');
  const logs = (await h.d.request('GET', `/agents/${broken}/logs`)).body.logs;
  t.ok(logs.some((l: any) => /kaboom/.test(l.message)));
});

t.test('display state: not persisted; off discards queued chats and interrupts the running turn', async (t) => {
  const h = await runtimeHarness(t, { wire: true });
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
  const queued = (await h.d.request('POST', `/agents/${id}/trigger`, { type: 'inbox', data: { text: 'hello' } })).body.turnId;
  await h.d.request('POST', `/agents/${id}/state`, { state: 'off' });
  const discarded = await h.waitFor((e) => e.event_type === 'chat.discarded');
  t.same(discarded.payload, { turn_ids: [queued], reason: 'off' });
  const end = await h.ended(running);
  t.equal((end.payload as any).stop_reason, 'off');
  const change = h.of('agent.state.changed', id).find((e) => (e.payload as any).state === 'off')!;
  t.same(change.payload, { state: 'off', previous: 'hibernate' });
  // A chat sent directly still runs while off (the owner asked for it).
  const direct = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'three' })).body.turnId;
  t.equal((await h.ended(direct)).event_type, 'turn.completed');
});

t.test('off and unload discard a queued chat: chat.discarded names its turnId', async (t) => {
  const h = await runtimeHarness(t, { wire: true });
  for (const how of ['off', 'unload'] as const) {
    const id = await h.agent();
    // The running chat turn is held before its model call, so the next chat queues (it would be absorbed).
    const gate = h.holdTurns();
    const running = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'one' })).body.turnId;
    await h.waitFor((e) => e.event_type === 'turn.started' && e.turn_id === running);
    const queued = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'two' })).body.turnId;
    const done = how === 'off' ? h.d.request('POST', `/agents/${id}/state`, { state: 'off' }) : h.d.request('POST', `/agents/${id}/unload`);
    const discarded = await h.waitFor((e) => e.event_type === 'chat.discarded' && e.agent_id === id);
    t.same(discarded.payload, { turn_ids: [queued], reason: how }, `${how} discards the queued chat`);
    t.equal(discarded.loop, undefined, 'in main');
    gate.release();
    t.equal((await done).status, 200);
    const end = await h.ended(running);
    t.equal(end.event_type, 'turn.completed');
    t.equal((end.payload as any).stop_reason, how === 'off' ? 'off' : 'end', how === 'off' ? 'off stops the running turn' : 'unload lets it finish within its grace');
    t.same((end.payload as any).absorbed_turn_ids, [], 'the discarded chat was not absorbed');
    t.equal(h.events.filter((e) => endsTurn(e, queued)).length, 1, 'its turn id ended exactly once');
  }
});
