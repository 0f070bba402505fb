/**
 * Unload, abort and loop disabling on the built daemon: queued work discarded, a running turn finished or
 * stopped, an agent file loaded again. One daemon for the file, a fresh agent per test. Unload without
 * grace (a kernel call) with an injected clock is in runtime-lifecycle-internals.test.ts.
 */
import t from 'tap';
import { Gate } from './fixtures/runtime/scripted-model.js';
import { wireDaemon, type WireDaemon } from './helpers/wire-daemon.js';

let h: WireDaemon;
t.before(async () => {
  h = await wireDaemon(t);
});

t.test('unload: queued work discarded at once, the running turn finishes within its grace', async (t) => {
  const id = await h.agent();
  const gate = new Gate();
  h.model.push({ gate, then: { text: 'finished in time' } });
  const running = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'one' })).body.turnId;
  await h.waitFor((e) => e.event_type === 'turn.started' && e.turn_id === running);
  const queued = (await h.d.request('POST', `/agents/${id}/trigger`, { type: 'timer', data: null })).body.turnId;
  const unloading = h.d.request('POST', `/agents/${id}/unload`);
  const discarded = await h.waitFor((e) => e.event_type === 'chat.discarded' && e.agent_id === id);
  t.same(discarded.payload, { turn_ids: [queued], reason: 'unload' });
  t.equal(h.of('agent.unloaded', id).length, 0, 'still waiting for the running turn');
  gate.release();
  t.same((await unloading).body, { success: true });
  const end = await h.ended(running);
  t.equal(end.event_type, 'turn.completed');
  t.equal((end.payload as any).text, 'finished in time');
  await h.waitFor((e) => e.event_type === 'agent.unloaded' && e.agent_id === id);
});

t.test('an agent file reloaded after abort runs again', async (t) => {
  const id = await h.agent();
  await h.d.request('POST', `/agents/${id}/abort`);
  t.equal((await h.d.request('POST', `/agents/${id}/chat`, { text: 'x' })).status, 409);
  const path = (await h.d.request('GET', `/agents/${id}`)).body.filePath as string;
  t.ok(path, 'the agent names its file');
  await h.d.request('POST', `/agents/${id}/unload`);
  await h.d.request('POST', '/agents/load', { filePath: path });
  const turn = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'back' })).body.turnId;
  t.equal((await h.ended(turn)).event_type, 'turn.completed');
});

t.test('disabling an inner loop through the config stops its running turn at once', async (t) => {
  const id = await h.agent({ loops: [{ name: 'side', goal: 'g', enabled: true }] });
  h.model.push({ hang: true });
  const running = (await h.d.request('POST', `/agents/${id}/chat?loop=side`, { text: 'work' })).body.turnId;
  await h.waitFor((e) => e.event_type === 'turn.started' && e.turn_id === running);
  const config = (await h.d.request('GET', `/agents/${id}/config`)).body.config;
  const put = await h.d.request('PUT', `/agents/${id}/config`, {
    ...config,
    loops: [{ name: 'side', goal: 'g', enabled: false }],
  });
  t.equal(put.status, 200);
  const end = await h.ended(running);
  t.equal(end.event_type, 'agent.error');
  t.equal((end.payload as any).code, 'loop_disabled');
  t.equal((await h.d.request('POST', `/agents/${id}/chat?loop=side`, { text: 'again' })).status, 409);
  const main = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'main still works' })).body.turnId;
  t.equal((await h.ended(main)).event_type, 'turn.completed');
});
