/**
 * Chat rules 1-4 on the built daemon, with a fake OpenAI Chat Completions server whose replies each test
 * scripts (see test/fixtures/runtime/wire-model.ts). One daemon for the file, a fresh agent per test.
 * Absorbing chats queued while a turn lists its tools, and the queue bound (filled through the kernel),
 * are in runtime-chat-internals.test.ts.
 */
import t from 'tap';
import { join } from 'node:path';
import { AgentFile } from '../kernel/agents/agent-file.js';
import { IdempotencyKeyStore } from '../kernel/agents/stores/idempotency-store.js';
import { agentConfig } from './helpers/agent-file.js';
import { tempDir } from './helpers/daemon.js';
import { endsTurn, wireDaemon, type WireDaemon } from './helpers/wire-daemon.js';

let h: WireDaemon;
t.before(async () => {
  h = await wireDaemon(t);
});

t.test('a chat runs a turn: 202 at once, rows committed, events carry the turn id', async (t) => {
  const id = await h.agent({ instructions: 'Be brief.' });
  h.model.push({ text: 'Hello there' });
  const calls = h.model.calls.length;
  const res = await h.d.request('POST', `/agents/${id}/chat`, { text: 'hi' });
  t.equal(res.status, 202);
  t.equal(res.body.accepted, true);
  const turnId = res.body.turnId as string;
  const done = await h.ended(turnId);
  t.equal(done.event_type, 'turn.completed');
  t.same(done.payload, {
    turn_id: turnId,
    absorbed_turn_ids: [],
    text: 'Hello there',
    llm_calls: 1,
    tool_calls: 0,
    stop_reason: 'end',
  });
  t.equal(h.model.calls.length, calls + 1);
  t.equal(h.model.calls[calls]!.system, 'Be brief.');
  t.same(h.model.calls[calls]!.messages, [{ role: 'user', content: 'hi' }]);
  const turnEvents = h.log.events.filter((e) => e.turn_id === turnId).map((e) => e.event_type);
  for (const type of [
    'turn.started',
    'loop.appended',
    'llm.delta',
    'llm.completed',
    'turn.completed',
    'agent.state.changed',
  ])
    t.ok(turnEvents.includes(type as never), `${type} carries turn_id`);
  const completed = h.of('llm.completed', id)[0]!;
  t.same(
    completed.payload.usage,
    { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 },
    'usage as the server reported it',
  );
  t.match(completed.payload, { provider: 'local', model: 'test-model' });
  const states = h.of('agent.state.changed', id).map((e) => [e.payload.state, e.turn_id]);
  t.same(
    states,
    [
      ['thinking', turnId],
      ['idle', turnId],
    ],
    'the state changes of a turn, its end included, name the turn',
  );

  const history = await h.d.request('GET', `/agents/${id}/chat`);
  t.equal(history.status, 200);
  t.equal(history.body.total, 2);
  t.equal(history.body.earlierCount, 0);
  t.same(
    history.body.llmMessages.map((m: any) => [m.role, m.content]),
    [
      ['user', 'hi'],
      ['assistant', 'Hello there'],
    ],
  );
  const limited = await h.d.request('GET', `/agents/${id}/chat?limit=0`);
  t.equal(limited.body.llmMessages.length, 1, 'limit is clamped to at least 1');
  t.equal(limited.body.earlierCount, 1);
  const status = await h.d.request('GET', `/agents/${id}/status`);
  t.equal(status.body.loopCount, 2);
});

t.test('404 unknown loop and 409 disabled loop before anything is queued; ?loop= wins', async (t) => {
  const id = await h.agent({
    loops: [
      { name: 'side', goal: 'watch things', enabled: true },
      { name: 'dormant', goal: 'sleep', enabled: false },
    ],
  });
  const unknown = await h.d.request('POST', `/agents/${id}/chat`, { text: 'x', loop: 'nope' });
  t.equal(unknown.status, 404);
  t.equal(unknown.body.code, 'not_found');
  const disabled = await h.d.request('POST', `/agents/${id}/chat`, { text: 'x', loop: 'dormant' });
  t.equal(disabled.status, 409);
  t.equal(disabled.body.code, 'conflict');
  t.equal(h.of('turn.started', id).length, 0, 'nothing queued');
  const calls = h.model.calls.length;
  const res = await h.d.request('POST', `/agents/${id}/chat?loop=side`, { text: 'to side', loop: 'dormant' });
  t.equal(res.status, 202);
  const done = await h.ended(res.body.turnId);
  t.equal(done.loop, 'side');
  t.match(h.model.calls[calls]!.system, /inner loop "side".*\n.*watch things/);
  t.equal((await h.d.request('GET', `/agents/${id}/chat?loop=side`)).body.total, 2);
  t.equal(await h.d.request('GET', `/agents/${id}/chat`).then((r) => r.body), null, 'main has no history');
  const missing = await h.d.request('POST', `/agents/nobody/chat`, { text: 'x' });
  t.equal(missing.status, 404);
  const empty = await h.d.request('POST', `/agents/${id}/chat`, { text: '' });
  t.equal(empty.status, 400);
});

