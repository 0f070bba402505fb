/**
 * The mcp extension switched off: its routes answer 503 `unavailable` naming it, and an agent that
 * declares MCP servers still loads and chats (without their tools).
 */
import { join } from 'node:path';
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { ROOT, runDaemon, tempDir } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';
import { turnEnd } from './helpers/turn-wait.js';
import { EVERYTHING } from './helpers/mcp.js';
import { reply, startFakeOpenAI } from './fakes/openai.js';

t.test('mcp off: 503 on its routes, the agent loads and chats', async (t) => {
  const fake = await startFakeOpenAI(t, [reply.text('hello without MCP')]);
  const d = await runDaemon(t, {
    extensions: {
      extensions: [
        {
          name: 'providers',
          module: join(ROOT, 'extensions/providers/index.ts'),
          enabled: true,
          config: { maxRetries: 0 },
        },
        { name: 'mcp', module: join(ROOT, 'extensions/mcp/index.ts'), enabled: false, config: {} },
      ],
    },
    settings: {
      providers: [
        { id: 'fake', type: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, defaultModel: 'fake-1' },
      ],
      mcpServers: [{ name: 'everything', type: 'command', command: process.execPath, args: [EVERYTHING, 'stdio'] }],
    },
  });
  const log = await eventLog(t, d);
  const path = await createAgentFile(tempDir(t), {
    model: { provider: 'fake', model_id: 'fake-1' },
    mcp: { servers: [{ name: 'everything', transport: 'stdio' }] },
  } as never);
  const loaded = await d.request('POST', '/agents/load', { filePath: path });
  t.equal(loaded.status, 200);
  const id = loaded.body.id;

  for (const [method, route] of [
    ['GET', '/mcp'],
    ['POST', '/mcp/servers'],
    ['GET', '/mcp/packages'],
    ['GET', `/agents/${id}/mcp`],
    ['POST', `/agents/${id}/mcp/everything/restart`],
  ] as const) {
    const answer = await d.request(method, route, method === 'POST' ? {} : undefined);
    t.equal(answer.status, 503, `${method} ${route}`);
    t.match(answer.body, { code: 'unavailable', error: /mcp/ });
  }
  const tools = (await d.request('GET', `/agents/${id}/tools`)).body.tools as Array<{ source: string }>;
  t.notOk(
    tools.some((tool) => tool.source.startsWith('mcp:')),
    'no MCP tools',
  );

  const turnId = (await d.request('POST', `/agents/${id}/chat`, { text: 'hi' })).body.turnId;
  t.match(await turnEnd(log, turnId), { event_type: 'turn.completed', payload: { text: 'hello without MCP' } });
});
