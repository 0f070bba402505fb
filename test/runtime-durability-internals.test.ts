/**
 * Accepted work and requests to the owner survive a restart, in process, where
 * the crash must fall at a chosen instant: a "crash" is a consistent copy of the agent file taken mid-turn
 * (`VACUUM INTO`: exactly the committed rows, which is what `kill -9` leaves; the lease row is dropped as a
 * dead holder's would be taken over) loaded into a second daemon. Two copies of one turn, a turn held
 * before its model call, and an extension's slow tool need the kernel; the real `kill -9` cases are in
 * test/runtime-durability.test.ts and test/crash-recovery.test.ts.
 */
import t from 'tap';
import type { UmbilicalEvent } from '../contracts/events.js';
import { crashCopy, endsTurn, runtimeHarness, type RuntimeHarness } from './fixtures/runtime/harness.js';
import { Gate } from './fixtures/runtime/scripted-model.js';

async function load(h: RuntimeHarness, filePath: string): Promise<string> {
  const res = await h.d.request('POST', '/agents/load', { filePath });
  if (res.status !== 200) throw new Error(`load failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}

const endings = (h: RuntimeHarness, turnId: string): UmbilicalEvent[] => h.events.filter((e) => endsTurn(e, turnId));
const toolRows = async (h: RuntimeHarness, id: string) =>
  ((await h.d.request('GET', `/agents/${id}/loop?limit=500&offset=0`)).body.rows as any[]).filter(
    (row) => row.role === 'tool',
  );

t.test(
  'crash mid-turn: the running turn (and the chats it absorbed) end in daemon_restart; queued work runs in order',
  async (t) => {
    const h1 = await runtimeHarness(t);
    const id = await h1.agent();
    h1.model.push({ hang: true }, { hang: true });
    const one = (await h1.d.request('POST', `/agents/${id}/chat`, { text: 'one' })).body.turnId;
    await h1.waitFor((e) => e.event_type === 'turn.started' && e.turn_id === one);
    await h1.modelCalls(1);
    // 'two' interrupts 'one'; held before its first model call, 'three' and 'four' queue behind it, and so
    // do two dispatches.
    const gate = h1.holdTurns();
    const two = (await h1.d.request('POST', `/agents/${id}/chat`, { text: 'two' })).body.turnId;
    await h1.ended(one);
    await h1.waitFor((e) => e.event_type === 'turn.started' && e.turn_id === two);
    const chats = [];
    for (const text of ['three', 'four'])
      chats.push((await h1.d.request('POST', `/agents/${id}/chat`, { text })).body.turnId);
    const triggers = [];
    for (let i = 0; i < 2; i++)
      triggers.push(
        (await h1.d.request('POST', `/agents/${id}/trigger`, { type: 'inbox', data: { text: `trigger ${i}` } })).body
          .turnId,
      );
    const queuedCrash = crashCopy(h1, id);
    // Then 'two' reaches its model call and absorbs the chats.
    gate.release();
    await h1.waitFor((e) => e.event_type === 'chat.delivered' && e.turn_id === two);
    await h1.modelCalls(2);
    const absorbedCrash = crashCopy(h1, id);

    const h2 = await runtimeHarness(t);
    await load(h2, queuedCrash);
    t.match(
      await h2.ended(two),
      { event_type: 'agent.error', payload: { code: 'daemon_restart', turn_id: two, absorbed_turn_ids: [] } },
      'the running turn is announced as cut short',
    );
    t.equal(endings(h2, one).length, 0, 'a turn that ended before the crash is not announced again');
    t.match(
      await h2.ended(chats[0]!),
      { event_type: 'turn.completed', payload: { turn_id: chats[0], absorbed_turn_ids: [chats[1]] } },
      'queued chats run: the oldest absorbs the rest',
    );
    for (const turnId of triggers)
      t.equal((await h2.ended(turnId)).event_type, 'turn.completed', 'queued trigger work runs');
    t.same(
      h2.of('turn.started', id).map((e) => e.turn_id),
      [chats[0], ...triggers],
      'chats first, then trigger turns in arrival order',
    );
    const history = (await h2.d.request('GET', `/agents/${id}/chat?limit=500`)).body.llmMessages as any[];
    t.same(
      history
        .filter((m) => m.role === 'user')
        .map((m) => m.content)
        .slice(0, 4),
      ['one', 'two', 'three', 'four'],
      'every chat is in the loop once, in order',
    );
    t.ok(
      history.some((m) => m.role === 'system' && m.turnId === two && /daemon stopped/.test(m.content)),
      'a notice tells the model the turn was cut short',
    );
    const logs = (await h2.d.request('GET', `/agents/${id}/logs?event=recovered`)).body.logs;
    t.match(logs[0]?.message, /4 queued turn\(s\) queued again, 0 resumed, 1 ended/, 'the recovery is logged');
    t.equal(h2.d.daemon.kernel.registry.resolve(id).file.queue.count(), 0, 'nothing is left in agt_queue');

    const h3 = await runtimeHarness(t);
    await load(h3, absorbedCrash);
    t.match(
      await h3.ended(two),
      { event_type: 'agent.error', payload: { code: 'daemon_restart', turn_id: two, absorbed_turn_ids: chats } },
      'absorbed chats end with the turn that took them',
    );
    for (const turnId of triggers) t.equal((await h3.ended(turnId)).event_type, 'turn.completed');
    t.same(
      h3.of('turn.started', id).map((e) => e.turn_id),
      triggers,
      'absorbed chats do not run again',
    );
  },
);

t.test(
  'crash while waiting for approval: the task is listed, a decision given before the turn gets back to it is handed over',
  async (t) => {
    const h1 = await runtimeHarness(t);
    const id = await h1.agent({ tools: [{ name: 'fs_write', enabled: true, restricted: true }] });
    h1.model.push({
      toolCalls: [
        { id: 'call_a', name: 'say', args: { text: 'first' } },
        { id: 'call_b', name: 'fs_write', args: { path: 'n.txt', content: 'x' } },
        { id: 'call_c', name: 'say', args: { text: 'third' } },
      ],
    });
    const turn = (await h1.d.request('POST', `/agents/${id}/chat`, { text: 'write it' })).body.turnId;
    const requested = await h1.waitFor((e) => e.event_type === 'hil.requested');
    const taskId = (requested.payload as any).taskId as string;
    const path = crashCopy(h1, id);

    const h2 = await runtimeHarness(t);
    // The resumed turn is held before it gets back to the call: the owner decides meanwhile.
    const gate = h2.holdTurns();
    h2.model.push({ text: 'done' });
    await load(h2, path);
    await h2.waitFor((e) => e.event_type === 'turn.started' && e.turn_id === turn);
    t.match(h2.of('turn.started', id)[0]!.payload, { trigger: 'resume' });
    const listed = (await h2.d.request('GET', `/agents/${id}/tasks?status=pending_approval`)).body.tasks;
    t.same(
      listed.map((task: any) => [task.id, task.turnId]),
      [[taskId, turn]],
      'the pending task survived the crash',
    );
    const resolved = await h2.d.request('POST', `/agents/${id}/tasks/${taskId}/resolve`, {
      action: 'approve',
      modifiedArgs: { path: 'n.txt', content: 'edited' },
    });
    t.equal(resolved.status, 200);
    t.equal(resolved.body.task.status, 'running');
    t.equal(
      (await h2.d.request('POST', `/agents/${id}/tasks/${taskId}/resolve`, { action: 'deny' })).status,
      409,
      'decided once',
    );
    gate.release();
    const end = await h2.ended(turn);
    t.match(end, { event_type: 'turn.completed', payload: { text: 'done' } });
    t.equal(h2.of('task.created', id).length, 0, 'the task was taken up, not created again');
    t.equal((await h2.d.request('GET', `/agents/${id}/tasks/${taskId}`)).body.status, 'completed');
    const agent = h2.d.daemon.kernel.registry.resolve(id);
    t.equal(
      agent.file.files.read('n.txt')?.content.toString(),
      'edited',
      "the approved call ran with the owner's args",
    );
    const results = await toolRows(h2, id);
    t.same(
      results.map((row) => row.content.toolCallId),
      ['call_a', 'call_b', 'call_c'],
      'the call before ran once, the waiting one and the one after ran on resume',
    );
    t.same(
      h2.model.calls[0]!.messages.filter((m) => m.role === 'tool').map((m) => (m as any).toolCallId),
      ['call_a', 'call_b', 'call_c'],
    );
  },
);

t.test('crash while an approved tool runs: its task fails, the turn ends, the tool is not run again', async (t) => {
  const h3 = await runtimeHarness(t);
  const stuck = new Gate();
  h3.d.daemon.kernel.contributions.forExtension('test-slow').tools({
    toolsFor: () => [
      {
        name: 'slow_write',
        description: 'slow',
        inputSchema: { type: 'object' },
        source: 'ext:test-slow',
        restricted: true,
        run: async () => (await stuck.opened, { content: 'slow done' }),
      },
    ],
  });
  const other = await h3.agent({ tools: [{ name: 'slow_write', enabled: true, restricted: true }] });
  h3.model.push({ toolCalls: [{ id: 'call_slow', name: 'slow_write', args: {} }] });
  const slowTurn = (await h3.d.request('POST', `/agents/${other}/chat`, { text: 'go' })).body.turnId;
  const slowTask = ((await h3.waitFor((e) => e.event_type === 'hil.requested')).payload as any).taskId;
  await h3.d.request('POST', `/agents/${other}/tasks/${slowTask}/resolve`, { action: 'approve' });
  await h3.waitFor((e) => e.event_type === 'tool.started' && (e.payload as any).tool === 'slow_write');
  const slowPath = crashCopy(h3, other);
  t.teardown(() => stuck.release());

  const h4 = await runtimeHarness(t);
  let ran = 0;
  h4.d.daemon.kernel.contributions.forExtension('test-slow').tools({
    toolsFor: () => [
      {
        name: 'slow_write',
        description: 'slow',
        inputSchema: { type: 'object' },
        source: 'ext:test-slow',
        restricted: true,
        run: async () => (ran++, { content: 'ran' }),
      },
    ],
  });
  await load(h4, slowPath);
  t.match(await h4.ended(slowTurn), { event_type: 'agent.error', payload: { code: 'daemon_restart' } });
  t.equal(
    (await h4.d.request('GET', `/agents/${other}/tasks/${slowTask}`)).body.status,
    'failed',
    'the cut-short task is failed',
  );
  t.match((await toolRows(h4, other))[0].content, {
    toolCallId: 'call_slow',
    isError: true,
    text: /whether it finished is unknown/,
  });
  t.equal(ran, 0, 'never run twice');
});
