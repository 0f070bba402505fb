/**
 * Timer routes and schedules on an injected clock (minutes and hours of schedule pass at once): interval
 * firing and max_runs, once modes, replace and delete, validation, a past start_at. What a firing wakes
 * is in runtime-timers.test.ts on the built daemon.
 */
import t from 'tap';
import { FakeClock } from '../kernel/runtime/clock.js';
import { runtimeHarness } from './fixtures/runtime/harness.js';

t.test('timer routes and firing with a fake clock', async (t) => {
  const clock = new FakeClock(Date.UTC(2025, 0, 1));
  const h = await runtimeHarness(t, { clock });
  const id = await h.agent({ loops: [{ name: 'side', goal: 'g', enabled: true }] });
  const start = clock.now();

  const created = await h.d.request('POST', `/agents/${id}/timers`, {
    mode: 'interval',
    every_ms: 60_000,
    payload: 'tick',
    max_runs: 2,
  });
  t.equal(created.status, 200);
  const timer = created.body.timer;
  t.match(timer, {
    mode: 'interval',
    schedule: { mode: 'interval', every_ms: 60_000, start_at: start + 60_000, max_runs: 2 },
    next_wake_at: start + 60_000,
    payload: 'tick',
    scope: ['agent'],
    run_count: 0,
    loop: null,
    expired: false,
    locked: false,
  });

  clock.advance(59_999);
  t.equal(h.of('timer.fired').length, 0);
  clock.advance(1);
  const fired = await h.waitFor((e) => e.event_type === 'timer.fired');
  t.same(fired.payload, { timerId: timer.id, run_count: 1 });
  const started = await h.waitFor((e) => e.event_type === 'turn.started' && (e.payload as any).trigger === 'on_timer');
  await h.ended(started.turn_id!);
  const row = (await h.d.request('GET', `/agents/${id}/chat`)).body.llmMessages[0];
  t.match(row.content, /\[trigger on_timer\].*"payload":"tick"/);
  clock.advance(60_000);
  await h.waitFor((e) => e.event_type === 'timer.fired' && (e.payload as any).run_count === 2);
  const listed = (await h.d.request('GET', `/agents/${id}/timers`)).body.timers;
  t.match(listed[0], { id: timer.id, run_count: 2, expired: true, next_wake_at: null, last_fired_at: start + 120_000 });
  clock.advance(600_000);
  t.equal(h.of('timer.fired').length, 2, 'max_runs reached: expired, kept as history');
});

