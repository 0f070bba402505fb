import t from 'tap';
import type { AgentConfig, TriggerTarget, TriggerType } from '@agt/contracts';
import { FakeClock } from '../kernel/runtime/clock.js';
import type { TriggerEvent } from '../kernel/runtime/dispatch.js';
import { TriggerEvaluator, type DisplayState } from '../kernel/runtime/triggers/evaluator.js';
import { matchesFilter } from '../kernel/runtime/triggers/filter.js';
import type { Delivery } from '../kernel/runtime/triggers/pipeline.js';

let n = 0;
const ev = (data: unknown = {}, type: TriggerEvent['type'] = 'inbox'): TriggerEvent => ({
  id: `e${++n}`,
  type,
  source: 'test',
  time: new Date(0).toISOString(),
  data,
});

function setup(triggers: AgentConfig['triggers'], state: DisplayState = 'active') {
  const clock = new FakeClock();
  const wakes: Array<{ loop: string; type: TriggerType; delivery: Delivery }> = [];
  const system: Array<{ target: TriggerTarget; delivery: Delivery }> = [];
  const box = { state };
  const evaluator = new TriggerEvaluator({
    clock,
    triggers: () => triggers,
    displayState: () => box.state,
    sink: {
      wake: (loop, type, delivery) => wakes.push({ loop, type, delivery }),
      runSystem: (target, _type, delivery) => system.push({ target, delivery }),
    },
  });
  const setState = (next: DisplayState) => {
    const previous = box.state;
    box.state = next;
    evaluator.displayStateChanged(previous, next);
  };
  return { clock, wakes, system, evaluator, setState };
}

const ids = (d: Delivery) => d.events.map((e) => e.id);

t.test('enabled flag, scopes, loop and filter', async (t) => {
  const { evaluator, wakes, system } = setup({
    on_inbox: {
      enabled: true,
      targets: [
        { scope: 'agent', filter: { 'message.source': ['mesh', 'api'] } },
        { scope: 'system', lambda: 'lib/x.ts:f' },
        { scope: 'agent', loop: 'side', filter: { priority: 'high' } },
      ],
    },
    on_outbox: { enabled: false, targets: [{ scope: 'agent' }] },
  });
  t.equal(evaluator.fire('on_outbox', ev()), 0, 'disabled trigger fires nothing');
  t.equal(evaluator.fire('on_timer', ev()), 0, 'unconfigured trigger fires nothing');
  t.equal(evaluator.fire('on_inbox', ev({ message: { source: 'mesh' } })), 2);
  t.equal(evaluator.fire('on_inbox', ev({ message: { source: 'channel:x' }, priority: 'high' })), 2);
  t.same(
    wakes.map((w) => w.loop),
    ['main', 'side'],
  );
  t.equal(system.length, 2);
  t.equal(system[0]!.target.lambda, 'lib/x.ts:f');
});

t.test('filter semantics', async (t) => {
  t.ok(matchesFilter(undefined, 5));
  t.ok(matchesFilter({}, null));
  t.notOk(matchesFilter({ a: 1 }, null));
  t.ok(matchesFilter({ a: { b: [1] } }, { a: { b: [1] }, c: 2 }));
  t.notOk(matchesFilter({ a: 1, c: 3 }, { a: 1, c: 2 }));
  t.ok(matchesFilter({ a: null }, { b: 1 }));
  t.ok(matchesFilter({ a: [1, 2] }, { a: 2 }));
});

t.test('debounce_ms delivers everything held after a quiet period', async (t) => {
  const { evaluator, wakes, clock } = setup({
    on_file_change: { enabled: true, targets: [{ scope: 'agent', debounce_ms: 100 }] },
  });
  const a = ev({}, 'file_change');
  const b = ev({}, 'file_change');
  evaluator.fire('on_file_change', a);
  clock.advance(90);
  evaluator.fire('on_file_change', b);
  clock.advance(90);
  t.equal(wakes.length, 0, 'each event restarts the quiet period');
  clock.advance(10);
  t.equal(wakes.length, 1);
  t.same(ids(wakes[0]!.delivery), [a.id, b.id]);
  t.equal(wakes[0]!.delivery.count, 2);
});

t.test('interval_ms throttles: leading delivery, then one merged delivery per interval', async (t) => {
  const { evaluator, wakes, clock } = setup({
    on_logs: { enabled: true, targets: [{ scope: 'agent', interval_ms: 1000 }] },
  });
  evaluator.fire('on_logs', ev());
  t.equal(wakes.length, 1, 'the first goes at once');
  evaluator.fire('on_logs', ev());
  evaluator.fire('on_logs', ev());
  clock.advance(999);
  t.equal(wakes.length, 1);
  clock.advance(1);
  t.equal(wakes.length, 2);
  t.equal(wakes[1]!.delivery.count, 2);
  clock.advance(5000);
  evaluator.fire('on_logs', ev());
  t.equal(wakes.length, 3, 'after a quiet interval the next goes at once again');
});

