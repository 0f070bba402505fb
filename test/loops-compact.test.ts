import { join } from 'node:path';
import t from 'tap';
import type { AgentConfig } from '../contracts/agent-config.js';
import type { AgentFile } from '../kernel/agents/agent-file.js';
import { createAgentFile } from './helpers/agent-file.js';
import { readFile } from './helpers/sql-boundary.js';
import { wireDaemon } from './helpers/wire-daemon.js';
import { Gate } from './fixtures/runtime/scripted-model.js';

const h = await wireDaemon(t);

/** `turns` user/assistant pairs (q1/a1, ...) in `loop`. */
function seedTurns(file: AgentFile, turns: number, loop = 'main', prefix = '') {
  for (let i = 1; i <= turns; i++) {
    file.loop.append({ loop, role: 'user', content: { text: `${prefix}q${i}` } });
    file.loop.append({ loop, role: 'assistant', content: { text: `${prefix}a${i}` } });
  }
}

async function load(config: Partial<AgentConfig>, seed: (file: AgentFile) => void): Promise<string> {
  const path = await createAgentFile(h.dir, config, { seed });
  return (await h.d.request('POST', '/agents/load', { filePath: path })).body.id;
}

async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 2000 && !(await check()); i++) await new Promise((resolve) => setTimeout(resolve, 5));
}

const texts = (rows: any[]) => rows.map((row) => row.content.text);

t.test('compact: refusals, upstream failure leaves history, summary replaces older rows', async (t) => {
  const id = await load({ name: 'compactor', loops: [{ name: 'sleepy', goal: 'z', enabled: false }] }, (file) =>
    seedTurns(file, 6),
  );
  await load({ name: 'tiny' }, (file) => seedTurns(file, 3));
  const compact = (agent = 'compactor', query = '', body?: unknown) =>
    h.d.request('POST', `/agents/${agent}/compact${query}`, body);
  const page = async () => (await h.d.request('GET', '/agents/compactor/loop?limit=500')).body.rows;

  const tiny = await compact('tiny');
  t.equal(tiny.status, 409, 'nothing to compact: only the kept turns');
  t.equal(tiny.body.code, 'conflict');
  const calls = h.model.calls.length;
  t.equal((await compact('compactor', '?loop=sleepy')).status, 409, 'disabled loop');
  t.equal((await compact('compactor', '', { loop: 'nope' })).status, 404, 'unknown loop');
  t.equal((await compact('compactor', '?loop=nope', { loop: 'main' })).status, 404, 'the query wins');
  t.equal(h.model.calls.length, calls, 'no model call for a refusal');

  const before = await page();
  h.model.push({ error: { code: 'upstream_error', status: 500 } });
  const failed = await compact();
  t.equal(failed.status, 502);
  t.equal(failed.body.code, 'upstream_error');
  t.same(await page(), before, 'history untouched');
  t.equal(h.of('loop.compacted', id).length, 0);

  h.model.push({ text: '  SUMMARY: q1 to q3 were discussed  ' });
  const done = await compact();
  t.equal(done.status, 200);
  t.match(done.body, {
    agentId: id,
    loop: 'main',
    removed: 6,
    kept: 6,
    summaryChars: 'SUMMARY: q1 to q3 were discussed'.length,
  });
  const call = h.model.calls.at(-1)!;
  t.same(call.tools, [], 'no tools for the summarization');
  t.match(
    call.messages[0]!.content,
    /\[user\] q1\n\[assistant\] a1[\s\S]*\[assistant\] a3$/,
    'the older rows as a transcript',
  );
  t.notMatch(call.messages[0]!.content, /q4/, 'kept turns are not summarized');
  const after = await page();
  t.same(
    texts(after),
    ['SUMMARY: q1 to q3 were discussed', 'q4', 'a4', 'q5', 'a5', 'q6', 'a6'],
    'the last 3 turns stay verbatim',
  );
  t.match(after[0], {
    id: before[5].id,
    role: 'system',
    kind: 'summary',
    created_at: before[5].created_at,
    usage_input: 10,
    model: 'test-model',
  });
  t.same(after.slice(1), before.slice(6), 'kept rows unchanged');
  const event = await h.waitFor((e) => e.event_type === 'loop.compacted' && e.agent_id === id);
  const summaries = (await h.d.request('GET', `/agents/${id}/memory?kind=summary`)).body.memories;
  t.match(
    summaries,
    [{ text: 'SUMMARY: q1 to q3 were discussed', source: 'compaction' }],
    'the summary is kept as a memory',
  );
  t.same(event.payload, {
    removed: 6,
    summary_chars: done.body.summaryChars,
    memories: (await h.d.request('GET', `/agents/${id}/memory`)).body.memories
      .map((m: { id: number }) => m.id)
      .reverse(),
  });
  t.equal(event.agent_id, id);

  const again = await compact('compactor', '', {});
  t.equal(again.status, 409, 'only the earlier summary is older than the kept turns');

  // The next turn sees the summary first.
  const turn = (await h.d.request('POST', '/agents/compactor/chat', { text: 'next' })).body.turnId;
  await h.ended(turn);
  t.equal(
    h.model.calls.at(-1)!.messages[0]!.content,
    '[summary of the earlier conversation]\nSUMMARY: q1 to q3 were discussed',
  );
});