t.test('50 chats fired at one busy agent: every turnId ends exactly once', async (t) => {
  const id = await h.agent();
  h.model.push({ hang: true });
  h.model.fallback = { text: 'ok', delayMs: 5 };
  t.teardown(() => void (h.model.fallback = { text: 'ok' }));
  const busy = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'start' })).body.turnId;
  await h.waitFor((e) => e.event_type === 'turn.started' && e.turn_id === busy);
  const answers = await Promise.all(
    Array.from({ length: 50 }, (_, i) => h.d.request('POST', `/agents/${id}/chat`, { text: `m${i}` })),
  );
  t.ok(answers.every((a) => a.status === 202));
  const ids = [busy, ...answers.map((a) => a.body.turnId as string)];
  t.equal(new Set(ids).size, 51, 'distinct turn ids');
  await Promise.all(ids.map((turnId) => h.ended(turnId)));
  for (const turnId of ids) {
    const endings = h.log.events.filter((e) => endsTurn(e, turnId));
    if (endings.length !== 1) t.fail(`turn ${turnId} ended ${endings.length} times`);
  }
  t.equal(h.of('chat.discarded', id).length, 0, 'nothing was dropped');
  const users = (await h.d.request('GET', `/agents/${id}/chat?limit=500`)).body.llmMessages.filter(
    (m: any) => m.role === 'user',
  );
  t.equal(users.length, 51, 'every chat was written to the loop');
});

t.test('DELETE chat clears one loop and is refused mid-turn', async (t) => {
  const id = await h.agent({ loops: [{ name: 'side', goal: 'g', enabled: true }] });
  await h.ended((await h.d.request('POST', `/agents/${id}/chat`, { text: 'a' })).body.turnId);
  await h.ended((await h.d.request('POST', `/agents/${id}/chat?loop=side`, { text: 'b' })).body.turnId);
  const cleared = await h.d.request('DELETE', `/agents/${id}/chat`);
  t.same(cleared.body, { agentId: id, success: true, loop: 'main', removed: 2 });
  t.equal((await h.d.request('GET', `/agents/${id}/chat`)).body, null);
  t.equal((await h.d.request('GET', `/agents/${id}/chat?loop=side`)).body.total, 2, 'other loops untouched');
  h.model.push({ hang: true });
  const busy = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'c' })).body.turnId;
  await h.waitFor((e) => e.event_type === 'turn.started' && e.turn_id === busy);
  t.equal((await h.d.request('DELETE', `/agents/${id}/chat`)).status, 409);
  t.equal((await h.d.request('DELETE', `/agents/${id}/chat?loop=nope`)).status, 404);
});

t.test(
  'Idempotency-Key: a repeat answers the same 202 and queues nothing; another request with the key is 422',
  async (t) => {
    const id = await h.agent();
    const headers = { 'idempotency-key': 'retry-1' };
    const a = await h.d.request('POST', `/agents/${id}/chat`, { text: 'once' }, headers);
    const b = await h.d.request('POST', `/agents/${id}/chat`, { text: 'once' }, headers);
    t.equal(b.status, 202);
    t.same(b.body, a.body);
    const sameLoop = await h.d.request('POST', `/agents/${id}/chat?loop=main`, { text: 'once' }, headers);
    t.same(sameLoop.body, a.body, 'the loop named in the query or left to its default is the same request');
    await h.ended(a.body.turnId);
    t.equal(h.of('turn.started', id).length, 1);
    const reused = await h.d.request('POST', `/agents/${id}/chat`, { text: 'twice' }, headers);
    t.equal(reused.status, 422, 'the same key with another text');
    t.equal(reused.body.code, 'idempotency_key_reused');
    const c = await h.d.request('POST', `/agents/${id}/chat`, { text: 'again' }, { 'idempotency-key': 'retry-2' });
    t.not(c.body.turnId, a.body.turnId, 'another key is another turn');
    const trig = { event: { type: 'timer', data: null } };
    const t1 = await h.d.request('POST', `/agents/${id}/trigger`, trig, headers);
    t.equal(t1.status, 422, "keys are per agent, not per route: the chat's key on a trigger is another request");
    t.equal(t1.body.code, 'idempotency_key_reused');
    const t2 = await h.d.request('POST', `/agents/${id}/trigger`, trig, { 'idempotency-key': 'retry-3' });
    const t3 = await h.d.request('POST', `/agents/${id}/trigger`, trig, { 'idempotency-key': 'retry-3' });
    t.same(t3.body, t2.body, 'a repeated trigger answers the same 202');
    const t4 = await h.d.request(
      'POST',
      `/agents/${id}/trigger`,
      { event: { type: 'timer', data: { n: 1 } } },
      { 'idempotency-key': 'retry-3' },
    );
    t.equal(t4.status, 422, 'a trigger with another body');
    t.equal(t4.body.code, 'idempotency_key_reused');
    const other = await h.agent();
    const elsewhere = await h.d.request('POST', `/agents/${other}/chat`, { text: 'once' }, headers);
    t.not(elsewhere.body.turnId, a.body.turnId, 'another agent has its own keys');
    await h.ended(c.body.turnId);
    await h.ended(t2.body.turnId);
    await h.ended(elsewhere.body.turnId);
    t.equal(h.of('turn.started', id).length, 3);
  },
);