t.test('batch_count and batch_ms', async (t) => {
  const { evaluator, wakes, clock } = setup({
    on_tool_call: { enabled: true, targets: [{ scope: 'agent', batch_count: 3, batch_ms: 500 }] },
  });
  for (let i = 0; i < 3; i++) evaluator.fire('on_tool_call', ev());
  t.equal(wakes.length, 1, 'count reached');
  t.equal(wakes[0]!.delivery.count, 3);
  evaluator.fire('on_tool_call', ev());
  clock.advance(499);
  t.equal(wakes.length, 1);
  clock.advance(1);
  t.equal(wakes.length, 2, 'window elapsed');
  t.equal(wakes[1]!.delivery.count, 1);
  t.equal(clock.pending, 0, 'no timer left behind');
});

t.test('self-suppression: a loop is not woken by its own activity', async (t) => {
  const { evaluator, wakes, system } = setup({
    on_outbox: { enabled: true, targets: [{ scope: 'agent' }, { scope: 'agent', loop: 'watcher' }] },
    on_logs: { enabled: true, targets: [{ scope: 'system', command: 'true' }] },
    on_timer: { enabled: true, targets: [{ scope: 'agent' }] },
  });
  t.equal(evaluator.fire('on_outbox', ev({}, 'outbox'), { loop: 'main', turnId: 't1' }), 1);
  t.same(
    wakes.map((w) => w.loop),
    ['watcher'],
    'main wrote it, only the watcher loop wakes',
  );
  t.equal(evaluator.fire('on_logs', ev({}, 'log_entry'), { system: true }), 0, 'a system run never re-triggers');
  t.equal(system.length, 0);
  t.equal(evaluator.fire('on_timer', ev({}, 'timer'), { loop: 'main' }), 1, 'own timers do wake (that is their point)');
});

t.test('state gating: hibernate, off, suspended', async (t) => {
  const { evaluator, wakes, setState, clock } = setup(
    {
      on_inbox: { enabled: true, targets: [{ scope: 'agent' }] },
      on_timer: { enabled: true, targets: [{ scope: 'agent', debounce_ms: 50 }] },
    },
    'hibernate',
  );
  t.equal(evaluator.fire('on_timer', ev({}, 'timer')), 0, 'hibernate ignores timers');
  t.equal(evaluator.fire('on_inbox', ev()), 1, 'hibernate wakes on inbox');
  setState('off');
  t.equal(evaluator.fire('on_inbox', ev()), 0, 'off fires nothing');
  setState('suspended');
  evaluator.fire('on_inbox', ev());
  evaluator.fire('on_timer', ev({}, 'timer'));
  t.equal(evaluator.heldCount, 2);
  t.equal(wakes.length, 1);
  setState('active');
  t.equal(wakes.length, 2, 'held inbox replayed on resume');
  clock.advance(50);
  t.equal(wakes.length, 3, 'held timer replayed through its debounce');
  // A debounced delivery pending when the agent is turned off is dropped.
  evaluator.fire('on_timer', ev({}, 'timer'));
  setState('off');
  clock.advance(100);
  t.equal(wakes.length, 3);
  setState('suspended');
  evaluator.fire('on_inbox', ev());
  setState('off');
  setState('active');
  t.equal(wakes.length, 3, 'events held while suspended are dropped by off');
});

t.test('close cancels pending timers', async (t) => {
  const { evaluator, clock, wakes } = setup({
    on_inbox: { enabled: true, targets: [{ scope: 'agent', debounce_ms: 10 }] },
  });
  evaluator.fire('on_inbox', ev());
  evaluator.close();
  t.equal(clock.pending, 0);
  clock.advance(100);
  t.equal(wakes.length, 0);
  t.equal(evaluator.fire('on_inbox', ev()), 0);
});

