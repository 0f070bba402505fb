/**
 * Run control that needs the runtime's insides: turns held before their model call (while they list
 * their tools, so later chats queue instead of interrupting) for abort and off/unload, and a model
 * client with a bug (a throw inside the client, which no server can produce) next to a healthy agent.
 */
import t from 'tap';
import { endsTurn, runtimeHarness } from './fixtures/runtime/harness.js';
import { Gate, ScriptedModel } from './fixtures/runtime/scripted-model.js';

t.test('abort: running turn errors, queued chats discarded with a notice, loop stopped until reload', async (t) => {
  const h = await runtimeHarness(t, { wire: true });
  const id = await h.agent({ loops: [{ name: 'side', goal: 'g', enabled: true }] });
  // Held before its model call: the chats below queue behind it (a chat turn absorbs, never interrupted).
  const gate = h.holdTurns();
  const running = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'one' })).body.turnId;
  await h.waitFor((e) => e.event_type === 'turn.started' && e.turn_id === running);
  const queued = [];
  for (const text of ['two', 'three'])
    queued.push((await h.d.request('POST', `/agents/${id}/chat`, { text })).body.turnId);
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

t.test('off and unload discard a queued chat: chat.discarded names its turnId', async (t) => {
  const h = await runtimeHarness(t, { wire: true });
  for (const how of ['off', 'unload'] as const) {
    const id = await h.agent();
    // The running chat turn is held before its model call, so the next chat queues (it would be absorbed).
    const gate = h.holdTurns();
    const running = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'one' })).body.turnId;
    await h.waitFor((e) => e.event_type === 'turn.started' && e.turn_id === running);
    const queued = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'two' })).body.turnId;
    const done =
      how === 'off'
        ? h.d.request('POST', `/agents/${id}/state`, { state: 'off' })
        : h.d.request('POST', `/agents/${id}/unload`);
    const discarded = await h.waitFor((e) => e.event_type === 'chat.discarded' && e.agent_id === id);
    t.same(discarded.payload, { turn_ids: [queued], reason: how }, `${how} discards the queued chat`);
    t.equal(discarded.loop, undefined, 'in main');
    gate.release();
    t.equal((await done).status, 200);
    const end = await h.ended(running);
    t.equal(end.event_type, 'turn.completed');
    t.equal(
      (end.payload as any).stop_reason,
      how === 'off' ? 'off' : 'end',
      how === 'off' ? 'off stops the running turn' : 'unload lets it finish within its grace',
    );
    t.same((end.payload as any).absorbed_turn_ids, [], 'the discarded chat was not absorbed');
    t.equal(h.events.filter((e) => endsTurn(e, queued)).length, 1, 'its turn id ended exactly once');
  }
});
