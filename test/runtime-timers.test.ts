/**
 * What a timer firing wakes, on the built daemon with short real timers: nothing while the agent is off,
 * a system-scope lambda, and exactly the timer's own scope even with the standard template's on_timer
 * target. One daemon for the file, a fresh agent per test. Schedules on an injected clock are in
 * runtime-timers-internals.test.ts.
 */
import t from 'tap';
import type { Settings } from '../contracts/settings.js';
import { standardTemplate } from '../kernel/templates/standard.js';
import { wireDaemon, type WireDaemon } from './helpers/wire-daemon.js';

let h: WireDaemon;
t.before(async () => {
  h = await wireDaemon(t);
});

/**
 * Resolves once every event the agent's work so far has produced has reached the event stream: a status read (the
 * daemon has taken up what is due), then a display-state change whose event, on the ordered stream, comes after them.
 * `state` (default: the one of `active` and `idle` the agent is not in; neither gates timers).
 */
const displayStates = new Map<string, string>();
async function settled(
  id: string,
  state: 'active' | 'idle' = (displayStates.get(id) ?? 'idle') === 'idle' ? 'active' : 'idle',
): Promise<void> {
  displayStates.set(id, state);
  await h.d.request('GET', `/agents/${id}/status`);
  const from = h.log.events.length;
  t.equal((await h.d.request('POST', `/agents/${id}/state`, { state })).status, 200);
  await h.log.waitFor(
    (e) =>
      e.event_type === 'agent.state.changed' &&
      e.agent_id === id &&
      (e.payload as any).state === state &&
      'previous' in (e.payload as object),
    `display state ${state}`,
    { from },
  );
}

t.test('timers respect the display state and system-scope timers run their lambda', async (t) => {
  const id = await h.agent(
    {},
    { 'lib/t.ts': 'export function onTick(input: any) { return input.event.data.payload; }' },
  );
  await h.d.request('POST', `/agents/${id}/state`, { state: 'off' });
  await h.d.request('POST', `/agents/${id}/timers`, { mode: 'once_delay', delay_ms: 10 });
  await h.waitFor((e) => e.event_type === 'timer.fired' && e.agent_id === id);
  await settled(id, 'active'); // the agent back on (after the firing)
  t.equal(h.of('turn.started', id).length, 0, 'off: the timer fires but wakes nothing');
  await h.d.request('POST', `/agents/${id}/timers`, {
    mode: 'once_delay',
    delay_ms: 10,
    scope: ['system'],
    lambda: 'lib/t.ts:onTick',
    payload: 'from-timer',
  });
  const log = await h.waitFor(
    (e) =>
      e.event_type === 'log.written' &&
      e.agent_id === id &&
      /lambda:lib\/t.ts:onTick ran/.test((e.payload as any).message),
  );
  t.equal((log.payload as any).origin, 'trigger');
  const rows = (await h.d.request('GET', `/agents/${id}/logs?origin=trigger`)).body.logs;
  t.match(JSON.parse(rows.at(-1).data), { result: '"from-timer"' });
  await settled(id);
  t.equal(h.of('turn.started', id).length, 0);
});

t.test(
  "a firing goes exactly to the timer's own scope, even with the standard template's on_timer target",
  async (t) => {
    const { triggers } = standardTemplate({} as Settings);
    t.match(
      triggers,
      { on_timer: { enabled: true, targets: [{ scope: 'agent' }] } },
      'the template wakes the agent on timers',
    );
    const id = await h.agent(
      { triggers },
      { 'lib/t.ts': 'export function onTick(input: any) { return input.event.data.run_count; }' },
    );
    const timerTurns = () => h.of('turn.started', id).filter((e) => e.payload.trigger === 'on_timer');
    const lambdaRuns = () =>
      h.of('log.written', id).filter((e) => /lambda:lib\/t.ts:onTick ran/.test(e.payload.message));

    await h.d.request('POST', `/agents/${id}/timers`, { mode: 'once_delay', delay_ms: 10 });
    await h.ended((await h.waitFor((e) => e.event_type === 'turn.started' && e.agent_id === id)).turn_id!);
    await settled(id); // anything queued behind it has started by now
    t.equal(timerTurns().length, 1, 'scope agent: one wake, not one per target');

    await h.d.request('POST', `/agents/${id}/timers`, {
      mode: 'once_delay',
      delay_ms: 10,
      scope: ['agent', 'system'],
      lambda: 'lib/t.ts:onTick',
    });
    await h.waitFor(
      (e) =>
        e.event_type === 'log.written' &&
        e.agent_id === id &&
        /lambda:lib\/t.ts:onTick ran/.test((e.payload as any).message),
    );
    await h.waitFor(() => timerTurns().length === 2, 'the second timer turn');
    await h.ended(timerTurns()[1]!.turn_id!);
    await settled(id);
    t.equal(timerTurns().length, 2, 'scope agent+system: one more wake');
    t.equal(lambdaRuns().length, 1, 'and one lambda run');

    await h.d.request('POST', `/agents/${id}/timers`, {
      mode: 'once_delay',
      delay_ms: 10,
      scope: ['system'],
      lambda: 'lib/t.ts:onTick',
    });
    await h.waitFor((e) => e.event_type === 'log.written' && lambdaRuns().length === 2);
    await settled(id);
    t.equal(timerTurns().length, 2, 'a system-only timer wakes no loop');

    const config = (await h.d.request('GET', `/agents/${id}/config`)).body.config;
    config.triggers.on_timer.enabled = false;
    t.equal((await h.d.request('PUT', `/agents/${id}/config`, config)).status, 200);
    await h.d.request('POST', `/agents/${id}/timers`, { mode: 'once_delay', delay_ms: 10 });
    await h.waitFor((e) => e.event_type === 'timer.fired' && h.of('timer.fired', id).length === 4);
    await settled(id);
    t.equal(timerTurns().length, 2, 'on_timer enabled: false mutes timer firings');
  },
);