t.test("idempotency keys are bounded per agent: a busy agent cannot push out another agent's keys", async (t) => {
  // Keys live in each agent's file, so every agent has its own bound.
  const dir = tempDir(t);
  const quiet = AgentFile.create(join(dir, 'quiet.agt'), agentConfig({ name: 'quiet' }));
  const busy = AgentFile.create(join(dir, 'busy.agt'), agentConfig({ name: 'busy' }));
  t.teardown(() => Promise.all([quiet.close(), busy.close()]));
  const day = 24 * 60 * 60 * 1000;
  const quietKeys = new IdempotencyKeyStore(quiet.raw, 3, day);
  const busyKeys = new IdempotencyKeyStore(busy.raw, 3, day);
  let now = 1_000;
  quietKeys.put('k', 'quiet answer', now);
  for (let i = 0; i < 100; i++) busyKeys.put(`k${i}`, `answer ${i}`, ++now);
  t.equal(quietKeys.get('k', now)?.turnId, 'quiet answer', 'the quiet agent keeps its key');
  t.equal(busyKeys.count(), 3, 'the busy agent keeps its newest 3');
  t.equal(busyKeys.get('k0', now)?.turnId, undefined);
  t.equal(busyKeys.get('k99', now)?.turnId, 'answer 99');
  busyKeys.put('k97', 'answer 97 again', ++now);
  busyKeys.put('fresh', 'x', ++now);
  t.equal(busyKeys.get('k97', now)?.turnId, 'answer 97 again', 'a re-put moves the key to the newest end');
  t.equal(busyKeys.get('k98', now)?.turnId, undefined, 'so the oldest other key went');
  now += day;
  t.equal(quietKeys.get('k', now)?.turnId, undefined, 'gone after 24 h');
  busyKeys.put('later', 'y', now);
  t.equal(busyKeys.count(), 1, 'expired keys are dropped when a key is added');
});

t.test('POST trigger honours ?loop= like chat: query wins; unknown 404 and disabled 409 before queueing', async (t) => {
  const id = await h.agent({
    loops: [
      { name: 'side', goal: 'g', enabled: true },
      { name: 'dormant', goal: 'z', enabled: false },
    ],
  });
  const res = await h.d.request('POST', `/agents/${id}/trigger?loop=side`, {
    type: 'inbox',
    data: { text: 'x' },
    loop: 'main',
  });
  t.equal(res.status, 202);
  t.equal((await h.ended(res.body.turnId)).loop, 'side', 'the query wins over the body');
  const nested = await h.d.request('POST', `/agents/${id}/trigger?loop=side`, {
    event: { type: 'inbox', data: null },
    target: { loop: 'main' },
  });
  t.equal((await h.ended(nested.body.turnId)).loop, 'side', 'and over target.loop');
  const before = h.of('turn.started', id).length;
  const unknown = await h.d.request('POST', `/agents/${id}/trigger?loop=nope`, { type: 'inbox', data: null });
  t.equal(unknown.status, 404);
  t.equal(unknown.body.code, 'not_found');
  const disabled = await h.d.request('POST', `/agents/${id}/trigger?loop=dormant`, { type: 'inbox', data: null });
  t.equal(disabled.status, 409);
  t.equal(disabled.body.code, 'conflict');
  t.equal((await h.d.request('POST', `/agents/${id}/trigger?loop=Bad!`, { type: 'inbox', data: null })).status, 400);
  t.equal(h.of('turn.started', id).length, before, 'nothing queued');
});

t.test('a queued chat runs before trigger turns queued earlier', async (t) => {
  const id = await h.agent();
  h.model.push({ hang: true });
  const first = (await h.d.request('POST', `/agents/${id}/trigger`, { type: 'timer', data: 1 })).body.turnId;
  await h.waitFor((e) => e.event_type === 'turn.started' && e.turn_id === first);
  const trigger = (await h.d.request('POST', `/agents/${id}/trigger`, { type: 'timer', data: 2 })).body.turnId;
  const chat = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'me first' })).body.turnId;
  await Promise.all([h.ended(first), h.ended(trigger), h.ended(chat)]);
  const order = h.of('turn.started', id).map((e) => e.turn_id);
  t.same(order, [first, chat, trigger]);
  t.equal(
    (h.log.events.find((e) => e.event_type === 'turn.completed' && e.turn_id === first)!.payload as any).stop_reason,
    'interrupted',
    'the chat interrupted the trigger turn',
  );
});