t.test('compact holds the loop: chats and triggers queue behind it, 409 while compacting or mid-turn', async (t) => {
  const id = await load({ name: 'holder' }, (file) => seedTurns(file, 4));

  h.model.push({ hang: true });
  const running = (await h.d.request('POST', '/agents/holder/chat', { text: 'long' })).body.turnId;
  await h.waitFor((e) => e.event_type === 'turn.started' && e.turn_id === running);
  const midTurn = await h.d.request('POST', '/agents/holder/compact');
  t.equal(midTurn.status, 409, 'mid-turn');
  t.match(midTurn.body.error, /mid-turn/);
  await h.d.request('POST', '/agents/holder/interrupt');
  await h.ended(running);

  const gate = new Gate();
  h.model.push({ gate, then: { text: 'SUMMARY 2' } });
  const calls = h.model.calls.length;
  const compacting = h.d.request('POST', '/agents/holder/compact');
  await until(() => h.model.calls.length > calls);
  t.equal((await h.d.request('GET', '/agents/holder/loops/main')).body.compacting, true);
  const twice = await h.d.request('POST', '/agents/holder/compact');
  t.equal(twice.status, 409, 'already compacting');
  t.match(twice.body.error, /already running/);

  const chat = (await h.d.request('POST', '/agents/holder/chat', { text: 'while compacting' })).body.turnId;
  const trigger = (await h.d.request('POST', '/agents/holder/trigger', { type: 'inbox', data: { text: 'ping' } })).body
    .turnId;
  t.notOk(
    h.log.events.some((e) => e.event_type === 'turn.started' && (e.turn_id === chat || e.turn_id === trigger)),
    'nothing starts while compacting',
  );

  gate.release();
  const done = await compacting;
  t.equal(done.status, 200);
  await h.ended(chat);
  await h.ended(trigger);
  const order = h.log.events.filter(
    (e) =>
      (e.event_type === 'loop.compacted' && e.agent_id === id) ||
      (e.event_type === 'turn.started' && [chat, trigger].includes(e.turn_id!)),
  );
  t.same(
    order.map((e) => e.turn_id ?? e.event_type),
    ['loop.compacted', chat, trigger],
    'queued work runs after the compaction, in order',
  );
  t.equal(
    h.model.calls.at(-2)!.messages[0]!.content,
    '[summary of the earlier conversation]\nSUMMARY 2',
    'the chat replays on the compacted history',
  );
});

t.test('loop_compact tool compacts another loop; not its own', async (t) => {
  const id = await load({ name: 'tooler', loops: [{ name: 'side', goal: 's', enabled: true }] }, (file) =>
    seedTurns(file, 4, 'side', 'side-'),
  );
  h.model.push(
    {
      toolCalls: [
        { name: 'loop_compact', args: { loop: 'side' } },
        { name: 'loop_compact', args: {} },
      ],
    },
    { text: 'SIDE SUMMARY' },
    { text: 'done' },
  );
  const turn = (await h.d.request('POST', '/agents/tooler/chat', { text: 'tidy up side' })).body.turnId;
  t.equal((await h.ended(turn)).event_type, 'turn.completed');
  const results = h.model.calls.at(-1)!.messages.filter((m) => m.role === 'tool') as any[];
  t.match(results[0].content, /compacted 2 rows of side/);
  t.notOk(results[0].isError);
  t.match(results[1].content, /cannot compact its own history/);
  t.equal(results[1].isError, true);
  const side = readFile(
    join(h.dir, 'tooler.agt'),
    (db) =>
      db.prepare("SELECT content FROM agt_loop WHERE loop = 'side' ORDER BY id").all() as Array<{ content: string }>,
  );
  t.same(
    side.map((row) => JSON.parse(row.content).text),
    ['SIDE SUMMARY', 'side-q2', 'side-a2', 'side-q3', 'side-a3', 'side-q4', 'side-a4'],
  );
  t.match((await h.waitFor((e) => e.event_type === 'loop.compacted' && e.agent_id === id)).loop, 'side');
});