t.test('once modes, loops, replace, delete, validation', async (t) => {
  const clock = new FakeClock(Date.UTC(2025, 0, 1));
  const h = await runtimeHarness(t, { clock });
  const id = await h.agent({ loops: [{ name: 'side', goal: 'g', enabled: true }] });
  const once = (await h.d.request('POST', `/agents/${id}/timers`, { mode: 'once_delay', delay_ms: 1000, loop: 'side' }))
    .body.timer;
  t.equal(once.loop, 'side');
  t.equal(once.next_wake_at, clock.now() + 1000);
  clock.advance(1000);
  const woke = await h.waitFor((e) => e.event_type === 'turn.started' && (e.payload as any).trigger === 'on_timer');
  t.equal(woke.loop, 'side');
  await h.ended(woke.turn_id!);
  t.equal((await h.d.request('GET', `/agents/${id}/timers`)).body.timers[0].expired, true);

  const at = (
    await h.d.request('POST', `/agents/${id}/timers`, { mode: 'once_at', at: clock.now() + 5000, loop: 'side' })
  ).body.timer;
  const moved = await h.d.request('PUT', `/agents/${id}/timers/${at.id}`, {
    mode: 'once_at',
    at: clock.now() + 9000,
    loop: 'main',
  });
  t.same(moved.body, { agentId: id, success: true });
  const after = (await h.d.request('GET', `/agents/${id}/timers`)).body.timers.find((x: any) => x.id === at.id);
  t.equal(after.loop, null, 'moved back to main');
  t.equal(after.next_wake_at, clock.now() + 9000);
  const kept = await h.d.request('PUT', `/agents/${id}/timers/${at.id}`, { mode: 'once_at', at: clock.now() + 9000 });
  t.equal(kept.body.success, true);
  t.same((await h.d.request('PUT', `/agents/${id}/timers/9999`, { mode: 'once_at', at: 1 })).body, {
    agentId: id,
    success: false,
  });
  t.same((await h.d.request('DELETE', `/agents/${id}/timers/${at.id}`)).body, { agentId: id, success: true });
  t.same((await h.d.request('DELETE', `/agents/${id}/timers/${at.id}`)).body, { agentId: id, success: false });
  clock.advance(10_000);
  t.equal(h.of('timer.fired').length, 1, 'a deleted timer never fires');

  const cron = (await h.d.request('POST', `/agents/${id}/timers`, { mode: 'cron', cron: '*/5 * * * *' })).body.timer;
  t.ok(
    cron.next_wake_at > clock.now() && cron.next_wake_at <= clock.now() + 5 * 60_000,
    'next cron slot within five minutes',
  );
  for (const [body, status] of [
    [{ mode: 'cron', cron: 'not a cron' }, 400],
    [{ mode: 'weekly' }, 400],
    [{ mode: 'interval' }, 400],
    [{ mode: 'interval', every_ms: 10 }, 400],
    [{ mode: 'once_at', at: 1, scope: ['system'] }, 400],
    [{ mode: 'once_at', at: 1, loop: 'nope' }, 404],
    [{ mode: 'once_at', at: -1 }, 400],
    [{ mode: 'once_at', at: 253402300800000 }, 400],
    [{ mode: 'once_at', at: 1e300 }, 400],
    [{ mode: 'once_delay', delay_ms: -1 }, 400],
    [{ mode: 'once_delay', delay_ms: 367 * 86_400_000 }, 400],
    [{ mode: 'interval', every_ms: 999 }, 400],
    [{ mode: 'interval', every_ms: 367 * 86_400_000 }, 400],
    [{ mode: 'interval', every_ms: 1000, start_at: -5 }, 400],
    [{ mode: 'interval', every_ms: 1000, start_at: 5000, end_at: 4000 }, 400],
    [{ mode: 'interval', every_ms: 1000, end_at: 253402300800000 }, 400],
    [{ mode: 'interval', every_ms: 1000, max_runs: 0 }, 400],
    [{ mode: 'once_at', at: 253402300799999, max_runs: 1 }, 200],
  ] as const) {
    t.equal((await h.d.request('POST', `/agents/${id}/timers`, body)).status, status, JSON.stringify(body));
  }
});

t.test('an interval with a past start_at waits for its next slot instead of catching up', async (t) => {
  const clock = new FakeClock(Date.UTC(2025, 0, 1));
  const h = await runtimeHarness(t, { clock });
  const id = await h.agent();
  const now = clock.now();
  const timer = (
    await h.d.request('POST', `/agents/${id}/timers`, { mode: 'interval', every_ms: 60_000, start_at: now - 90_000 })
  ).body.timer;
  t.equal(timer.next_wake_at, now + 30_000, 'the next slot of the grid start_at + k * every_ms');
  clock.advance(29_999);
  await h.d.request('GET', `/agents/${id}/status`);
  t.equal(h.of('timer.fired').length, 0, 'nothing fired at creation');
  clock.advance(1);
  await h.waitFor((e) => e.event_type === 'timer.fired');
  clock.advance(59_999);
  await h.d.request('GET', `/agents/${id}/status`);
  t.equal(h.of('timer.fired').length, 1, 'then once per interval');
  const listed = (await h.d.request('GET', `/agents/${id}/timers`)).body.timers[0];
  t.equal(listed.next_wake_at, now + 90_000);
});
