import t from 'tap';
import type { Settings } from '../contracts/settings.js';
import { FakeClock } from '../kernel/runtime/clock.js';
import { standardTemplate } from '../kernel/templates/standard.js';
import { runtimeHarness } from './fixtures/runtime/harness.js';

t.test('timer routes and firing with a fake clock', async (t) => {
  const clock = new FakeClock(Date.UTC(2025, 0, 1));
  const h = await runtimeHarness(t, { clock });
  const id = await h.agent({ loops: [{ name: 'side', goal: 'g', enabled: true }] });
  const start = clock.now();

  const created = await h.d.request('POST', `/agents/${id}/timers`, { mode: 'interval', every_ms: 60_000, payload: 'tick', max_runs: 2 });
  t.equal(created.status, 200);
  const timer = created.body.timer;
  t.match(timer, { mode: 'interval', schedule: { mode: 'interval', every_ms: 60_000, start_at: start + 60_000, max_runs: 2 }, next_wake_at: start + 60_000, payload: 'tick', scope: ['agent'], run_count: 0, loop: null, expired: false, locked: false });

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
  const once = (await h.d.request('POST', `/agents/${id}/timers`, { mode: 'once_delay', delay_ms: 1000, loop: 'side' })).body.timer;
  t.equal(once.loop, 'side');
  t.equal(once.next_wake_at, clock.now() + 1000);
  clock.advance(1000);
  const woke = await h.waitFor((e) => e.event_type === 'turn.started' && (e.payload as any).trigger === 'on_timer');
  t.equal(woke.loop, 'side');
  await h.ended(woke.turn_id!);
  t.equal((await h.d.request('GET', `/agents/${id}/timers`)).body.timers[0].expired, true);

  const at = (await h.d.request('POST', `/agents/${id}/timers`, { mode: 'once_at', at: clock.now() + 5000, loop: 'side' })).body.timer;
  const moved = await h.d.request('PUT', `/agents/${id}/timers/${at.id}`, { mode: 'once_at', at: clock.now() + 9000, loop: 'main' });
  t.same(moved.body, { agentId: id, success: true });
  const after = (await h.d.request('GET', `/agents/${id}/timers`)).body.timers.find((x: any) => x.id === at.id);
  t.equal(after.loop, null, 'moved back to main');
  t.equal(after.next_wake_at, clock.now() + 9000);
  const kept = await h.d.request('PUT', `/agents/${id}/timers/${at.id}`, { mode: 'once_at', at: clock.now() + 9000 });
  t.equal(kept.body.success, true);
  t.same((await h.d.request('PUT', `/agents/${id}/timers/9999`, { mode: 'once_at', at: 1 })).body, { agentId: id, success: false });
  t.same((await h.d.request('DELETE', `/agents/${id}/timers/${at.id}`)).body, { agentId: id, success: true });
  t.same((await h.d.request('DELETE', `/agents/${id}/timers/${at.id}`)).body, { agentId: id, success: false });
  clock.advance(10_000);
  t.equal(h.of('timer.fired').length, 1, 'a deleted timer never fires');

  const cron = (await h.d.request('POST', `/agents/${id}/timers`, { mode: 'cron', cron: '*/5 * * * *' })).body.timer;
  t.ok(cron.next_wake_at > clock.now() && cron.next_wake_at <= clock.now() + 5 * 60_000, 'next cron slot within five minutes');
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

t.test('timers respect the display state and system-scope timers run their lambda', async (t) => {
  const clock = new FakeClock(Date.UTC(2025, 0, 1));
  const h = await runtimeHarness(t, { clock });
  const id = await h.agent({}, { 'lib/t.ts': 'export function onTick(input: any) { return input.event.data.payload; }' });
  await h.d.request('POST', `/agents/${id}/state`, { state: 'off' });
  await h.d.request('POST', `/agents/${id}/timers`, { mode: 'once_delay', delay_ms: 10 });
  clock.advance(10);
  await h.waitFor((e) => e.event_type === 'timer.fired');
  t.equal(h.of('turn.started').length, 0, 'off: the timer fires but wakes nothing');
  await h.d.request('POST', `/agents/${id}/state`, { state: 'active' });
  await h.d.request('POST', `/agents/${id}/timers`, { mode: 'once_delay', delay_ms: 10, scope: ['system'], lambda: 'lib/t.ts:onTick', payload: 'from-timer' });
  clock.advance(10);
  const log = await h.waitFor((e) => e.event_type === 'log.written' && /lambda:lib\/t.ts:onTick ran/.test((e.payload as any).message));
  t.equal((log.payload as any).origin, 'trigger');
  const rows = (await h.d.request('GET', `/agents/${id}/logs?origin=trigger`)).body.logs;
  t.match(JSON.parse(rows.at(-1).data), { result: '"from-timer"' });
  t.equal(h.of('turn.started').length, 0);
});

t.test('a firing goes exactly to the timer\'s own scope, even with the standard template\'s on_timer target', async (t) => {
  const clock = new FakeClock(Date.UTC(2025, 0, 1));
  const h = await runtimeHarness(t, { clock });
  const { triggers } = standardTemplate({} as Settings);
  t.match(triggers, { on_timer: { enabled: true, targets: [{ scope: 'agent' }] } }, 'the template wakes the agent on timers');
  const id = await h.agent({ triggers }, { 'lib/t.ts': 'export function onTick(input: any) { return input.event.data.run_count; }' });
  const timerTurns = () => h.of('turn.started', id).filter((e) => e.payload.trigger === 'on_timer');
  const lambdaRuns = () => h.of('log.written', id).filter((e) => /lambda:lib\/t.ts:onTick ran/.test(e.payload.message));

  await h.d.request('POST', `/agents/${id}/timers`, { mode: 'once_delay', delay_ms: 1000 });
  clock.advance(1000);
  await h.ended((await h.waitFor((e) => e.event_type === 'turn.started' && e.agent_id === id)).turn_id!);
  await h.d.request('GET', `/agents/${id}/status`); // anything queued behind it has started by now
  t.equal(timerTurns().length, 1, 'scope agent: one wake, not one per target');

  await h.d.request('POST', `/agents/${id}/timers`, { mode: 'once_delay', delay_ms: 1000, scope: ['agent', 'system'], lambda: 'lib/t.ts:onTick' });
  clock.advance(1000);
  await h.waitFor((e) => e.event_type === 'log.written' && /lambda:lib\/t.ts:onTick ran/.test((e.payload as any).message));
  await h.ended(timerTurns()[1]!.turn_id!);
  await h.d.request('GET', `/agents/${id}/status`);
  t.equal(timerTurns().length, 2, 'scope agent+system: one more wake');
  t.equal(lambdaRuns().length, 1, 'and one lambda run');

  await h.d.request('POST', `/agents/${id}/timers`, { mode: 'once_delay', delay_ms: 1000, scope: ['system'], lambda: 'lib/t.ts:onTick' });
  clock.advance(1000);
  await h.waitFor((e) => e.event_type === 'log.written' && lambdaRuns().length === 2);
  await h.d.request('GET', `/agents/${id}/status`);
  t.equal(timerTurns().length, 2, 'a system-only timer wakes no loop');

  const config = (await h.d.request('GET', `/agents/${id}/config`)).body.config;
  config.triggers.on_timer.enabled = false;
  t.equal((await h.d.request('PUT', `/agents/${id}/config`, config)).status, 200);
  await h.d.request('POST', `/agents/${id}/timers`, { mode: 'once_delay', delay_ms: 1000 });
  clock.advance(1000);
  await h.waitFor((e) => e.event_type === 'timer.fired' && h.of('timer.fired', id).length === 4);
  await h.d.request('GET', `/agents/${id}/status`);
  t.equal(timerTurns().length, 2, 'on_timer enabled: false mutes timer firings');
});

t.test('an interval with a past start_at waits for its next slot instead of catching up', async (t) => {
  const clock = new FakeClock(Date.UTC(2025, 0, 1));
  const h = await runtimeHarness(t, { clock });
  const id = await h.agent();
  const now = clock.now();
  const timer = (await h.d.request('POST', `/agents/${id}/timers`, { mode: 'interval', every_ms: 60_000, start_at: now - 90_000 })).body.timer;
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
