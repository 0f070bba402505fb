/**
 * End to end through the real providers extension and a fake server speaking the OpenAI Chat
 * Completions wire format: streaming, tool calls, usage, an upstream failure and an interrupt that
 * cancels the HTTP request.
 */
import { join } from 'node:path';
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { ROOT, runDaemon, tempDir } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';
import { turnEnd } from './helpers/turn-wait.js';
import { reply, startFakeOpenAI } from './fakes/openai.js';

const manifest = {
  extensions: [
    {
      name: 'providers',
      module: join(ROOT, 'extensions/providers/index.ts'),
      enabled: true,
      config: { maxRetries: 1, retryBaseMs: 10, retryMaxMs: 20 },
    },
  ],
};

t.test('a turn over the OpenAI wire format', async (t) => {
  const fake = await startFakeOpenAI(t, [
    reply.toolCalls([{ name: 'fs_write', args: { path: 'hello.txt', content: 'from the model' } }]),
    reply.text('I wrote the file.', { usage: { input: 40, output: 7 } }),
    reply.error(500),
    reply.error(500),
    reply.stall(),
  ]);
  const d = await runDaemon(t, {
    extensions: manifest,
    settings: {
      providers: [
        { id: 'fake', type: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, defaultModel: 'fake-1' },
      ],
    },
  });
  const log = await eventLog(t, d);
  const events = log.events;
  const ended = (turnId: string) => turnEnd(log, turnId);
  const path = await createAgentFile(tempDir(t), {
    model: { provider: 'fake', model_id: 'fake-1' },
    instructions: 'You are terse.',
  });
  const id = (await d.request('POST', '/agents/load', { filePath: path })).body.id;

  const turn = (await d.request('POST', `/agents/${id}/chat`, { text: 'write a file' })).body.turnId;
  const end = await ended(turn);
  t.equal(end.event_type, 'turn.completed');
  t.match(end.payload, { text: 'I wrote the file.', llm_calls: 2, tool_calls: 1 });
  const [first, second] = fake.chatRequests();
  t.equal(first!.body.model, 'fake-1');
  t.same(first!.body.messages.slice(0, 2), [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'write a file' },
  ]);
  t.ok(
    first!.body.tools.some((tool: any) => tool.function.name === 'fs_write'),
    'built-in tools are offered',
  );
  const toolMessage = second!.body.messages.find((m: any) => m.role === 'tool');
  t.match(toolMessage, { tool_call_id: 'call_1', content: /wrote hello.txt/ });
  t.match(
    (await d.request('GET', `/agents/${id}/files/content?path=hello.txt`)).body,
    { path: 'hello.txt', content: 'from the model' },
    'the file is in the agent',
  );
  t.ok(
    events.some((e) => e.event_type === 'llm.delta' && e.turn_id === turn),
    'streamed deltas',
  );
  const usage = events.filter((e) => e.event_type === 'llm.completed').map((e) => (e.payload as any).usage.input);
  t.same(usage, [12, 40]);
  const rollup = (await d.request('GET', `/agents/${id}/usage`)).body;
  t.equal(rollup.totals.input, 52, 'usage columns feed the rollup');

  const failing = (await d.request('POST', `/agents/${id}/chat`, { text: 'again' })).body.turnId;
  const failed = await ended(failing);
  t.equal(failed.event_type, 'agent.error');
  t.match(failed.payload, { code: 'upstream_error', status: 500 });

  const stalled = (await d.request('POST', `/agents/${id}/chat`, { text: 'hang' })).body.turnId;
  for (let i = 0; i < 500 && fake.chatRequests().length < 5; i++) await new Promise((r) => setTimeout(r, 20));
  t.same((await d.request('POST', `/agents/${id}/interrupt`)).body, { success: true, interrupted: true, loop: 'main' });
  t.equal(((await ended(stalled)).payload as any).stop_reason, 'interrupted');
  const cancelled = fake.chatRequests()[4]!;
  await cancelled.done;
  t.equal(cancelled.clientAborted, true, 'the HTTP request was cancelled');
});
