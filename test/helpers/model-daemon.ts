/**
 * The built daemon (runDaemon) with its app provider `local` answered by a fake OpenAI server
 * (test/fakes/openai.ts) that plays a queue of replies: a test makes an agent call its tools as a model
 * would, and reads what each tool answered from the next request the daemon sent the model.
 */
import { reply, startFakeOpenAI, type FakeOpenAI, type FakeReply, type FakeToolCall } from '../fakes/openai.js';
import { runDaemon, type BootOptions, type SpawnedDaemon } from './daemon.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

/** A tool's answer as the model got it (Chat Completions says an error with an `Error: ` prefix). */
export interface ToolResult {
  content: string;
  isError: boolean;
}

export interface ModelDaemon {
  d: SpawnedDaemon;
  fake: FakeOpenAI;
  /** The replies still to play, one per model call; a drained queue answers 500. */
  script: FakeReply[];
  /** One chat turn of `agentId` in which the model calls `calls`, then ends; the tools' answers in order. */
  callTools(agentId: string, calls: FakeToolCall[]): Promise<ToolResult[]>;
}

/** `settings` are merged with the provider; the agent files' default model (`local`) then reaches the fake. */
export async function modelDaemon(t: Teardown, options: BootOptions = {}): Promise<ModelDaemon> {
  const script: FakeReply[] = [];
  const fake = await startFakeOpenAI(t, script);
  const provider = { id: 'local', type: 'openai-compatible', name: 'Fake OpenAI', baseUrl: fake.baseUrl };
  const d = await runDaemon(t, { ...options, settings: { ...options.settings, providers: [provider] } });
  return {
    d,
    fake,
    script,
    async callTools(agentId, calls) {
      script.push(reply.toolCalls(calls), reply.text('done'));
      const turn = await d.request('POST', `/agents/${agentId}/chat?wait=true`, { text: 'use your tools' });
      if (turn.status !== 200) throw new Error(`the turn did not end: ${turn.status} ${JSON.stringify(turn.body)}`);
      const messages = (fake.chatRequests().at(-1)?.body?.messages ?? []) as Array<{ role: string; content: unknown }>;
      return messages
        .filter((message) => message.role === 'tool')
        .slice(-calls.length)
        .map((message) => {
          const text = String(message.content);
          return text.startsWith('Error: ') ? { content: text.slice(7), isError: true } : { content: text, isError: false };
        });
    },
  };
}
