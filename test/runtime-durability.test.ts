/**
 * Accepted work and requests to the owner survive a restart, on the built
 * daemon: a crash is a real `kill -9` of its process and a restart on the same data directory (the agents
 * loaded again, as the owner would); a graceful restart is a SIGTERM and the same. The cases that stop a
 * turn at a chosen instant inside the kernel (a copy of the file mid-turn, a turn held before its model
 * call, an extension's tool) are in test/runtime-durability-internals.test.ts.
 */
import t from 'tap';
import type { UmbilicalEvent } from '../contracts/events.js';
import { AgentFile } from '../kernel/agents/agent-file.js';
import { createAgentFile } from './helpers/agent-file.js';
import type { SpawnedDaemon } from './helpers/daemon.js';
import { eventLog, type EventLog } from './helpers/events.js';
import { endsTurn, wireDaemon } from './helpers/wire-daemon.js';

const h = await wireDaemon(t);
/** The daemon's lifetime after the crash (the second test restarts it gracefully). */
let current: Lifetime | undefined;

interface Lifetime {
  d: SpawnedDaemon;
  log: EventLog;
  ended(turnId: string): Promise<UmbilicalEvent>;
}

/**
 * The daemon after `signal` (then `meanwhile`, while it is down) and a restart on the same data directory, its events
 * read afresh.
 */
async function restart(d: SpawnedDaemon, signal: NodeJS.Signals, meanwhile = async () => {}): Promise<Lifetime> {
  await d.stop(signal);
  await meanwhile();
  const next = await d.restart();
  if (!next.url) throw new Error(`the daemon did not start again: ${next.stderr()}`);
  const log = await eventLog(t, next);
  return { d: next, log, ended: (turnId) => log.waitFor((e) => endsTurn(e, turnId), `the end of turn ${turnId}`) };
}

