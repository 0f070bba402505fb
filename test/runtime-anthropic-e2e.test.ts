/**
 * End to end through the real providers extension and a fake server speaking the Anthropic Messages
 * wire format: extended thinking with a tool call. The thinking block (with its signature) is stored
 * with the assistant row and sent back with the assistant message on the next call, as the API demands
 * (the fake answers 400 like Anthropic when it is missing); `GET chat` never shows it as text.
 */
import { join } from 'node:path';
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { ROOT, runDaemon, tempDir } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';
import { turnEnd } from './helpers/turn-wait.js';
import { reply, startFakeAnthropic } from './fakes/anthropic.js';

const KEY_ENV = 'FAKE_ANTHROPIC_E2E_KEY';

t.test('thinking + tools: the second request carries the thinking block with its signature', async (t) => {
  const fake = await startFakeAnthropic(
    t,
    (request, index) => {
      if (index === 0)
        return reply.toolCalls([{ id: 'toolu_1', name: 'fs_write', args: { path: 'a.txt', content: 'hi' } }], {
          thinking: 'I should write the file',
        });
      // Anthropic: with thinking on, an assistant message continuing a tool use must start with its thinking block.
      const assistant = (request.body.messages as any[]).find((m) => m.role === 'assistant');
      if (assistant?.content?.[0]?.type !== 'thinking') {
        return reply.error(400, {
          message: 'messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`.',
        });
      }
      return reply.text('Done.');
    },
    { expectKey: 'sk-ant-test-key' },
  );
  const d = await runDaemon(t, {
    extensions: {
      extensions: [
        {
          name: 'providers',
          module: join(ROOT, 'extensions/providers/index.ts'),
          enabled: true,
          config: { maxRetries: 0 },
        },
      ],
    },
    settings: {
      providers: [{ id: 'claude', type: 'anthropic', name: 'Claude', baseUrl: fake.baseUrl, apiKeyEnv: KEY_ENV }],
    },
    env: { [KEY_ENV]: 'sk-ant-test-key' },
  });
  const log = await eventLog(t, d);
  const path = await createAgentFile(tempDir(t), {
    model: { provider: 'claude', model_id: 'claude-sonnet-4', max_tokens: 1000, reasoning: { effort: 'low' } },
  });
  const id = (await d.request('POST', '/agents/load', { filePath: path })).body.id;

  const turnId = (await d.request('POST', `/agents/${id}/chat`, { text: 'write a.txt' })).body.turnId;
  const end = await turnEnd(log, turnId);
  t.equal(end?.event_type, 'turn.completed', JSON.stringify(end?.payload));
  t.match(end?.payload, { text: 'Done.', llm_calls: 2, tool_calls: 1 });

  const [first, second] = fake.messageRequests();
  t.match(first!.body, { thinking: { type: 'enabled', budget_tokens: 2048 } });
  const assistant = (second!.body.messages as any[]).find((m) => m.role === 'assistant');
  t.same(assistant.content, [
    { type: 'thinking', thinking: 'I should write the file', signature: 'fake-signature' },
    { type: 'tool_use', id: 'toolu_1', name: 'fs_write', input: { path: 'a.txt', content: 'hi' } },
  ]);

  const history = (await d.request('GET', `/agents/${id}/chat`)).body.llmMessages as any[];
  const call = history.find((m) => m.role === 'assistant' && m.toolCalls);
  t.equal(call.content, '', 'the thinking is not shown as text');
  t.notOk(JSON.stringify(history).includes('fake-signature'), 'nor anywhere in GET chat');
});
