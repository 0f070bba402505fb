import { createServer } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import t from 'tap';
import { z } from 'zod';
import { wireDaemon } from './helpers/wire-daemon.js';

/** The owner's MCP server `web` (Streamable HTTP, stateless, in this process): one tool, web_search. */
const web = createServer((req, res) => {
  const mcp = new McpServer({ name: 'web', version: '1.0.0' });
  mcp.registerTool('web_search', { description: 'search the web', inputSchema: { q: z.string() } }, async () => ({
    content: [{ type: 'text', text: '' }],
  }));
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on('close', () => void transport.close().then(() => mcp.close()));
  void mcp.connect(transport).then(() => transport.handleRequest(req, res));
});
await new Promise<void>((done) => web.listen(0, '127.0.0.1', done));
t.teardown(() => new Promise((done) => web.close(done)));
const webUrl = `http://127.0.0.1:${(web.address() as { port: number }).port}/mcp`;

const sumOf = (categories: Array<{ tokens: number }>) => categories.reduce((sum, c) => sum + c.tokens, 0);

t.test('context usage: categories, estimates, items, availability and threshold resolution', async (t) => {
  const h = await wireDaemon(t, { settings: { mcpServers: [{ name: 'web', type: 'http', url: webUrl }] } });
  const id = await h.agent({
    name: 'ctx',
    mcp: { servers: [{ name: 'web', transport: 'http' }] },
    instructions: 'x'.repeat(4000),
    model: { provider: 'local', model_id: 'test-model', compact_threshold: 50_000 },
    loops: [
      { name: 'inner', goal: 'g'.repeat(400), enabled: true, compact_threshold: 2000 },
      { name: 'off', goal: 'o', enabled: false },
    ],
  });
  for (let i = 0; i < 500; i++) {
    const server = (await h.d.request('GET', `/agents/${id}/mcp`)).body.servers.find(
      (x: { name: string }) => x.name === 'web',
    );
    if (server?.status === 'connected') break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const turn = (await h.d.request('POST', '/agents/ctx/chat', { text: 'y'.repeat(800) })).body.turnId;
  await h.ended(turn);

  const main = await h.d.request('GET', '/agents/ctx/context');
  t.equal(main.status, 200);
  const body = main.body;
  t.match(body, {
    agentId: /./,
    loop: 'main',
    available: true,
    compactThreshold: 50_000,
    compactThresholdSource: 'model',
    agentCompactThreshold: 50_000,
  });
  t.type(body.computed_at, 'number');
  t.type(body.note, 'string');
  const ids = body.categories.map((c: any) => c.id);
  t.same([...ids].sort(), ['dynamic', 'files', 'mcp:web', 'messages', 'system', 'tools']);
  t.equal(sumOf(body.categories), body.totalTokens, 'categories sum to totalTokens');
  const tokens = body.categories.map((c: any) => c.tokens);
  t.same(
    tokens,
    [...tokens].sort((a: number, b: number) => b - a),
    'biggest first',
  );
  const system = body.categories.find((c: any) => c.id === 'system');
  t.equal(system.tokens, 1000, 'ceil(4000 chars / 4)');
  t.equal(body.breakdown.system_prompt_parts.instructions, 1000);
  const messages = body.categories.find((c: any) => c.id === 'messages');
  t.equal(messages.count, 2, 'the chat and the answer');
  t.equal(messages.tokens, 200 + 1 + 2 * 4, '800 chars + "ok" + framing');
  t.equal(body.breakdown.messages_tokens + body.breakdown.overhead_tokens, messages.tokens);
  const mcp = body.categories.find((c: any) => c.id === 'mcp:web');
  t.match(mcp, { key: 'mcp:web', count: 1, items: [{ name: 'web_search' }] });
  t.ok(body.categories.find((c: any) => c.id === 'tools').count > 10, 'built-in tools');
  t.equal(body.breakdown.tools_total_tokens, body.categories.find((c: any) => c.id === 'tools').tokens + mcp.tokens);
  t.equal(body.percent, Math.round((body.totalTokens / 50_000) * 100));

  const few = (await h.d.request('GET', '/agents/ctx/context?items=1')).body;
  t.ok(
    few.categories.every((c: any) => c.items.length <= 1),
    'items caps entries per category',
  );
  t.ok(
    body.categories.every((c: any) => c.items.length <= 12),
    'default 12',
  );
  t.equal((await h.d.request('GET', '/agents/ctx/context?items=5000')).status, 200, 'clamped to 200');
  t.equal((await h.d.request('GET', '/agents/ctx/context?items=-1')).status, 400);

  const asleep = (await h.d.request('GET', '/agents/ctx/context?loop=inner')).body;
  t.match(asleep, {
    available: false,
    totalTokens: null,
    percent: null,
    categories: [],
    compactThreshold: 2000,
    compactThresholdSource: 'loop',
    agentCompactThreshold: 50_000,
  });
  t.match((await h.d.request('GET', '/agents/ctx/context?loop=off')).body, { available: false, categories: [] });
  t.equal((await h.d.request('GET', '/agents/ctx/context?loop=nope')).status, 404);

  await h.ended((await h.d.request('POST', '/agents/ctx/chat', { text: 'hi', loop: 'inner' })).body.turnId);
  const inner = (await h.d.request('GET', '/agents/ctx/context?loop=inner')).body;
  t.equal(inner.available, true);
  t.same(
    inner.categories
      .find((c: any) => c.id === 'tools')
      .items.map((i: any) => i.name)
      .sort(),
    ['loop_list', 'loop_send', 'sys_set_state'],
  );
  t.notOk(
    inner.categories.some((c: any) => c.id === 'mcp:web'),
    'only the loop’s own tools',
  );
  t.ok(inner.breakdown.system_prompt_parts.base_and_sections > 0);
  t.equal(inner.breakdown.system_prompt_parts.instructions, 100, 'the goal');
  t.equal(sumOf(inner.categories), inner.totalTokens);

  await h.agent({
    name: 'by-agent',
    context: { compact_threshold: 30_000 },
    model: { provider: 'local', model_id: 'm', compact_threshold: 50_000 },
  });
  t.match((await h.d.request('GET', '/agents/by-agent/context')).body, {
    compactThreshold: 30_000,
    compactThresholdSource: 'agent',
    agentCompactThreshold: 30_000,
  });
  await h.agent({ name: 'plain' });
  t.match((await h.d.request('GET', '/agents/plain/context')).body, {
    compactThreshold: 100_000,
    compactThresholdSource: 'default',
    agentCompactThreshold: 100_000,
    available: true,
  });
});