async function load(d: SpawnedDaemon, filePath: string): Promise<string> {
  const res = await d.request('POST', '/agents/load', { filePath });
  if (res.status !== 200) throw new Error(`load failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}

const pathOf = (name: string) => `${h.dir}/${name}.agt`;
const toolRows = async (d: SpawnedDaemon, id: string) =>
  ((await d.request('GET', `/agents/${id}/loop?limit=500&offset=0`)).body.rows as any[]).filter(
    (row) => row.role === 'tool',
  );
const chat = async (d: SpawnedDaemon, id: string, text: string, query = '') =>
  (await d.request('POST', `/agents/${id}/chat${query}`, { text })).body.turnId as string;

t.test(
  'kill -9: an ask and a suspend prompt are asked again, queued work for a loop disabled meanwhile is discarded',
  async (t) => {
    const d1 = h.d;
    // An ask waiting for the owner.
    const asker = await h.agent({ name: 'asker' });
    h.model.push({ toolCalls: [{ id: 'call_ask', name: 'ask', args: { question: 'Colour?' } }] });
    const askTurn = await chat(d1, asker, 'ask me');
    const asked = await h.waitFor((e) => e.event_type === 'hil.requested' && e.agent_id === asker);
    // A suspend prompt waiting for the owner.
    const napper = await h.agent({ name: 'napper' });
    h.model.push({
      toolCalls: [{ id: 'call_nap', name: 'sys_set_state', args: { state: 'suspended', reason: 'nap' } }],
    });
    const napTurn = await chat(d1, napper, 'rest');
    const prompt = await h.waitFor(
      (e) => e.event_type === 'hil.requested' && e.agent_id === napper && (e.payload as any).kind === 'suspend',
    );
    // A turn mid-call on a loop, and work queued behind it.
    const looper = await h.agent({ name: 'looper', loops: [{ name: 'side', goal: 'g', enabled: true }] });
    h.model.push({ hang: true });
    const calls = h.model.calls.length;
    const running = await chat(d1, looper, 'busy', '?loop=side');
    await h.waitFor((e) => e.event_type === 'turn.started' && e.turn_id === running);
    for (let i = 0; i < 500 && h.model.calls.length === calls; i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    t.equal(h.model.calls.length, calls + 1, 'the turn is in its model call');
    const queued = (await d1.request('POST', `/agents/${looper}/trigger?loop=side`, { type: 'inbox', data: null })).body
      .turnId as string;

    // While the daemon is down, the owner disables the loop in the file.
    const after = await restart(d1, 'SIGKILL', async () => {
      const file = AgentFile.open(pathOf('looper'));
      const config = file.config.get()!;
      file.config.put({ ...config, loops: [{ name: 'side', goal: 'g', enabled: false }] });
      await file.close();
    });
    current = after;
    const { d: d2, log } = after;
    h.model.push({ text: 'green it is' });
    for (const name of ['asker', 'napper', 'looper']) await load(d2, pathOf(name));

    // The ask.
    const again = await log.waitFor((e) => e.event_type === 'hil.requested' && e.agent_id === asker, 'the ask again');
    t.match(
      again.payload,
      { kind: 'ask', requestId: (asked.payload as any).requestId, question: 'Colour?' },
      'the same ask, announced again',
    );
    await log.waitFor(
      (e) =>
        e.event_type === 'agent.state.changed' && e.agent_id === asker && (e.payload as any).state === 'awaiting_ask',
      'awaiting the ask',
    );
    const asks = (await d2.request('GET', `/agents/${asker}/asks`)).body.asks;
    t.same(
      asks.map((ask: any) => ask.requestId),
      [(asked.payload as any).requestId],
    );
    t.equal(
      (await d2.request('POST', `/agents/${asker}/asks/${asks[0].requestId}/respond`, { answer: 'green' })).status,
      200,
    );
    t.match(await after.ended(askTurn), { event_type: 'turn.completed', payload: { text: 'green it is' } });
    t.match((await toolRows(d2, asker))[0].content, { toolCallId: 'call_ask', text: 'The owner answered: green' });

    // The suspend prompt.
    h.model.push({ text: 'staying down' });
    await log.waitFor(
      (e) => e.event_type === 'hil.requested' && (e.payload as any).requestId === (prompt.payload as any).requestId,
      'the suspend prompt again',
    );
    const answer = await d2.request('POST', `/agents/${napper}/suspend/respond`, { resume: false });
    t.match(answer.body, { success: true, resumed: false, requestId: (prompt.payload as any).requestId });
    t.match(await after.ended(napTurn), { event_type: 'turn.completed', payload: { text: 'staying down' } });
    t.match((await toolRows(d2, napper))[0].content, { toolCallId: 'call_nap', text: /kept you suspended/ });
    t.equal((await d2.request('GET', `/agents/${napper}/status`)).body.runtimeState, 'suspended');

    // The loop disabled meanwhile.
    t.match(await after.ended(running), { event_type: 'agent.error', payload: { code: 'daemon_restart' } });
    t.match(await after.ended(queued), {
      event_type: 'chat.discarded',
      loop: 'side',
      payload: { turn_ids: [queued], reason: 'daemon_restart' },
    });
  },
);

t.test('a graceful restart keeps queued chats and parks a turn waiting for the owner', async (t) => {
  const { d: d2, log } = current!;
  await createAgentFile(h.dir, { name: 'writer', tools: [{ name: 'fs_write', enabled: true, restricted: true }] });
  const id = await load(d2, pathOf('writer'));
  h.model.push({ toolCalls: [{ id: 'call_w', name: 'fs_write', args: { path: 'g.txt', content: 'kept' } }] });
  const turn = await chat(d2, id, 'write');
  const taskId = (
    (await log.waitFor((e) => e.event_type === 'hil.requested' && e.agent_id === id, 'the approval')).payload as any
  ).taskId;
  // Dispatches queue behind the waiting turn without interrupting it.
  const queuedWrite = (
    await d2.request(
      'POST',
      `/agents/${id}/trigger`,
      { type: 'inbox', data: { text: 'later' } },
      { 'idempotency-key': 'graceful' },
    )
  ).body.turnId;
  const third = await restart(d2, 'SIGTERM');
  t.equal(log.events.filter((e) => endsTurn(e, turn)).length, 0, 'the waiting turn is parked, not ended');
  t.equal(log.events.filter((e) => endsTurn(e, queuedWrite)).length, 0, 'queued work is kept, not discarded');
  t.equal(
    log.events.filter((e) => e.event_type === 'hil.resolved' && e.agent_id === id).length,
    0,
    'the approval was not cancelled',
  );

  h.model.push({ text: 'written' }, { text: 'later done' });
  await load(third.d, pathOf('writer'));
  await third.log.waitFor(
    (e) => e.event_type === 'hil.requested' && (e.payload as any).taskId === taskId,
    'the approval again',
  );
  const repeat = await third.d.request(
    'POST',
    `/agents/${id}/trigger`,
    { type: 'inbox', data: { text: 'later' } },
    { 'idempotency-key': 'graceful' },
  );
  t.equal(repeat.body.turnId, queuedWrite, 'the key survived the restart');
  await third.d.request('POST', `/agents/${id}/tasks/${taskId}/resolve`, { action: 'approve' });
  t.match(await third.ended(turn), { event_type: 'turn.completed', payload: { text: 'written' } });
  t.match(await third.ended(queuedWrite), { event_type: 'turn.completed', payload: { text: 'later done' } });
  t.equal((await third.d.request('GET', `/agents/${id}/files/content?path=g.txt`)).body.content, 'kept');
});
