/**
 * Standing crash test (nothing accepted is lost): the real daemon as a child process, a
 * fake OpenAI server whose answers are held, a real SSE client on `GET /events`, and `kill -9` in the
 * middle of turns and of a chat burst. After a restart and a reload of the agents:
 *
 * - every turnId answered 202 before the kill ends exactly once overall: before the kill, or after the
 *   restart (queued work runs; a turn cut short ends in `agent.error` `daemon_restart`);
 * - every row announced with `loop.appended` before the kill is in the file;
 * - a pending approval from before the kill is listed, resolvable, and its turn resumes and completes;
 * - the same `Idempotency-Key` answers the first turnId;
 * - `PRAGMA integrity_check` is `ok` on every file after a clean shutdown, and nothing is left queued.
 *
 * Waits are conditions with a failsafe, never fixed sleeps.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'libsql';
import t from 'tap';
import { reply, startFakeOpenAI, type RecordedRequest } from './fakes/openai.js';
import { createAgentFile } from './helpers/agent-file.js';
import { ROOT, spawnDaemon, tempDir, type SpawnedDaemon } from './helpers/daemon.js';
import { openSse, type SseStream } from './helpers/sse-client.js';

const FAILSAFE_MS = 20_000;

interface Frame {
  event_type: string;
  agent_id: string | null;
  loop?: string;
  turn_id?: string;
  payload: any;
}

async function until<T>(check: () => T | undefined | false | Promise<T | undefined | false>, what: string): Promise<T> {
  const deadline = Date.now() + FAILSAFE_MS;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`failsafe: ${what} not within ${FAILSAFE_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The event frames a stream has received so far, parsed. */
function frames(stream: SseStream): Frame[] {
  return stream.messages
    .filter((m) => m.id !== undefined && m.data !== undefined)
    .map((m) => JSON.parse(m.data!).event as Frame);
}

const endsTurn = (event: Frame, turnId: string): boolean => {
  const p = event.payload ?? {};
  if (event.event_type === 'turn.completed' || event.event_type === 'agent.error')
    return p.turn_id === turnId || (Array.isArray(p.absorbed_turn_ids) && p.absorbed_turn_ids.includes(turnId));
  if (event.event_type === 'chat.discarded') return Array.isArray(p.turn_ids) && p.turn_ids.includes(turnId);
  return false;
};

const PROVIDERS = {
  name: 'providers',
  module: join(ROOT, 'extensions/providers/index.ts'),
  enabled: true,
  config: { maxRetries: 0, retryBaseMs: 10, retryMaxMs: 20 },
};

