/**
 * Chat rules that need the runtime's insides: chats queued while a turn is held before its model call
 * (listing its tools) are absorbed by the oldest, a burst arriving over several event-loop turns joins
 * the turn of its first chat, and a loop's queue bound, filled through the kernel's
 * runtime (1000 real turns would take far too long).
 */
import { setImmediate as nextLoopTurn } from 'node:timers/promises';
import t from 'tap';
import { runtimeHarness } from './fixtures/runtime/harness.js';

t.test('a busy loop: the first queued chat interrupts, the oldest runs next and absorbs the rest', async (t) => {
  const h = await runtimeHarness(t, { wire: true });
  const id = await h.agent();
  h.model.push({ hang: true });
  const first = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'one' })).body.turnId;
  await h.waitFor(
    (e) => e.event_type === 'agent.state.changed' && e.turn_id === first && (e.payload as any).state === 'thinking',
  );
  await h.modelCalls(1);
  // The next turn is held before its first model call, so the chats after 'two' are queued by then.
  const gate = h.holdTurns();
  const queued = [];
  for (const text of ['two', 'three', 'four'])
    queued.push((await h.d.request('POST', `/agents/${id}/chat`, { text })).body.turnId);
  gate.release();
  const firstEnd = await h.ended(first);
  t.equal(firstEnd.event_type, 'turn.completed');
  t.equal((firstEnd.payload as any).stop_reason, 'interrupted');
  const next = await h.ended(queued[0]);
  t.same((next.payload as any).absorbed_turn_ids, queued.slice(1));
  const delivered = h.of('chat.delivered', id);
  t.equal(delivered.length, 1);
  t.same(delivered[0]!.payload.turn_ids, queued.slice(1));
  t.equal(delivered[0]!.turn_id, queued[0]);
  // The second turn's only model call saw every queued chat as consecutive user rows.
  const seen = h.model.calls[1]!.messages.map((m) => m.content);
  t.same(seen, ['one', 'two', 'three', 'four']);
});

t.test('a burst arriving over several event-loop turns joins the turn of its first chat: one model call', async (t) => {
  const h = await runtimeHarness(t, { wire: true });
  const id = await h.agent();
  const runtime = h.service.forRequest(id);
  // Each chat after the first is accepted an event-loop turn after the one before (as a burst answered
  // a slice at a time brings them): the first chat's turn waits while they keep coming.
  const accepted = [runtime.chatGrouped('main', 'one')];
  for (const text of ['two', 'three', 'four', 'five']) {
    await nextLoopTurn();
    accepted.push(runtime.chatGrouped('main', text));
  }
  const turnIds = await Promise.all(accepted);
  const end = await h.ended(turnIds[0]!);
  t.equal(end.event_type, 'turn.completed');
  t.equal((end.payload as any).stop_reason, 'end', 'not interrupted');
  t.same((end.payload as any).absorbed_turn_ids, turnIds.slice(1));
  t.equal(h.model.calls.length, 1, 'one model call for the burst');
  t.same(
    h.model.calls[0]!.messages.map((m) => m.content),
    ['one', 'two', 'three', 'four', 'five'],
  );
  t.equal(h.of('turn.started', id).length, 1);
});

t.test(
  'a loop queues at most 1000 turns: chats and dispatches beyond get 409, trigger work is dropped with a warning',
  async (t) => {
    const h = await runtimeHarness(t, { wire: true });
    const id = await h.agent();
    h.model.push({ hang: true });
    const busy = (await h.d.request('POST', `/agents/${id}/trigger`, { type: 'timer', data: null })).body.turnId;
    await h.waitFor((e) => e.event_type === 'turn.started' && e.turn_id === busy);
    const runtime = h.service.forRequest(id);
    for (let i = 0; i < 1000; i++)
      runtime
        .loop('main')
        .enqueue({ kind: 'trigger', turnId: `fill-${i}`, trigger: 'test', events: [], count: 0, at: 0 });
    const chat = await h.d.request('POST', `/agents/${id}/chat`, { text: 'one too many' });
    t.equal(chat.status, 409);
    t.equal(chat.body.code, 'conflict');
    t.match(chat.body.error, /1000 queued turns/);
    t.equal((await h.d.request('POST', `/agents/${id}/trigger`, { type: 'inbox', data: null })).status, 409);
    runtime.fire('on_inbox', { text: 'hello' }, {}, [{ scope: 'agent' }]);
    const logs = (await h.d.request('GET', `/agents/${id}/logs`)).body.logs;
    t.ok(
      logs.some(
        (l: any) => l.level === 'warn' && /on_inbox could not wake loop main: .*1000 queued turns/.test(l.message),
      ),
      'dropped trigger work is logged',
    );
    t.equal(runtime.loop('main').queuedTurnIds.length, 1000);
    await h.d.request('POST', `/agents/${id}/abort`);
    const discarded = await h.waitFor((e) => e.event_type === 'chat.discarded');
    t.equal((discarded.payload as any).turn_ids.length, 1000);
  },
);
