/**
 * Unload without grace, a kernel call no route makes: the running turn is aborted and nothing of the
 * agent (timers, trigger debounces) is left armed on the injected clock.
 */
import t from 'tap';
import { FakeClock } from '../kernel/runtime/clock.js';
import { runtimeHarness } from './fixtures/runtime/harness.js';

t.test('unload without grace aborts the running turn; timers and trigger timing are released', async (t) => {
  const clock = new FakeClock(Date.UTC(2025, 0, 1));
  const h = await runtimeHarness(t, { clock, wire: true });
  const id = await h.agent({
    triggers: { on_inbox: { enabled: true, targets: [{ scope: 'agent', debounce_ms: 60_000 }] } },
  });
  await h.d.request('POST', `/agents/${id}/timers`, { mode: 'interval', every_ms: 60_000 });
  await h.d.daemon.kernel.inbox.deliver(id, { source: 'api', text: 'pending in debounce' });
  t.equal(clock.pending, 2, 'a timer and a debounce are armed');
  h.model.push({ hang: true });
  const running = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'one' })).body.turnId;
  await h.waitFor((e) => e.event_type === 'turn.started' && e.turn_id === running);
  const kernel = h.d.daemon.kernel;
  await kernel.registry.unload(kernel.registry.resolve(id), { graceMs: 0, reason: 'test' });
  const end = await h.ended(running);
  t.equal(end.event_type, 'agent.error');
  t.equal((end.payload as any).code, 'unloaded');
  t.equal(clock.pending, 0, 'nothing of the agent is left armed');
  clock.advance(600_000);
  t.equal(h.of('timer.fired').length, 0);
  t.equal((await h.d.request('POST', `/agents/${id}/chat`, { text: 'x' })).status, 404);
});
