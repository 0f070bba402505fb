/**
 * The operator's view of the daemon on the built daemon with a scripted model (the fake OpenAI server):
 * agent states in GET /agents, GET /tasks across agents, PATCH config (JSON Merge Patch), chat with
 * ?wait=true / Prefer: wait=N, the Files routes and GET /runtime. One daemon for the file.
 */
import t from 'tap';
import { Gate } from './fixtures/runtime/scripted-model.js';
import { wireDaemon } from './helpers/wire-daemon.js';

t.test('operator routes', async (t) => {
  const h = await wireDaemon(t);
  const a = await h.agent({ name: 'alpha', tools: [{ name: 'fs_write', enabled: true, restricted: true }] });
  const b = await h.agent({ name: 'beta' });

  await t.test('GET /agents carries runtimeState and displayState', async (t) => {
    const list = (await h.d.request('GET', '/agents')).body as Array<Record<string, unknown>>;
    const alpha = list.find((agent) => agent.id === a)!;
    t.match(alpha, {
      name: 'alpha',
      runtimeState: String,
      displayState: (await h.d.request('GET', `/agents/${a}/config`)).body.config.state,
    });
    t.equal(alpha.displayState, 'idle');
    // A separate agent: a hibernated agent is left out of the turns below.
    const c = await h.agent({ name: 'gamma' });
    await h.d.request('POST', `/agents/${c}/state`, { state: 'hibernate' });
    const gamma = ((await h.d.request('GET', '/agents')).body as Array<Record<string, unknown>>).find(
      (agent) => agent.id === c,
    )!;
    t.equal(gamma.displayState, 'hibernate');
    await h.d.request('POST', `/agents/${c}/stop`);
  });

  await t.test('chat ?wait=true answers with the reply once the turn ends; 202 stays the default', async (t) => {
    h.model.push({ text: 'waited reply' });
    const waited = await h.d.request('POST', `/agents/${a}/chat?wait=true`, { text: 'hello' });
    t.equal(waited.status, 200);
    t.match(waited.body, {
      accepted: true,
      turnId: String,
      status: 'completed',
      text: 'waited reply',
      error: null,
      llmCalls: 1,
    });
    t.equal(waited.headers.get('preference-applied'), 'wait=300');
    h.model.push({ text: 'plain' });
    const plain = await h.d.request('POST', `/agents/${a}/chat`, { text: 'again' });
    t.equal(plain.status, 202);
    t.same(Object.keys(plain.body).sort(), ['accepted', 'turnId']);
    await h.ended(plain.body.turnId);

    h.model.push({ error: { code: 'upstream_error', message: 'vendor down', status: 502 } });
    const failed = await h.d.request('POST', `/agents/${a}/chat`, { text: 'fail' }, { prefer: 'wait=30' });
    t.equal(failed.status, 200);
    t.match(failed.body, { status: 'error', text: null, error: { code: 'upstream_error' } });
    t.equal(failed.headers.get('preference-applied'), 'wait=30');

    // A turn that outlasts the wait: 202 as without it, and the turn still ends normally.
    const gate = new Gate();
    h.model.push({ gate, then: { text: 'late' } });
    const early = await h.d.request('POST', `/agents/${a}/chat`, { text: 'slow' }, { prefer: 'wait=1' });
    t.equal(early.status, 202);
    gate.release();
    t.equal((await h.ended(early.body.turnId)).event_type, 'turn.completed');

    // A repeated Idempotency-Key names a turn that ended already: answered from the buffered events.
    h.model.push({ text: 'once' });
    const first = await h.d.request(
      'POST',
      `/agents/${a}/chat?wait=true`,
      { text: 'idem' },
      { 'idempotency-key': 'k-1' },
    );
    const again = await h.d.request(
      'POST',
      `/agents/${a}/chat?wait=true`,
      { text: 'idem' },
      { 'idempotency-key': 'k-1' },
    );
    t.equal(again.status, 200);
    t.equal(again.body.turnId, first.body.turnId);
    t.equal(again.body.text, 'once');
    t.equal((await h.d.request('POST', `/agents/${a}/chat?wait=nope`, { text: 'x' })).status, 400);
    t.equal((await h.d.request('POST', `/agents/nobody/chat?wait=true`, { text: 'x' })).status, 404);
  });

  await t.test('GET /tasks lists pending approvals and asks across agents', async (t) => {
    // One script for all agents: each agent's second call is pushed once both wait.
    h.model.push({ toolCalls: [{ name: 'fs_write', args: { path: 'a.txt', content: 'x' } }] });
    const turn = (await h.d.request('POST', `/agents/${a}/chat`, { text: 'write' })).body.turnId;
    const requested = await h.waitFor((e) => e.event_type === 'hil.requested' && e.turn_id === turn);
    h.model.push({ toolCalls: [{ name: 'ask', args: { question: 'Which colour?' } }] });
    const askTurn = (await h.d.request('POST', `/agents/${b}/chat`, { text: 'pick' })).body.turnId;
    const asked = await h.waitFor((e) => e.event_type === 'hil.requested' && e.turn_id === askTurn);

    const all = (await h.d.request('GET', '/tasks')).body.tasks as Array<Record<string, unknown>>;
    t.equal(all.length, 2);
    t.match(
      all.find((task) => task.kind === 'approval'),
      {
        id: (requested.payload as any).taskId,
        agentId: a,
        agentName: 'alpha',
        tool: 'fs_write',
        args: { path: 'a.txt' },
        turnId: turn,
        loop: 'main',
      },
    );
    t.match(
      all.find((task) => task.kind === 'ask'),
      { id: (asked.payload as any).requestId, agentId: b, agentName: 'beta', question: 'Which colour?' },
    );
    t.same(((await h.d.request('GET', '/tasks?kind=ask')).body.tasks as unknown[]).length, 1);
    t.equal((await h.d.request('GET', '/tasks?kind=other')).status, 400);

    h.model.push({ text: 'done' }, { text: 'done' });
    await h.d.request('POST', `/agents/${a}/tasks/${(requested.payload as any).taskId}/resolve`, { action: 'deny' });
    await h.d.request('POST', `/agents/${b}/asks/${(asked.payload as any).requestId}/respond`, { answer: 'blue' });
    await Promise.all([h.ended(turn), h.ended(askTurn)]);
    t.same((await h.d.request('GET', '/tasks')).body.tasks, []);
  });

  await t.test('PATCH /agents/{id}/config merges (RFC 7396) and validates as PUT', async (t) => {
    const before = (await h.d.request('GET', `/agents/${b}/config`)).body.config;
    const patched = await h.d.request('PATCH', `/agents/${b}/config`, {
      description: 'patched',
      metadata: { tags: ['x'] },
      handle: null,
    });
    t.equal(patched.status, 200);
    t.equal(patched.body.config.description, 'patched');
    t.same(patched.body.config.metadata.tags, ['x']);
    t.equal(patched.body.config.metadata.created_at, before.metadata.created_at, 'sibling keys kept');
    t.equal(patched.body.config.instructions, before.instructions, 'untouched keys kept');
    t.equal((await h.d.request('GET', `/agents/${b}/config`)).body.config.description, 'patched', 'persisted');
    t.match(await h.d.request('PATCH', `/agents/${b}/config`, { model: { provider: 5 } }), {
      status: 400,
      body: { code: 'bad_request' },
    });
    t.match(await h.d.request('PATCH', `/agents/${b}/config`, { id: 'another' }), { status: 400 });
    t.match(
      await h.d.request('PATCH', `/agents/${b}/config`, { name: null }),
      { status: 400 },
      'a required key cannot be removed',
    );
    t.equal((await h.d.request('PATCH', `/agents/${b}/config`, [1, 2])).status, 400);
    t.equal((await h.d.request('PATCH', `/agents/nobody/config`, {})).status, 404);
  });

  await t.test('Files routes', async (t) => {
    const put = await h.d.request('PUT', `/agents/${a}/files/content?path=notes/today.md`, {
      content: '# hi',
      mime_type: 'text/markdown',
    });
    t.equal(put.status, 200);
    t.match(put.body.file, {
      path: 'notes/today.md',
      size: 4,
      mime_type: 'text/markdown',
      protection: 'none',
      created_at: Number,
      updated_at: Number,
    });
    const binary = Buffer.from([0, 255, 1, 2]);
    await h.d.request('PUT', `/agents/${a}/files/content?path=bin/blob`, {
      content: binary.toString('base64'),
      encoding: 'base64',
    });
    const list = (await h.d.request('GET', `/agents/${a}/files`)).body;
    t.same(
      list.files.map((f: { path: string }) => f.path),
      ['bin/blob', 'notes/today.md'],
    );
    t.same((await h.d.request('GET', `/agents/${a}/files?prefix=notes`)).body.files.length, 1);
    t.match((await h.d.request('GET', `/agents/${a}/files/content?path=notes/today.md`)).body, {
      encoding: 'utf-8',
      content: '# hi',
      size: 4,
    });
    const blob = (await h.d.request('GET', `/agents/${a}/files/content?path=bin/blob`)).body;
    t.equal(blob.encoding, 'base64');
    t.same(Buffer.from(blob.content, 'base64'), binary);

    const renamed = await h.d.request('POST', `/agents/${a}/files/rename`, {
      from: 'notes/today.md',
      to: 'notes/old.md',
    });
    t.match(renamed.body.file, { path: 'notes/old.md', created_at: put.body.file.created_at });
    t.equal((await h.d.request('GET', `/agents/${a}/files/content?path=notes/today.md`)).status, 404);
    t.equal(
      (await h.d.request('POST', `/agents/${a}/files/rename`, { from: 'notes/old.md', to: 'bin/blob' })).status,
      409,
    );
    t.equal((await h.d.request('POST', `/agents/${a}/files/rename`, { from: 'nope', to: 'x' })).status, 404);
    for (const bad of ['../etc/passwd', 'a/../b', 'a\\b', '']) {
      t.equal(
        (await h.d.request('GET', `/agents/${a}/files/content?path=${encodeURIComponent(bad)}`)).status,
        400,
        `refused: ${JSON.stringify(bad)}`,
      );
    }

    // readonly binds the agent's own tools, not the owner.
    await h.d.request('PUT', `/agents/${b}/files/content?path=keep.txt`, {
      content: 'owner text',
      protection: 'readonly',
    });
    h.model.push(
      {
        toolCalls: [
          { name: 'fs_write', args: { path: 'keep.txt', content: 'agent text' } },
          { name: 'fs_delete', args: { path: 'keep.txt' } },
        ],
      },
      { text: 'tried' },
    );
    const turn = (await h.d.request('POST', `/agents/${b}/chat`, { text: 'overwrite' })).body.turnId;
    await h.ended(turn);
    const results = h.model.calls.at(-1)!.messages.filter((m) => m.role === 'tool') as Array<{
      content: string;
      isError?: boolean;
    }>;
    t.match(results.slice(-2), [
      { isError: true, content: /readonly/ },
      { isError: true, content: /readonly/ },
    ]);
    t.match((await h.d.request('GET', `/agents/${b}/files/content?path=keep.txt`)).body, { content: 'owner text' });
    const replaced = await h.d.request('PUT', `/agents/${b}/files/content?path=keep.txt`, { content: 'owner again' });
    t.equal(replaced.body.file.protection, 'readonly', 'a replace keeps the protection');

    t.equal((await h.d.request('DELETE', `/agents/${b}/files/content?path=keep.txt`)).status, 200);
    t.equal((await h.d.request('DELETE', `/agents/${b}/files?path=keep.txt`)).status, 404);
    t.equal((await h.d.request('GET', `/agents/nobody/files`)).status, 404);
  });

  await t.test('GET /runtime: diagnostics', async (t) => {
    const info = (await h.d.request('GET', '/runtime')).body;
    t.match(info, {
      version: String,
      pid: h.d.child.pid,
      dataDir: h.d.dataDir,
      memory: { rss: Number, heapUsed: Number },
      agents: { loaded: 2 },
      extensions: Array,
      events: { epoch: String, capacity: 1000, bufferedFrames: Number },
    });
    t.ok(info.uptimeMs >= 0);
    t.equal(
      Object.values(info.agents.byRuntimeState as Record<string, number>).reduce((x, y) => x + y, 0),
      2,
    );
    t.equal((await fetch(`${h.d.url}/runtime`)).status, 401, 'needs the token');
  });
});
