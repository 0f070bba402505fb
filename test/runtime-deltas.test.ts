/**
 * `llm.delta` coalescing on the built daemon: a model streaming many tiny deltas produces a few events
 * (not one per token, which would flood the 1000-frame event buffer), whose texts concatenate exactly to
 * the answer, all before the call's `llm.completed`.
 */
import t from 'tap';
import { wireDaemon } from './helpers/wire-daemon.js';

t.test('a long answer streamed in tiny pieces becomes a few llm.delta events with the exact text', async (t) => {
  const h = await wireDaemon(t);
  const id = await h.agent();
  // The fake server streams the text in pieces of a few characters: hundreds of chunks.
  const answer = Array.from({ length: 500 }, (_, i) => `t${i} `).join('');
  h.model.push({ text: answer });
  const turnId = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'talk' })).body.turnId;
  t.equal((await h.ended(turnId)).event_type, 'turn.completed');

  const turnEvents = h.log.events.filter((e) => e.turn_id === turnId);
  const deltaEvents = turnEvents.filter((e) => e.event_type === 'llm.delta');
  t.ok(deltaEvents.length >= 1 && deltaEvents.length < 50, `coalesced into ${deltaEvents.length} events`);
  t.equal(deltaEvents.map((e) => (e.payload as { text: string }).text).join(''), answer, 'exact concatenation');
  t.ok(deltaEvents.every((e) => (e.payload as { call: number }).call === 1));
  const completedAt = turnEvents.findIndex((e) => e.event_type === 'llm.completed');
  const lastDeltaAt = turnEvents.map((e) => e.event_type).lastIndexOf('llm.delta');
  t.ok(lastDeltaAt >= 0 && lastDeltaAt < completedAt, 'the remainder is flushed before llm.completed');
});
