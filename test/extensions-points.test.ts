/**
 * Typed extension points in the built daemon, with fixture extensions: a dependent uses what its
 * dependencies offer, using a point without depending on its provider or providing a `one` point twice
 * fails naming both, offering after register is refused, the kernel asks the agent locator when an agent
 * is started by name, `msg_send` hands messages to the transport that claims their address (an agent's
 * model calls it), and `ctx.env`. The points' own rules without a daemon: extensions-points-internals.test.ts.
 */
import t from 'tap';
import { join } from 'node:path';
import { createAgentFile } from './helpers/agent-file.js';
import { ROOT, runDaemon, tempDir } from './helpers/daemon.js';
import { daemonStarted } from './helpers/daemon-started.js';
import { eventLog } from './helpers/events.js';
import { reviewedAgentFile } from './helpers/tracked-folders.js';
import { turnEnd } from './helpers/turn-wait.js';
import { reply, startFakeOpenAI, type FakeReply } from './fakes/openai.js';

const FIXTURES = join(ROOT, 'test/fixtures/extensions/points');
const replies: FakeReply[] = [];
const model = await startFakeOpenAI(t, replies);

t.test('fixture extensions offering and using points', async (t) => {
  const agentsDir = tempDir(t, 'agt-points-');
  const d = await runDaemon(t, {
    env: { FIXTURE_VAR: 'visible' },
    settings: {
      providers: [
        { id: 'fake', type: 'openai-compatible', name: 'Fake', baseUrl: model.baseUrl, defaultModel: 'fake-1' },
      ],
    },
    extensions: {
      extensions: [
        {
          name: 'providers',
          module: join(ROOT, 'extensions/providers/index.ts'),
          enabled: true,
          config: { maxRetries: 0 },
        },
        // points-user comes first on purpose: `dependsOn` must still load its providers before it.
        { name: 'points-user', module: join(FIXTURES, 'user.ts') },
        {
          name: 'points-provider',
          module: join(FIXTURES, 'provider.ts'),
          config: { agents: { alpha: [join(agentsDir, 'alpha.agt')] } },
        },
        { name: 'points-second', module: join(FIXTURES, 'second.ts') },
        { name: 'points-stranger', module: join(FIXTURES, 'stranger.ts') },
        { name: 'points-rival', module: join(FIXTURES, 'rival.ts') },
      ],
    },
  });
  await daemonStarted(t, d);
  const rows = new Map<string, any>(
    (await d.request('GET', '/runtime/extensions')).body.extensions.map((row: any) => [row.name, row]),
  );

  t.test('a dependent uses what its dependencies offer', async (t) => {
    t.equal(rows.get('points-user').state, 'started');
    const res = await d.request('GET', '/points-user');
    t.equal(res.status, 200);
    t.same(res.body, { greeting: 'hello, agt', words: ['first', 'second', 'third'], again: true });
  });

  t.test('using a point without depending on its provider fails the user, naming both', async (t) => {
    t.match(rows.get('points-stranger'), {
      state: 'failed',
      error:
        'register failed: extension points-stranger uses extension point fixture.greeter, provided by points-provider, without depending on it: add points-provider to its dependsOn',
    });
  });

  t.test('a second provider of a one-provider point fails, naming both; the first keeps it', async (t) => {
    t.match(rows.get('points-rival'), {
      state: 'failed',
      error:
        'register failed: extension point fixture.greeter takes one provider: points-provider provides it, so points-rival cannot',
    });
    t.equal((await d.request('GET', '/points-rival')).status, 503);
    t.match(
      (await d.request('GET', '/points-user')).body,
      { greeting: 'hello, agt' },
      "the user still gets points-provider's greeter",
    );
  });

  t.test('offering after register is refused', async (t) => {
    t.same((await d.request('GET', '/points-provider/late')).body, {
      error: 'extension points-provider offers extension point fixture.words after register: offer it during register',
    });
    t.same(
      (await d.request('GET', '/points-user')).body.words,
      ['first', 'second', 'third'],
      'the late offer is not among the words',
    );
  });

  t.test('the kernel asks the agent locator when an agent is started by name', async (t) => {
    await reviewedAgentFile(d, agentsDir, { name: 'Alpha One' }, 'alpha.agt');
    t.match(
      await d.request('POST', '/agents/alpha/start'),
      { status: 200, body: { loaded: true, agent: { name: 'Alpha One' } } },
      'the path the locator gave',
    );
    t.match(await d.request('POST', '/agents/nobody/start'), { status: 404 });
    t.match(await d.request('POST', '/agents/boom/start'), {
      status: 503,
      body: {
        code: 'unavailable',
        error: 'the agent locator of extension points-provider failed: the index is broken',
      },
    });
  });

  t.test('msg_send hands messages to the transport that claims their address', async (t) => {
    const path = await createAgentFile(agentsDir, {
      name: 'sender',
      model: { provider: 'fake', model_id: 'fake-1' },
      tools: [{ name: 'msg_send', enabled: true }],
      messaging: { mode: 'respond_only' },
    } as never);
    const loaded = await d.request('POST', '/agents/load', { filePath: path });
    t.equal(loaded.status, 200);
    const agentId = loaded.body.id as string;
    // The agent's model calls msg_send four times in one turn.
    const log = await eventLog(t, d);
    replies.push(
      reply.toolCalls([
        { name: 'msg_send', args: { text: 'hi bob', channel: 'fixture', recipient: 'bob', data: { n: 1 } } },
        { name: 'msg_send', args: { text: 'to nowhere', channel: 'fixture', recipient: 'fail' } },
        { name: 'msg_send', args: { text: 'unclaimed', channel: 'slack', recipient: 'general' } },
        { name: 'msg_send', args: { text: 'pending', channel: 'mesh', recipient: 'did:key:z6Mkpending' } },
      ]),
      reply.text('sent'),
    );
    const turnId = (await d.request('POST', `/agents/${agentId}/chat`, { text: 'send them' })).body.turnId as string;
    t.match(await turnEnd(log, turnId), { event_type: 'turn.completed', payload: { tool_calls: 4 } });
    const results = (model.chatRequests().at(-1)!.body.messages as Array<{ role: string; content: string }>)
      .filter((m) => m.role === 'tool')
      .map((m) => m.content);
    t.same(results, [
      'queued message 1 to fixture',
      'queued message 2 to fixture',
      'queued message 3 to slack',
      'queued message 4 to mesh',
    ]);

    const outbox = async () => {
      for (let i = 0; i < 100; i++) {
        const rows = (await d.request('GET', `/agents/${agentId}/outbox`)).body.messages as any[];
        if (!['queued', 'pending'].includes(rows[0].status) && !['queued', 'pending'].includes(rows[1].status))
          return rows;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error('the outbox rows never left queued');
    };
    const rows = await outbox();
    t.match(rows[0], { id: 1, status: 'delivered', attempts: 1, error: null });
    t.ok(rows[0].delivered_at > 0, 'delivered_at is set');
    t.match(rows[1], { id: 2, status: 'failed', attempts: 1, error: 'nobody answers at fixture:fail' });
    t.match(rows[2], { id: 3, status: 'queued', attempts: 0 }, 'no transport claims it: queued, as before transports');
    t.match(rows[3], { id: 4, status: 'pending', attempts: 0 }, 'a transport still sending leaves it pending');
    t.same((await d.request('GET', '/points-provider/sent')).body.sent, [
      {
        agentId,
        messageId: 1,
        address: 'fixture:bob',
        channel: 'fixture',
        recipient: 'bob',
        text: 'hi bob',
        data: { n: 1 },
      },
    ]);
    const logs = (await d.request('GET', `/agents/${agentId}/logs`)).body;
    t.match(
      JSON.stringify(logs),
      /outbox message 2 to fixture:fail failed \(transport of extension points-provider\): nobody answers at fixture:fail/,
    );
  });

  t.test('ctx.env: the environment the daemon was started with, without the kernel AGT_* variables', async (t) => {
    const read = async (name: string) => (await d.request('GET', `/points-provider/env/${name}`)).body.value;
    t.equal(await read('FIXTURE_VAR'), 'visible');
    t.equal(await read('AGT_LOG_LEVEL'), null, 'set for the daemon, hidden from extensions');
    t.equal(await read('AGT_EXTENSIONS'), null);
    t.equal(await read('NOT_SET_AT_ALL'), null);
  });
});
