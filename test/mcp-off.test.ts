/**
 * The mcp extension switched off: its routes answer 503 `unavailable` naming it, and an agent that
 * declares MCP servers still loads and chats (without their tools).
 */
import { join } from 'node:path';
import t from 'tap';
import type { UmbilicalEvent } from '../contracts/events.js';
import { createAgentFile } from './helpers/agent-file.js';
import { bootDaemon, ROOT, tempDir } from './helpers/daemon.js';
import { EVERYTHING } from './helpers/mcp.js';
import { reply, startFakeOpenAI } from './fakes/openai.js';
import { endsTurn } from './fixtures/runtime/harness.js';

t.test('mcp off: 503 on its routes, the agent loads and chats', async (t) => {
  const fake = await startFakeOpenAI(t, [reply.text('hello without MCP')]);
  const d = await bootDaemon(t, {
    extensions: {
      extensions: [
        { name: 'providers', module: join(ROOT, 'extensions/providers/index.ts'), enabled: true, config: { maxRetries: 0 } },
        { name: 'mcp', module: join(ROOT, 'extensions/mcp/index.ts'), enabled: false, config: {} },
      ],
    },
    settings: {
      providers: [{ id: 'fake', type: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, defaultModel: 'fake-1' }],
      mcpServers: [{ name: 'everything', type: 'command', command: process.execPath, args: [EVERYTHING, 'stdio'] }],
    },
  });
  const events: UmbilicalEvent[] = [];
  t.teardown(d.daemon.kernel.bus.subscribe((e) => events.push(e)));
  const path = await createAgentFile(tempDir(t), { model: { provider: 'fake', model_id: 'fake-1' }, mcp: { servers: [{ name: 'everything', transport: 'stdio' }] } } as never);
  const loaded = await d.request('POST', '/agents/load', { filePath: path });
  t.equal(loaded.status, 200);
  const id = loaded.body.id;

  for (const [method, route] of [['GET', '/mcp'], ['POST', '/mcp/servers'], ['GET', '/mcp/packages'], ['GET', `/agents/${id}/mcp`], ['POST', `/agents/${id}/mcp/everything/restart`]] as const) {
    const answer = await d.request(method, route, method === 'POST' ? {} : undefined);
    t.equal(answer.status, 503, `${method} ${route}`);
    t.match(answer.body, { code: 'unavailable', error: /mcp/ });
  }
  const tools = (await d.request('GET', `/agents/${id}/tools`)).body.tools as Array<{ source: string }>;
  t.notOk(tools.some((tool) => tool.source.startsWith('mcp:')), 'no MCP tools');

  const turnId = (await d.request('POST', `/agents/${id}/chat`, { text: 'hi' })).body.turnId;
  for (let i = 0; i < 500 && !events.some((e) => endsTurn(e, turnId)); i++) await new Promise((r) => setTimeout(r, 20));
  t.match(events.find((e) => endsTurn(e, turnId)), { event_type: 'turn.completed', payload: { text: 'hello without MCP' } });
});
