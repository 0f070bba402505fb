import t from 'tap';
import { FakeClock } from '../kernel/runtime/clock.js';
import { runtimeHarness } from './fixtures/runtime/harness.js';
import { Gate } from './fixtures/runtime/scripted-model.js';

t.test('unload: queued work discarded at once, the running turn finishes within its grace', async (t) => {
  const h = await runtimeHarness(t, { wire: true });
  const id = await h.agent();
  const gate = new Gate();
  h.model.push({ gate, then: { text: 'finished in time' } });
  const running = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'one' })).body.turnId;
  await h.waitFor((e) => e.event_type === 'turn.started' && e.turn_id === running);
  const queued = (await h.d.request('POST', `/agents/${id}/trigger`, { type: 'timer', data: null })).body.turnId;
  const unloading = h.d.request('POST', `/agents/${id}/unload`);
  const discarded = await h.waitFor((e) => e.event_type === 'chat.discarded');
  t.same(discarded.payload, { turn_ids: [queued], reason: 'unload' });
  t.equal(h.of('agent.unloaded').length, 0, 'still waiting for the running turn');
  gate.release();
  t.same((await unloading).body, { success: true });
  const end = await h.ended(running);
  t.equal(end.event_type, 'turn.completed');
  t.equal((end.payload as any).text, 'finished in time');
  await h.waitFor((e) => e.event_type === 'agent.unloaded');
});

t.test('unload without grace aborts the running turn; timers and trigger timing are released', async (t) => {
  const clock = new FakeClock(Date.UTC(2025, 0, 1));
  const h = await runtimeHarness(t, { clock, wire: true });
  const id = await h.agent({ triggers: { on_inbox: { enabled: true, targets: [{ scope: 'agent', debounce_ms: 60_000 }] } } });
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

t.test('an agent file reloaded after abort runs again', async (t) => {
  const h = await runtimeHarness(t, { wire: true });
  const id = await h.agent();
  await h.d.request('POST', `/agents/${id}/abort`);
  t.equal((await h.d.request('POST', `/agents/${id}/chat`, { text: 'x' })).status, 409);
  const path = h.d.daemon.kernel.registry.resolve(id).filePath;
  await h.d.request('POST', `/agents/${id}/unload`);
  await h.d.request('POST', '/agents/load', { filePath: path });
  const turn = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'back' })).body.turnId;
  t.equal((await h.ended(turn)).event_type, 'turn.completed');
});

t.test('disabling an inner loop through the config stops its running turn at once', async (t) => {
  const h = await runtimeHarness(t, { wire: true });
  const id = await h.agent({ loops: [{ name: 'side', goal: 'g', enabled: true }] });
  h.model.push({ hang: true });
  const running = (await h.d.request('POST', `/agents/${id}/chat?loop=side`, { text: 'work' })).body.turnId;
  await h.waitFor((e) => e.event_type === 'turn.started' && e.turn_id === running);
  const config = (await h.d.request('GET', `/agents/${id}/config`)).body.config;
  const put = await h.d.request('PUT', `/agents/${id}/config`, { ...config, loops: [{ name: 'side', goal: 'g', enabled: false }] });
  t.equal(put.status, 200);
  const end = await h.ended(running);
  t.equal(end.event_type, 'agent.error');
  t.equal((end.payload as any).code, 'loop_disabled');
  t.equal((await h.d.request('POST', `/agents/${id}/chat?loop=side`, { text: 'again' })).status, 409);
  const main = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'main still works' })).body.turnId;
  t.equal((await h.ended(main)).event_type, 'turn.completed');
});
