/**
 * Accepted work and requests to the owner survive a restart (issue 9, items 13 and 14), in process:
 * a "crash" is a consistent copy of the agent file taken mid-turn (`VACUUM INTO`: exactly the committed
 * rows, which is what `kill -9` leaves; the lease row is dropped as a dead holder's would be taken over)
 * loaded into a second daemon; a graceful restart is a real shutdown and a second daemon on the same
 * files. The child-process `kill -9` test is test/crash-recovery.test.ts.
 */
import t from 'tap';
import type { UmbilicalEvent } from '../contracts/events.js';
import { AgentFile } from '../kernel/agents/agent-file.js';
import { crashCopy, endsTurn, runtimeHarness, type RuntimeHarness } from './fixtures/runtime/harness.js';
import { Gate } from './fixtures/runtime/scripted-model.js';


async function load(h: RuntimeHarness, filePath: string): Promise<string> {
  const res = await h.d.request('POST', '/agents/load', { filePath });
  if (res.status !== 200) throw new Error(`load failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}

const endings = (h: RuntimeHarness, turnId: string): UmbilicalEvent[] => h.events.filter((e) => endsTurn(e, turnId));
const toolRows = async (h: RuntimeHarness, id: string) =>
  ((await h.d.request('GET', `/agents/${id}/loop?limit=500&offset=0`)).body.rows as any[]).filter((row) => row.role === 'tool');

t.test('crash mid-turn: the running turn (and the chats it absorbed) end in daemon_restart; queued work runs in order', async (t) => {
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
  for (const text of ['three', 'four']) chats.push((await h1.d.request('POST', `/agents/${id}/chat`, { text })).body.turnId);
  const triggers = [];
  for (let i = 0; i < 2; i++) triggers.push((await h1.d.request('POST', `/agents/${id}/trigger`, { type: 'inbox', data: { text: `trigger ${i}` } })).body.turnId);
  const queuedCrash = crashCopy(h1, id);
  // Then 'two' reaches its model call and absorbs the chats.
  gate.release();
  await h1.waitFor((e) => e.event_type === 'chat.delivered' && e.turn_id === two);
  await h1.modelCalls(2);
  const absorbedCrash = crashCopy(h1, id);

  const h2 = await runtimeHarness(t);
  await load(h2, queuedCrash);
  t.match(await h2.ended(two), { event_type: 'agent.error', payload: { code: 'daemon_restart', turn_id: two, absorbed_turn_ids: [] } }, 'the running turn is announced as cut short');
  t.equal(endings(h2, one).length, 0, 'a turn that ended before the crash is not announced again');
  t.match(await h2.ended(chats[0]!), { event_type: 'turn.completed', payload: { turn_id: chats[0], absorbed_turn_ids: [chats[1]] } }, 'queued chats run: the oldest absorbs the rest');
  for (const turnId of triggers) t.equal((await h2.ended(turnId)).event_type, 'turn.completed', 'queued trigger work runs');
  t.same(h2.of('turn.started', id).map((e) => e.turn_id), [chats[0], ...triggers], 'chats first, then trigger turns in arrival order');
  const history = (await h2.d.request('GET', `/agents/${id}/chat?limit=500`)).body.llmMessages as any[];
  t.same(history.filter((m) => m.role === 'user').map((m) => m.content).slice(0, 4), ['one', 'two', 'three', 'four'], 'every chat is in the loop once, in order');
  t.ok(history.some((m) => m.role === 'system' && m.turnId === two && /daemon stopped/.test(m.content)), 'a notice tells the model the turn was cut short');
  const logs = (await h2.d.request('GET', `/agents/${id}/logs?event=recovered`)).body.logs;
  t.match(logs[0]?.message, /4 queued turn\(s\) queued again, 0 resumed, 1 ended/, 'the recovery is logged');
  t.equal(h2.d.daemon.kernel.registry.resolve(id).file.queue.count(), 0, 'nothing is left in agt_queue');

  const h3 = await runtimeHarness(t);
  await load(h3, absorbedCrash);
  t.match(await h3.ended(two), { event_type: 'agent.error', payload: { code: 'daemon_restart', turn_id: two, absorbed_turn_ids: chats } }, 'absorbed chats end with the turn that took them');
  for (const turnId of triggers) t.equal((await h3.ended(turnId)).event_type, 'turn.completed');
  t.same(h3.of('turn.started', id).map((e) => e.turn_id), triggers, 'absorbed chats do not run again');
});

t.test('crash while waiting for approval: the task is listed, a decision given before the turn gets back to it is handed over', async (t) => {
  const h1 = await runtimeHarness(t);
  const id = await h1.agent({ tools: [{ name: 'fs_write', enabled: true, restricted: true }] });
  h1.model.push({ toolCalls: [{ id: 'call_a', name: 'say', args: { text: 'first' } }, { id: 'call_b', name: 'fs_write', args: { path: 'n.txt', content: 'x' } }, { id: 'call_c', name: 'say', args: { text: 'third' } }] });
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
  t.same(listed.map((task: any) => [task.id, task.turnId]), [[taskId, turn]], 'the pending task survived the crash');
  const resolved = await h2.d.request('POST', `/agents/${id}/tasks/${taskId}/resolve`, { action: 'approve', modifiedArgs: { path: 'n.txt', content: 'edited' } });
  t.equal(resolved.status, 200);
  t.equal(resolved.body.task.status, 'running');
  t.equal((await h2.d.request('POST', `/agents/${id}/tasks/${taskId}/resolve`, { action: 'deny' })).status, 409, 'decided once');
  gate.release();
  const end = await h2.ended(turn);
  t.match(end, { event_type: 'turn.completed', payload: { text: 'done' } });
  t.equal(h2.of('task.created', id).length, 0, 'the task was taken up, not created again');
  t.equal((await h2.d.request('GET', `/agents/${id}/tasks/${taskId}`)).body.status, 'completed');
  const agent = h2.d.daemon.kernel.registry.resolve(id);
  t.equal(agent.file.files.read('n.txt')?.content.toString(), 'edited', 'the approved call ran with the owner\'s args');
  const results = await toolRows(h2, id);
  t.same(results.map((row) => row.content.toolCallId), ['call_a', 'call_b', 'call_c'], 'the call before ran once, the waiting one and the one after ran on resume');
  t.same(h2.model.calls[0]!.messages.filter((m) => m.role === 'tool').map((m) => (m as any).toolCallId), ['call_a', 'call_b', 'call_c']);
});

t.test('crash while asking: the ask is listed again and the answer resumes the turn; an approved tool cut short is not run again', async (t) => {
  const h1 = await runtimeHarness(t);
  const id = await h1.agent();
  h1.model.push({ toolCalls: [{ id: 'call_ask', name: 'ask', args: { question: 'Colour?' } }] });
  const turn = (await h1.d.request('POST', `/agents/${id}/chat`, { text: 'ask me' })).body.turnId;
  const asked = await h1.waitFor((e) => e.event_type === 'hil.requested');
  const path = crashCopy(h1, id);

  const h2 = await runtimeHarness(t);
  h2.model.push({ text: 'green it is' });
  await load(h2, path);
  const again = await h2.waitFor((e) => e.event_type === 'hil.requested');
  t.match(again.payload, { kind: 'ask', requestId: (asked.payload as any).requestId, question: 'Colour?' }, 'the same ask, announced again');
  await h2.waitFor((e) => e.event_type === 'agent.state.changed' && (e.payload as any).state === 'awaiting_ask');
  const asks = (await h2.d.request('GET', `/agents/${id}/asks`)).body.asks;
  t.same(asks.map((ask: any) => ask.requestId), [(asked.payload as any).requestId]);
  t.equal((await h2.d.request('POST', `/agents/${id}/asks/${asks[0].requestId}/respond`, { answer: 'green' })).status, 200);
  t.match(await h2.ended(turn), { event_type: 'turn.completed', payload: { text: 'green it is' } });
  t.match((await toolRows(h2, id))[0].content, { toolCallId: 'call_ask', text: 'The owner answered: green' });

  // An approved tool that was running at the crash: its task fails, the turn ends, the tool is not re-run.
  const h3 = await runtimeHarness(t);
  const stuck = new Gate();
  h3.d.daemon.kernel.contributions.forExtension('test-slow').tools({
    toolsFor: () => [{ name: 'slow_write', description: 'slow', inputSchema: { type: 'object' }, source: 'ext:test-slow', restricted: true, run: async () => (await stuck.opened, { content: 'slow done' }) }],
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
    toolsFor: () => [{ name: 'slow_write', description: 'slow', inputSchema: { type: 'object' }, source: 'ext:test-slow', restricted: true, run: async () => (ran++, { content: 'ran' }) }],
  });
  await load(h4, slowPath);
  t.match(await h4.ended(slowTurn), { event_type: 'agent.error', payload: { code: 'daemon_restart' } });
  t.equal((await h4.d.request('GET', `/agents/${other}/tasks/${slowTask}`)).body.status, 'failed', 'the cut-short task is failed');
  t.match((await toolRows(h4, other))[0].content, { toolCallId: 'call_slow', isError: true, text: /whether it finished is unknown/ });
  t.equal(ran, 0, 'never run twice');
});

t.test('crash during a suspend prompt: the prompt survives, and declining it after the restart suspends the agent', async (t) => {
  const h1 = await runtimeHarness(t);
  const id = await h1.agent();
  h1.model.push({ toolCalls: [{ id: 'call_nap', name: 'sys_set_state', args: { state: 'suspended', reason: 'nap' } }] });
  const turn = (await h1.d.request('POST', `/agents/${id}/chat`, { text: 'rest' })).body.turnId;
  const prompt = await h1.waitFor((e) => e.event_type === 'hil.requested' && (e.payload as any).kind === 'suspend');
  const path = crashCopy(h1, id);

  const h2 = await runtimeHarness(t);
  h2.model.push({ text: 'staying down' });
  await load(h2, path);
  await h2.waitFor((e) => e.event_type === 'hil.requested' && (e.payload as any).requestId === (prompt.payload as any).requestId);
  const answer = await h2.d.request('POST', `/agents/${id}/suspend/respond`, { resume: false });
  t.match(answer.body, { success: true, resumed: false, requestId: (prompt.payload as any).requestId });
  t.match(await h2.ended(turn), { event_type: 'turn.completed', payload: { text: 'staying down' } });
  t.match((await toolRows(h2, id))[0].content, { toolCallId: 'call_nap', text: /kept you suspended/ });
  t.equal((await h2.d.request('GET', `/agents/${id}/status`)).body.runtimeState, 'suspended');
});

t.test('queued work for a loop disabled in the meantime is announced as discarded', async (t) => {
  const h1 = await runtimeHarness(t);
  const id = await h1.agent({ loops: [{ name: 'side', goal: 'g', enabled: true }] });
  h1.model.push({ hang: true });
  const running = (await h1.d.request('POST', `/agents/${id}/chat?loop=side`, { text: 'busy' })).body.turnId;
  await h1.modelCalls(1);
  const queued = (await h1.d.request('POST', `/agents/${id}/trigger?loop=side`, { type: 'inbox', data: null })).body.turnId;
  const path = crashCopy(h1, id);
  const file = AgentFile.open(path);
  const config = file.config.get()!;
  file.config.put({ ...config, loops: [{ name: 'side', goal: 'g', enabled: false }] });
  await file.close();

  const h2 = await runtimeHarness(t);
  await load(h2, path);
  t.match(await h2.ended(running), { event_type: 'agent.error', payload: { code: 'daemon_restart' } });
  t.match(await h2.ended(queued), { event_type: 'chat.discarded', loop: 'side', payload: { turn_ids: [queued], reason: 'daemon_restart' } });
});

t.test('a graceful restart keeps queued chats and parks a turn waiting for the owner', async (t) => {
  const h1 = await runtimeHarness(t);
  const id = await h1.agent({ tools: [{ name: 'fs_write', enabled: true, restricted: true }] });
  const filePath = h1.d.daemon.kernel.registry.resolve(id).filePath;
  h1.model.push({ toolCalls: [{ id: 'call_w', name: 'fs_write', args: { path: 'g.txt', content: 'kept' } }] });
  const turn = (await h1.d.request('POST', `/agents/${id}/chat`, { text: 'write' })).body.turnId;
  const taskId = ((await h1.waitFor((e) => e.event_type === 'hil.requested')).payload as any).taskId;
  // Dispatches queue behind the waiting turn without interrupting it.
  const queued = (await h1.d.request('POST', `/agents/${id}/trigger`, { type: 'inbox', data: { text: 'later' } }, { 'idempotency-key': 'graceful' })).body.turnId;
  await h1.d.daemon.shutdown('test restart');
  t.equal(endings(h1, turn).length, 0, 'the waiting turn is parked, not ended');
  t.equal(endings(h1, queued).length, 0, 'queued work is kept, not discarded');
  t.equal(h1.of('hil.resolved').length, 0, 'the approval was not cancelled');

  const h2 = await runtimeHarness(t);
  h2.model.push({ text: 'written' }, { text: 'later done' });
  await load(h2, filePath);
  await h2.waitFor((e) => e.event_type === 'hil.requested' && (e.payload as any).taskId === taskId);
  const repeat = await h2.d.request('POST', `/agents/${id}/trigger`, { type: 'inbox', data: { text: 'later' } }, { 'idempotency-key': 'graceful' });
  t.equal(repeat.body.turnId, queued, 'the key survived the restart');
  await h2.d.request('POST', `/agents/${id}/tasks/${taskId}/resolve`, { action: 'approve' });
  t.match(await h2.ended(turn), { event_type: 'turn.completed', payload: { text: 'written' } });
  t.match(await h2.ended(queued), { event_type: 'turn.completed', payload: { text: 'later done' } });
  t.equal(h2.d.daemon.kernel.registry.resolve(id).file.files.read('g.txt')?.content.toString(), 'kept');
});
