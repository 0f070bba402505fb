import t from 'tap';
import { normalizeDispatch } from '../kernel/runtime/dispatch.js';

const now = () => new Date('2025-01-02T03:04:05.000Z');

t.test('the four body forms normalize to the same shape', async (t) => {
  const event = { type: 'inbox', data: { text: 'hi' } };
  const a = normalizeDispatch({ event, target: { loop: 'side' } }, now);
  const b = normalizeDispatch({ dispatch: { event, target: { loop: 'side' } } }, now);
  const c1 = normalizeDispatch({ ...event, loop: 'side' }, now);
  const c2 = normalizeDispatch({ ...event, target: { loop: 'side' } }, now);
  for (const d of [a, b, c1, c2]) {
    t.equal(d.events.length, 1);
    t.equal(d.events[0]!.type, 'inbox');
    t.same(d.events[0]!.data, { text: 'hi' });
    t.same(d.target, { scope: 'agent', loop: 'side' });
    t.equal(d.batch, false);
  }
  const batch = normalizeDispatch({ events: [event, { type: 'timer', data: null }], count: 7 }, now);
  t.equal(batch.batch, true);
  t.equal(batch.count, 7);
  t.same(batch.target, { scope: 'agent' });
  const wrappedBatch = normalizeDispatch({ dispatch: { events: [event] } }, now);
  t.equal(wrappedBatch.count, 1);
});

t.test('defaults: id, time and source are filled; given ones kept', async (t) => {
  const d = normalizeDispatch({ type: 'startup' }, now);
  t.match(d.events[0]!.id, /^[0-9a-f-]{36}$/);
  t.equal(d.events[0]!.time, '2025-01-02T03:04:05.000Z');
  t.equal(d.events[0]!.source, 'api');
  t.equal(d.events[0]!.data, null, 'startup needs no data');
  const kept = normalizeDispatch({ event: { id: 'x1', type: 'timer', data: 1, source: 'mesh', time: '2024-01-01T00:00:00Z', correlationId: 'c' } }, now);
  t.same(kept.events[0], { id: 'x1', type: 'timer', data: 1, source: 'mesh', time: '2024-01-01T00:00:00.000Z', correlationId: 'c' });
  const sys = normalizeDispatch({ event: { type: 'timer', data: null }, target: { scope: 'system', lambda: 'lib/a.ts:run', warm: true } }, now);
  t.same(sys.target, { scope: 'system', lambda: 'lib/a.ts:run', warm: true });
});

t.test('refusals', async (t) => {
  const refused = (body: unknown, pattern: RegExp) => t.throws(() => normalizeDispatch(body, now), { code: 'bad_request', message: pattern });
  refused({ event: { type: 'inbox', data: { message: { source: 'user', text: 'x' } } } }, /source "user"/);
  refused({ event: { type: 'inbox', data: { skip_loop_append: true } } }, /internal flag/);
  refused({ dispatch: { events: [{ type: 'inbox', data: null, pre_appended_loop: 1 }] } }, /internal flag/);
  refused({ event: { data: {} } }, /type is required/);
  refused({ event: { type: 'inbox' } }, /data is required/);
  refused({ type: 'nope', data: null }, /not an event type/);
  refused({ events: [] }, /non-empty/);
  refused([], /JSON object/);
  refused({ event: { type: 'inbox', data: null }, target: { scope: 'system' } }, /lambda or a command/);
  refused({ event: { type: 'inbox', data: null }, target: { loop: 'Bad Loop' } }, /target.loop/);
  refused({ event: { type: 'inbox', data: null, time: 'yesterday' } }, /ISO 8601/);
});
