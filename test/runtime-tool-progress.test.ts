/**
 * Units of what tools and extensions reach for MCP notifications: `ToolContext.progress(update)` announces at most
 * one `tool.progress` per 100 ms of a call (the first at once, the newest of a burst in the next slot, nothing
 * after the call ended, messages cut to 500 characters), on a fake clock; `ctx.agents.turns.fire` takes only the
 * triggers extensions may fire, with data no deeper than JSON's limit. The black-box side is
 * test/mcp-notifications.test.ts.
 */
import t from 'tap';
import type { ToolContext, ToolDefinition, ToolProgress, ToolResult } from '../contracts/index.js';
import { FakeClock } from '../kernel/runtime/clock.js';
import { callTool, PROGRESS_EVENT_MS } from '../kernel/runtime/executor/tool-call.js';
import { turnsAccess } from '../kernel/runtime/turns-access.js';
import type { AgentRuntime } from '../kernel/runtime/agent-runtime.js';

t.test('tool.progress: the first at once, then the newest per interval, none after the end', async (t) => {
  const clock = new FakeClock();
  const announced: ToolProgress[] = [];
  let progress: ToolContext['progress'];
  let finish!: (result: ToolResult) => void;
  const tool: ToolDefinition = {
    name: 'long',
    description: 'works long',
    inputSchema: { type: 'object' },
    source: 'builtin',
    run: (_args, context) => {
      progress = context.progress;
      return new Promise((done) => (finish = done));
    },
  };
  const context: ToolContext = {
    agentId: 'a',
    loop: 'main',
    turnId: 't',
    signal: new AbortController().signal,
    logger: console as never,
  };
  const running = callTool(tool, {}, context, 60_000, clock, undefined, (update) => announced.push(update));
  await new Promise((r) => setImmediate(r));
  progress!({ progress: 1, total: 3, message: 'x'.repeat(600) });
  progress!({ progress: 2, total: 3 });
  progress!({ progress: 2.5, total: 3, message: 'newest' });
  t.same(announced, [{ progress: 1, total: 3, message: 'x'.repeat(500) }], 'the first at once, its message cut');
  clock.advance(PROGRESS_EVENT_MS - 1);
  t.equal(announced.length, 1, 'nothing more within the interval');
  clock.advance(1);
  t.same(announced[1], { progress: 2.5, total: 3, message: 'newest' }, 'the newest of the burst');
  progress!({ progress: Number.NaN });
  progress!({ progress: 3 });
  finish({ content: 'done' });
  t.same((await running).result, { content: 'done' });
  clock.advance(10 * PROGRESS_EVENT_MS);
  t.equal(announced.length, 2, 'what was held when the call ended is not announced');
  progress!({ progress: 4 });
  clock.advance(10 * PROGRESS_EVENT_MS);
  t.equal(announced.length, 2, 'nor anything reported after it');
});

t.test('ctx.agents.turns.fire: only the triggers extensions may fire, bounded data', async (t) => {
  const fired: Array<{ type: string; data: unknown }> = [];
  const runtime = {
    fire: (type: string, data: unknown) => {
      fired.push({ type, data });
      return 1;
    },
  } as unknown as AgentRuntime;
  const access = turnsAccess((agentId) => (agentId === 'a' ? runtime : undefined));
  t.equal(access.fire!('a', 'on_mcp_resource', { server: 's', uri: 'fixture://x' }), 1);
  t.same(fired, [{ type: 'on_mcp_resource', data: { server: 's', uri: 'fixture://x' } }]);
  t.throws(() => access.fire!('a', 'on_inbox' as never, {}), { code: 'bad_request' }, "the kernel's own sources");
  let deep: unknown = 'leaf';
  for (let i = 0; i < 70; i++) deep = { deep };
  t.throws(() => access.fire!('a', 'on_mcp_resource', deep), { code: 'bad_request' }, 'data nested too deep');
  t.throws(() => access.fire!('b', 'on_mcp_resource', {}), { code: 'not_found' }, 'an agent not loaded');
  t.equal(fired.length, 1, 'nothing refused reached the runtime');
});
