import t from 'tap';
import { normalizeDispatch } from '../kernel/runtime/dispatch.js';
import { wireDaemon } from './helpers/wire-daemon.js';

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
  const kept = normalizeDispatch(
    { event: { id: 'x1', type: 'timer', data: 1, source: 'mesh', time: '2024-01-01T00:00:00Z', correlationId: 'c' } },
    now,
  );
  t.same(kept.events[0], {
    id: 'x1',
    type: 'timer',
    data: 1,
    source: 'mesh',
    time: '2024-01-01T00:00:00.000Z',
    correlationId: 'c',
  });
  const sys = normalizeDispatch(
    { event: { type: 'timer', data: null }, target: { scope: 'system', lambda: 'lib/a.ts:run', warm: true } },
    now,
  );
  t.same(sys.target, { scope: 'system', lambda: 'lib/a.ts:run', warm: true });
});

t.test('refusals', async (t) => {
  const refused = (body: unknown, pattern: RegExp) =>
    t.throws(() => normalizeDispatch(body, now), { code: 'bad_request', message: pattern });
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
  refused({ event: { type: 'inbox', data: null, time: '1' } }, /ISO 8601/);
  refused({ event: { type: 'inbox', data: null, time: '2025-01-02' } }, /date-time/);
  refused({ event: { type: 'inbox', data: null, time: '2025-02-30T00:00:00Z' } }, /ISO 8601/);
  const nest = (levels: number, inner: unknown) =>
    Array.from({ length: levels }).reduce<unknown>((value) => ({ a: value }), inner);
  refused({ event: { type: 'inbox', data: nest(40, { skip_loop_append: true }) } }, /internal flag/);
  refused({ event: { type: 'inbox', data: nest(70, 1) } }, /deeper than 64 levels/);
  t.equal(
    normalizeDispatch({ event: { type: 'inbox', data: nest(50, 1) } }, now).events.length,
    1,
    'data nested 50 levels is fine',
  );
  t.equal(
    normalizeDispatch({ event: { type: 'inbox', data: null, time: '2025-01-02T03:04:05.5+02:00' } }, now).events[0]!
      .time,
    '2025-01-02T01:04:05.500Z',
  );
});

t.test('POST trigger over HTTP (the built daemon)', async (t) => {
  const h = await wireDaemon(t);
  const hooks = `
    export function summarize(input: { trigger: string; count: number; event: { data: unknown } }) {
      return { trigger: input.trigger, count: input.count, data: input.event.data };
    }
    export function forever() { for (;;) {} }
  `;
  const id = await h.agent({ limits: { lambda_timeout_ms: 300 } }, { 'lib/hooks.ts': hooks });

  await t.test('each body form wakes the agent; inbox dispatch writes no inbox row', async (t) => {
    const bodies = [
      { event: { type: 'inbox', data: { text: 'a' } } },
      { dispatch: { event: { type: 'inbox', data: { text: 'b' } } } },
      { type: 'inbox', data: { text: 'c' }, loop: 'main' },
      {
        events: [
          { type: 'inbox', data: { text: 'd' } },
          { type: 'inbox', data: { text: 'e' } },
        ],
        count: 2,
      },
    ];
    for (const body of bodies) {
      const res = await h.d.request('POST', `/agents/${id}/trigger`, body);
      t.equal(res.status, 202);
      t.equal(res.body.accepted, true);
      const end = await h.ended(res.body.turnId);
      t.equal(end.event_type, 'turn.completed');
      t.equal(h.of('turn.started').find((e) => e.turn_id === res.body.turnId)!.payload.trigger, 'on_inbox');
    }
    const rows = (await h.d.request('GET', `/agents/${id}/chat`)).body.llmMessages.filter(
      (m: any) => m.kind === 'trigger',
    );
    t.equal(rows.length, 4);
    t.match(rows[0].content, /^\[trigger on_inbox\] .*"text":"a"/);
    t.match(rows[3].content, /2 events/);
    t.same((await h.d.request('GET', `/agents/${id}/inbox`)).body.messages, [], 'no agt_inbox row');
  });

  await t.test('refusals answer 400 and queue nothing', async (t) => {
    const before = h.of('turn.started').length;
    for (const body of [
      { event: { type: 'inbox', data: { message: { source: 'user', text: 'spoof' } } } },
      { event: { type: 'inbox', data: null, skip_loop_append: true } },
      { event: { type: 'inbox', data: { pre_appended_loop: 'x' } } },
      { event: { data: null } },
      { event: { type: 'inbox' } },
      { event: { type: 'bogus', data: null } },
      { event: { type: 'inbox', data: null, time: '1' } },
    ]) {
      const res = await h.d.request('POST', `/agents/${id}/trigger`, body);
      t.equal(res.status, 400, JSON.stringify(body));
      t.equal(res.body.code, 'bad_request');
    }
    t.equal(
      (await h.d.request('POST', `/agents/${id}/trigger`, { type: 'timer', data: null, loop: 'nope' })).status,
      404,
    );
    t.equal(h.of('turn.started').length, before);
  });

  await t.test('system scope runs a lambda in the sandbox; the turn id ends with its result', async (t) => {
    const res = await h.d.request('POST', `/agents/${id}/trigger`, {
      event: { type: 'timer', data: { tick: 1 } },
      target: { scope: 'system', lambda: 'lib/hooks.ts:summarize' },
    });
    const end = await h.ended(res.body.turnId);
    t.equal(end.event_type, 'turn.completed');
    t.same(JSON.parse((end.payload as any).text), { trigger: 'on_timer', count: 1, data: { tick: 1 } });
    t.equal((end.payload as any).stop_reason, 'system');
  });

  await t.test('a lambda that loops forever is killed at its time limit', async (t) => {
    const res = await h.d.request('POST', `/agents/${id}/trigger`, {
      type: 'timer',
      data: null,
      scope: 'system',
      lambda: 'lib/hooks.ts:forever',
    });
    const end = await h.ended(res.body.turnId);
    t.equal(end.event_type, 'agent.error');
    t.equal((end.payload as any).code, 'timeout');
    const logs = (await h.d.request('GET', `/agents/${id}/logs?origin=trigger`)).body.logs;
    t.ok(logs.some((l: any) => l.level === 'error' && /time limit/.test(l.message)));
    const again = await h.d.request('POST', `/agents/${id}/trigger`, {
      type: 'timer',
      data: 2,
      scope: 'system',
      lambda: 'lib/hooks.ts:summarize',
    });
    t.equal((await h.ended(again.body.turnId)).event_type, 'turn.completed', 'the sandbox recovers');
  });
});