t.test('live wiring: inbox, chat, tool-call and startup triggers through the runtime', async (t) => {
  const { runtimeHarness } = await import('./fixtures/runtime/harness.js');
  const clock = new FakeClock(Date.UTC(2025, 0, 1));
  const h = await runtimeHarness(t, { clock });
  const kernel = h.d.daemon.kernel;
  kernel.contributions.forExtension('test-tools').tools({
    toolsFor: () => [
      {
        name: 'echo',
        description: 'echo',
        inputSchema: { type: 'object' },
        source: 'ext:test-tools',
        run: async (args) => ({ content: JSON.stringify(args) }),
      },
    ],
  });
  const id = await h.agent(
    {
      loops: [{ name: 'watcher', goal: 'watch', enabled: true, tools: [] }],
      triggers: {
        on_startup: { enabled: true, targets: [{ scope: 'agent' }] },
        on_inbox: { enabled: true, targets: [{ scope: 'agent', debounce_ms: 1000, filter: { source: 'api' } }] },
        on_chat: { enabled: true, targets: [{ scope: 'system', lambda: 'lib/w.ts:seen' }, { scope: 'agent' }] },
        on_tool_call: {
          enabled: true,
          targets: [{ scope: 'agent' }, { scope: 'agent', loop: 'watcher', filter: { tool: 'echo' } }],
        },
      },
    },
    { 'lib/w.ts': 'export function seen(input: any) { return "chat:" + input.event.data.text; }' },
  );
  const agent = kernel.registry.resolve(id);
  const turnsOf = (trigger: string) => h.of('turn.started', id).filter((e) => e.payload.trigger === trigger);

  await t.test('on_startup fires when the agent starts', async (t) => {
    t.equal(h.service.start(agent), true);
    const started = await h.waitFor(
      (e) => e.event_type === 'turn.started' && (e.payload as any).trigger === 'on_startup',
    );
    await h.ended(started.turn_id!);
  });

  await t.test('on_inbox: filtered and debounced on the fake clock', async (t) => {
    await kernel.inbox.deliver(id, { source: 'api', text: 'one' });
    await kernel.inbox.deliver(id, { source: 'channel:test', text: 'filtered out' });
    await kernel.inbox.deliver(id, { source: 'api', text: 'two' });
    t.equal(turnsOf('on_inbox').length, 0);
    clock.advance(1000);
    const started = await h.waitFor(
      (e) => e.event_type === 'turn.started' && (e.payload as any).trigger === 'on_inbox',
    );
    await h.ended(started.turn_id!);
    const rows = (await h.d.request('GET', `/agents/${id}/chat`)).body.llmMessages;
    const wake = rows.filter((m: any) => m.kind === 'trigger').at(-1);
    t.match(wake.content, /on_inbox, 2 events/);
    t.notMatch(wake.content, /filtered out/);
  });

  await t.test('on_chat: the system lambda runs; the chat loop is not woken twice', async (t) => {
    const before = h.of('turn.started', id).length;
    const chat = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'hello' })).body.turnId;
    await h.ended(chat);
    await h.waitFor((e) => e.event_type === 'log.written' && /lib\/w.ts:seen ran/.test((e.payload as any).message));
    t.equal(h.of('turn.started', id).length, before + 1, 'only the chat turn itself');
  });

  await t.test('on_tool_call: wakes the watcher loop, never the loop that made the call', async (t) => {
    h.model.push({ toolCalls: [{ name: 'echo', args: { x: 1 } }] }, { text: 'done' });
    const chat = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'use the tool' })).body.turnId;
    const end = await h.ended(chat);
    t.equal((end.payload as any).tool_calls, 1);
    const watcher = await h.waitFor((e) => e.event_type === 'turn.started' && e.loop === 'watcher');
    t.equal((watcher.payload as any).trigger, 'on_tool_call');
    await h.ended(watcher.turn_id!);
    t.equal(turnsOf('on_tool_call').filter((e) => e.loop === undefined).length, 0, 'main did not wake itself');
  });

  await t.test('state gating on the live agent', async (t) => {
    await h.d.request('POST', `/agents/${id}/state`, { state: 'suspended' });
    await kernel.inbox.deliver(id, { source: 'api', text: 'held' });
    clock.advance(5000);
    const before = turnsOf('on_inbox').length;
    t.equal(h.service.forRequest(id).evaluator.heldCount, 1);
    await h.d.request('POST', `/agents/${id}/state`, { state: 'active' });
    clock.advance(1000);
    const started = await h.waitFor(
      (e) =>
        e.event_type === 'turn.started' &&
        (e.payload as any).trigger === 'on_inbox' &&
        turnsOf('on_inbox').length > before,
    );
    await h.ended(started.turn_id!);
    t.pass('held inbox event replayed after resume');
  });
});

t.test('every trigger type honours debounce, batch and interval on the fake clock', async (t) => {
  const { TRIGGER_TYPES } = await import('../kernel/agents/config-schema.js');
  for (const type of TRIGGER_TYPES) {
    const { evaluator, wakes, clock } = setup({
      [type]: {
        enabled: true,
        targets: [
          { scope: 'agent', loop: 'debounced', debounce_ms: 100 },
          { scope: 'agent', loop: 'batched', batch_count: 2 },
          { scope: 'agent', loop: 'throttled', interval_ms: 100 },
        ],
      },
    });
    for (let i = 0; i < 3; i++) evaluator.fire(type, ev());
    clock.advance(100);
    const by = (loop: string) => wakes.filter((w) => w.loop === loop).map((w) => w.delivery.count);
    t.same([by('debounced'), by('batched'), by('throttled')], [[3], [2], [1, 2]], type);
  }
});
