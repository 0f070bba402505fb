/**
 * How an agent's servers start: in parallel, the first turn waiting at most `startBudgetMs` (a server
 * that is slow to answer joins later, or fails at the connect limit), and an HTTP server that only
 * speaks the older HTTP+SSE transport (server-everything's `sse` mode) reached through the fallback.
 */
import { join } from 'node:path';
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { ROOT, runDaemon, tempDir } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';
import { turnEnd } from './helpers/turn-wait.js';
import { FIXTURE_DIR, gone, startEverythingHttp } from './helpers/mcp.js';
import { reply, startFakeOpenAI } from './fakes/openai.js';

t.test('a slow server does not hold the first turn; the SSE fallback', async (t) => {
  const legacy = await startEverythingHttp(t, 'sse');
  const fake = await startFakeOpenAI(t, [
    reply.toolCalls([{ name: 'mcp_legacy_echo', args: { message: 'over sse' } }]),
    reply.text('done'),
  ]);
  const fixture = join(FIXTURE_DIR, 'server.mjs');
  const d = await runDaemon(t, {
    extensions: {
      extensions: [
        {
          name: 'providers',
          module: join(ROOT, 'extensions/providers/index.ts'),
          enabled: true,
          config: { maxRetries: 0 },
        },
        {
          name: 'mcp',
          module: join(ROOT, 'extensions/mcp/index.ts'),
          enabled: true,
          config: { startBudgetMs: 2500, connectTimeoutMs: 12000, reconnectTries: 0 },
        },
      ],
    },
    settings: {
      providers: [
        { id: 'fake', type: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, defaultModel: 'fake-1' },
      ],
      mcpServers: [
        { name: 'fast', type: 'command', command: process.execPath, args: [fixture] },
        {
          name: 'slow',
          type: 'command',
          command: process.execPath,
          args: [fixture],
          env: { FIXTURE_START_DELAY_MS: '60000' },
        },
        { name: 'legacy', type: 'http', url: legacy.url },
        { name: 'late', type: 'command', command: process.execPath, args: [fixture] },
      ],
    },
  });
  const log = await eventLog(t, d);
  const servers = async () =>
    Object.fromEntries(((await d.request('GET', `/agents/${id}/mcp`)).body.servers as any[]).map((s) => [s.name, s]));
  // Waits on conditions, not on clocks (the file runs on loaded machines): tap's timeout is the cap.
  const until = async (check: () => Promise<boolean>) => {
    while (!(await check())) await new Promise((r) => setTimeout(r, 50));
  };

  const path = await createAgentFile(tempDir(t), {
    model: { provider: 'fake', model_id: 'fake-1' },
    mcp: {
      servers: ['fast', 'slow', 'legacy'].map((name) => ({ name, transport: name === 'legacy' ? 'http' : 'stdio' })),
    },
  } as never);
  const id = (await d.request('POST', '/agents/load', { filePath: path })).body.id;
  // The turn starts once the fast servers are up (however long that takes here), while the slow one is
  // still connecting: it is offered what is connected instead of waiting for the slow one.
  await until(async () => {
    const now = await servers();
    return now.fast?.status === 'connected' && now.legacy?.status === 'connected';
  });
  const turnId = (await d.request('POST', `/agents/${id}/chat`, { text: 'go' })).body.turnId;
  t.match(await turnEnd(log, turnId, 60_000), { event_type: 'turn.completed', payload: { tool_calls: 1 } });
  const atEnd = await servers();
  t.equal(atEnd.slow.status, 'connecting', 'the turn ran while the slow server was still connecting');
  t.equal(atEnd.fast.status, 'connected');
  t.match(atEnd.legacy, { status: 'connected', transport: 'http' });
  const offered = (fake.chatRequests()[0]!.body.tools as any[]).map((tool) => tool.function.name);
  t.ok(
    offered.includes('mcp_fast_echo') && offered.includes('mcp_legacy_echo'),
    `the servers that connected in time are offered (${offered.filter((n) => n.startsWith('mcp_')).length} MCP tools)`,
  );
  t.notOk(offered.some((name) => name.startsWith('mcp_slow_')));
  const toolMessage = (fake.chatRequests()[1]!.body.messages as any[]).find((m) => m.role === 'tool');
  t.match(toolMessage.content, /Echo: over sse/);

  await until(async () => (await servers()).slow.status !== 'connecting');
  const slow = (await servers()).slow;
  t.match(slow, { status: 'error', error: /no answer within the connect limit of 12000 ms/ });
  t.notOk('pid' in slow, 'the slow child was killed');

  // A server declared while the agent runs starts at its restart route (as the steps of docs/mcp.md do).
  const servers2 = [
    ...['fast', 'slow', 'legacy'].map((name) => ({ name, transport: name === 'legacy' ? 'http' : 'stdio' })),
    { name: 'late', transport: 'stdio' },
  ];
  t.equal((await d.request('PATCH', `/agents/${id}/config`, { mcp: { servers: servers2 } })).status, 200);
  t.match((await d.request('POST', `/agents/${id}/mcp/late/restart`)).body, {
    name: 'late',
    status: 'connected',
    toolCount: 8,
  });
  t.ok(
    ((await d.request('GET', `/agents/${id}/tools`)).body.tools as any[]).some(
      (tool) => tool.name === 'mcp_late_echo' && tool.source === 'mcp:late',
    ),
  );

  // Removed from the config: its tools go and its child is closed.
  const latePid = (await servers()).late.pid;
  t.equal(
    (await d.request('PATCH', `/agents/${id}/config`, { mcp: { servers: servers2.filter((s) => s.name !== 'late') } }))
      .status,
    200,
  );
  t.notOk(
    ((await d.request('GET', `/agents/${id}/tools`)).body.tools as any[]).some((tool) => tool.source === 'mcp:late'),
  );
  t.same(await gone([latePid]), [], 'the undeclared server was closed');

  const pids = [atEnd.fast.pid, atEnd.slow.pid];
  t.equal((await d.request('POST', `/agents/${id}/unload`)).status, 200);
  t.same(await gone(pids), []);
});