t.test('kill -9 mid-turn and mid-burst: nothing accepted is lost, announced rows are in the file', async (t) => {
  // ---- the model: held answers before the kill, prompt answers after -------------------------------
  let phase: 'before' | 'after' = 'before';
  const script = (request: RecordedRequest) => {
    const messages = (request.body?.messages ?? []) as Array<{ role: string; content: unknown }>;
    const system = String(messages.find((m) => m.role === 'system')?.content ?? '');
    const firstUser = String(messages.find((m) => m.role === 'user')?.content ?? '');
    const last = messages.at(-1);
    if (firstUser.startsWith('Summarize this conversation'))
      return phase === 'before' ? reply.stall() : reply.text('a summary');
    if (system.includes('approver')) {
      if (last?.role === 'tool') return reply.text('written');
      return reply.toolCalls([
        { id: 'call_write', name: 'fs_write', args: { path: 'notes/approved.txt', content: 'approved after a crash' } },
      ]);
    }
    if (system.includes('busy') && phase === 'before') return reply.stall();
    return reply.text('ok');
  };
  const fake = await startFakeOpenAI(t, script);
  const settings = {
    providers: [{ id: 'local', type: 'openai-compatible', name: 'Fake OpenAI', baseUrl: fake.baseUrl }],
  };
  const options = { extensions: { extensions: [PROVIDERS] }, settings };
  const dataDir = tempDir(t, 'agt-crash-data-');
  const agentsDir = tempDir(t, 'agt-crash-agents-');
  const files = {
    queue: await createAgentFile(agentsDir, { name: 'queue', instructions: 'You are the queue agent.' }),
    busy: await createAgentFile(agentsDir, { name: 'busy', instructions: 'You are the busy agent.' }),
    approver: await createAgentFile(agentsDir, {
      name: 'approver',
      instructions: 'You are the approver agent.',
      tools: [{ name: 'fs_write', enabled: true, restricted: true }],
    }),
  };

  const client = (d: SpawnedDaemon) => {
    const token = readFileSync(join(d.dataDir, 'daemon-token'), 'utf8').trim();
    const request = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
      const init: RequestInit = { method, headers: { authorization: `Bearer ${token}`, ...headers } };
      if (body !== undefined) {
        init.body = JSON.stringify(body);
        (init.headers as Record<string, string>)['content-type'] = 'application/json';
      }
      const response = await fetch(d.url + path, init);
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined };
    };
    const events = () => openSse(`${d.url}/events`, { authorization: `Bearer ${token}` });
    return { request, events };
  };

  // ---- before the kill ---------------------------------------------------------------------------------
  const d1 = await spawnDaemon(t, { ...options, dataDir });
  t.ok(d1.url, 'the first daemon started');
  const c1 = client(d1);
  const stream1 = await c1.events();
  t.teardown(() => stream1.close());
  const ids: Record<keyof typeof files, string> = { queue: '', busy: '', approver: '' };
  for (const name of Object.keys(files) as Array<keyof typeof files>) {
    const loaded = await c1.request('POST', '/agents/load', { filePath: files[name] });
    t.equal(loaded.status, 200, `${name} loaded`);
    ids[name] = loaded.body.id;
  }
  const accepted: string[] = [];
  const chat = async (agent: keyof typeof files, text: string, headers: Record<string, string> = {}) => {
    const answer = await c1.request('POST', `/agents/${ids[agent]}/chat`, { text }, headers);
    if (answer.status !== 202) throw new Error(`chat refused: ${answer.status} ${JSON.stringify(answer.body)}`);
    accepted.push(answer.body.turnId);
    return answer.body.turnId as string;
  };
  const dispatch = async (agent: keyof typeof files, data: unknown) => {
    const answer = await c1.request('POST', `/agents/${ids[agent]}/trigger`, { type: 'inbox', data });
    if (answer.status !== 202) throw new Error(`dispatch refused: ${answer.status} ${JSON.stringify(answer.body)}`);
    accepted.push(answer.body.turnId);
    return answer.body.turnId as string;
  };
  const ended1 = (turnId: string) => until(() => frames(stream1).find((e) => endsTurn(e, turnId)), `end of ${turnId}`);

  // queue: four finished turns, then a compaction held at its model call keeps the loop busy while a
  // burst of chats (one with an Idempotency-Key) and dispatches queues behind it.
  for (let i = 1; i <= 4; i++)
    t.equal((await ended1(await chat('queue', `warm-up ${i}`))).event_type, 'turn.completed');
  void c1.request('POST', `/agents/${ids.queue}/compact`, {}).catch(() => {});
  await until(
    () =>
      fake
        .chatRequests()
        .some((r) =>
          String(r.body?.messages?.find((m: any) => m.role === 'user')?.content ?? '').startsWith('Summarize'),
        ),
    'the compaction call',
  );
  const burst = await Promise.all([
    ...Array.from({ length: 5 }, (_, i) => chat('queue', `burst ${i}`)),
    chat('queue', 'keyed', { 'idempotency-key': 'crash-key' }),
    dispatch('queue', { text: 'queued trigger 1' }),
    dispatch('queue', { text: 'queued trigger 2' }),
  ]);
  const keyed = burst[5]!;

  // busy: each chat interrupts the previous turn; the last one is mid-call (held) at the kill, and two
  // dispatches queue behind it.
  let running = '';
  for (let i = 1; i <= 3; i++) {
    const previous = running;
    running = await chat('busy', `busy ${i}`);
    await until(
      () => frames(stream1).some((e) => e.event_type === 'turn.started' && e.turn_id === running),
      `busy ${i} started`,
    );
    await until(
      () => fake.chatRequests().some((r) => JSON.stringify(r.body?.messages?.at(-1) ?? {}).includes(`busy ${i}`)),
      `busy ${i} calling the model`,
    );
    if (previous)
      t.match((await ended1(previous)).payload, { stop_reason: 'interrupted' }, 'the next chat interrupted the turn');
  }
  const busyQueued = [
    await dispatch('busy', { text: 'after the crash 1' }),
    await dispatch('busy', { text: 'after the crash 2' }),
  ];

  // approver: a restricted tool call waits for the owner.
  const approverTurn = await chat('approver', 'write the note');
  const requested = await until(
    () => frames(stream1).find((e) => e.event_type === 'hil.requested' && e.agent_id === ids.approver),
    'the approval request',
  );
  const taskId = requested.payload.taskId as string;

  // The snapshot of what was announced, then the kill.
  const announced = frames(stream1);
  const appended = announced.filter((e) => e.event_type === 'loop.appended');
  const endedBefore = new Set(accepted.filter((turnId) => announced.some((e) => endsTurn(e, turnId))));
  t.ok(!endedBefore.has(running), 'the last busy turn is mid-flight at the kill');
  t.ok(
    burst.every((turnId) => !endedBefore.has(turnId)),
    'the burst is queued at the kill',
  );
  d1.child.kill('SIGKILL');
  await d1.exited;
  stream1.close();

  // ---- after the restart --------------------------------------------------------------------------------
  phase = 'after';
  const d2 = await spawnDaemon(t, { ...options, dataDir });
  t.ok(d2.url, 'the daemon restarted on the same data directory');
  const c2 = client(d2);
  const stream2 = await c2.events();
  t.teardown(() => stream2.close());
  for (const name of Object.keys(files) as Array<keyof typeof files>) {
    const loaded = await c2.request('POST', '/agents/load', { filePath: files[name] });
    t.equal(loaded.status, 200, `${name} loaded again`);
  }

  // The pending approval survived, is listed and resolvable; the resumed turn runs the tool.
  const again = await until(
    () => frames(stream2).find((e) => e.event_type === 'hil.requested' && e.payload.taskId === taskId),
    'the approval announced again',
  );
  t.equal(again.turn_id, approverTurn, 'announced again for the same turn');
  const pending = await c2.request('GET', `/agents/${ids.approver}/tasks?status=pending_approval`);
  t.same(
    pending.body.tasks.map((task: any) => task.id),
    [taskId],
    'the task from before the kill is listed',
  );
  const resolved = await c2.request('POST', `/agents/${ids.approver}/tasks/${taskId}/resolve`, { action: 'approve' });
  t.equal(resolved.status, 200, 'and resolvable');

  // The same key answers the first turnId, and queues nothing.
  const retried = await c2.request(
    'POST',
    `/agents/${ids.queue}/chat`,
    { text: 'keyed' },
    { 'idempotency-key': 'crash-key' },
  );
  t.equal(retried.status, 202);
  t.equal(retried.body.turnId, keyed, 'the same Idempotency-Key returns the first turnId after the restart');

  // Every accepted turn id ends exactly once overall.
  const open = accepted.filter((turnId) => !endedBefore.has(turnId));
  await until(
    () => open.every((turnId) => frames(stream2).some((e) => endsTurn(e, turnId))),
    'every open turn ended after the restart',
  );
  const after = frames(stream2);
  for (const turnId of accepted) {
    const endings = after.filter((e) => endsTurn(e, turnId)).length + (endedBefore.has(turnId) ? 1 : 0);
    if (endings !== 1) t.fail(`turn ${turnId} ended ${endings} times`);
  }
  t.pass(`${accepted.length} accepted turn ids ended exactly once`);
  const endOf = (turnId: string) => after.find((e) => endsTurn(e, turnId))!;
  t.match(
    endOf(running),
    { event_type: 'agent.error', payload: { code: 'daemon_restart', turn_id: running } },
    'the turn cut short is announced',
  );
  for (const turnId of [...burst, ...busyQueued])
    t.equal(endOf(turnId).event_type, 'turn.completed', 'queued work ran after the restart');
  t.match(
    endOf(approverTurn),
    { event_type: 'turn.completed', payload: { text: 'written' } },
    'the approved turn resumed and completed',
  );
  t.equal(
    after.filter((e) => e.event_type === 'turn.started' && e.turn_id === keyed).length +
      after.filter((e) => e.event_type === 'chat.delivered' && e.payload.turn_ids.includes(keyed)).length,
    1,
    'the keyed chat ran once',
  );

  const task = await c2.request('GET', `/agents/${ids.approver}/tasks/${taskId}`);
  t.equal(task.body.status, 'completed');
  const approverRows = (await c2.request('GET', `/agents/${ids.approver}/loop?limit=500&offset=0`)).body.rows;
  t.ok(
    approverRows.some(
      (row: any) => row.role === 'tool' && row.content.toolCallId === 'call_write' && !row.content.isError,
    ),
    'the approved tool ran once the owner approved',
  );
  const busyRows = (await c2.request('GET', `/agents/${ids.busy}/loop?limit=500&offset=0`)).body.rows;
  t.ok(
    busyRows.some((row: any) => row.kind === 'notice' && row.turn_id === running),
    'the model reads that the turn was cut short',
  );

  // Every row announced before the kill is in the file.
  const missing: string[] = [];
  for (const name of Object.keys(files) as Array<keyof typeof files>) {
    const rows = (await c2.request('GET', `/agents/${ids[name]}/loop?limit=500&offset=0`)).body.rows as Array<{
      id: number;
    }>;
    const present = new Set(rows.map((row) => row.id));
    for (const event of appended.filter((e) => e.agent_id === ids[name]))
      if (!present.has(event.payload.row_id)) missing.push(`${name}#${event.payload.row_id}`);
  }
  t.same(missing, [], `all ${appended.length} rows announced before the kill are in the files`);

  // A clean shutdown, then every file is sound and nothing is left half-done.
  d2.child.kill('SIGTERM');
  t.equal(await d2.exited, 0, 'clean shutdown');
  for (const [name, path] of Object.entries(files)) {
    const db = new Database(path, { readonly: true });
    try {
      t.equal(
        (db.prepare('PRAGMA integrity_check').get() as { integrity_check: string }).integrity_check,
        'ok',
        `${name}: integrity_check ok`,
      );
      t.equal(
        (db.prepare('SELECT count(*) AS n FROM agt_queue').get() as { n: number }).n,
        0,
        `${name}: no accepted turn left`,
      );
      t.equal(
        (
          db.prepare("SELECT count(*) AS n FROM agt_tasks WHERE status IN ('pending_approval', 'running')").get() as {
            n: number;
          }
        ).n,
        0,
        `${name}: no open task left`,
      );
    } finally {
      db.close();
    }
  }
});
