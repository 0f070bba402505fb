/**
 * `llm.delta` coalescing: a model streaming many tiny deltas produces a few events (not one per token,
 * which would flood the 1000-frame event buffer), whose texts concatenate exactly to the answer, all
 * before the call's `llm.completed`.
 */
import t from 'tap';
import { runtimeHarness } from './fixtures/runtime/harness.js';

t.test('500 tiny deltas become a few llm.delta events with the exact text', async (t) => {
  const h = await runtimeHarness(t);
  const id = await h.agent();
  const deltas = Array.from({ length: 500 }, (_, i) => `t${i} `);
  const answer = deltas.join('');
  h.model.push({ text: answer, deltas });
  const turnId = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'talk' })).body.turnId;
  t.equal((await h.ended(turnId)).event_type, 'turn.completed');

  const turnEvents = h.events.filter((e) => e.turn_id === turnId);
  const deltaEvents = turnEvents.filter((e) => e.event_type === 'llm.delta');
  t.ok(deltaEvents.length >= 1 && deltaEvents.length < 50, `coalesced into ${deltaEvents.length} events`);
  t.equal(deltaEvents.map((e) => (e.payload as { text: string }).text).join(''), answer, 'exact concatenation');
  t.ok(deltaEvents.every((e) => (e.payload as { call: number }).call === 1));
  const completedAt = turnEvents.findIndex((e) => e.event_type === 'llm.completed');
  const lastDeltaAt = turnEvents.map((e) => e.event_type).lastIndexOf('llm.delta');
  t.ok(lastDeltaAt >= 0 && lastDeltaAt < completedAt, 'the remainder is flushed before llm.completed');
});
