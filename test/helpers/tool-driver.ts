/**
 * Runs an agent's tool from outside, as the agent itself would: a fake OpenAI-format model that, for a
 * chat `run tool <n>`, asks for the tool call the test named, records the tool's result when it comes
 * back to the model, and ends the turn. The black-box tier's replacement for calling a kernel tool
 * in-process. Chats that are not `run tool` requests go to `fallback` (default: a short text).
 *
 *   const driver = await startToolDriver(t);
 *   settings: { providers: [driver.provider] }; agent config: { model: driver.model, tools: [...] }
 *   const result = await driver.run(d, agentId, 'msg_send', { text: 'hi', channel: 'mesh', recipient });
 */
import { reply, startFakeOpenAI, type FakeOpenAI, type FakeReply, type RecordedRequest } from '../fakes/openai.js';
import type { DaemonClient } from './daemon.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export interface ToolDriver {
  fake: FakeOpenAI;
  /** The provider entry for settings.providers. */
  provider: { id: string; type: 'openai-compatible'; name: string; baseUrl: string; defaultModel: string };
  /** The agent config's `model`. */
  model: { provider: string; model_id: string };
  /** Makes the agent call `tool` with `args` in a turn of its own; resolves with the result the model got back. */
  run(d: DaemonClient, agentId: string, tool: string, args: Record<string, unknown>): Promise<string>;
}

const RUN = /\brun tool (\d+)\b/;

export async function startToolDriver(
  t: Teardown,
  fallback: (request: RecordedRequest) => FakeReply = () => reply.text('ok'),
  id = 'driver',
): Promise<ToolDriver> {
  const pending = new Map<number, { tool: string; args: Record<string, unknown>; done(result: string): void }>();
  let counter = 0;
  const fake = await startFakeOpenAI(t, (request) => {
    const messages = request.body.messages as Array<{ role: string; content: unknown; tool_call_id?: string }>;
    const last = messages[messages.length - 1]!;
    // The request that follows a driven call: the tool's result is the last message (or the one before
    // it when the result had images, which Chat Completions carries in a user message after the results).
    const previous = messages[messages.length - 2];
    const result =
      last.role === 'tool' ? last : last.role === 'user' && previous?.role === 'tool' ? previous : undefined;
    const callId = result ? /^drive-(\d+)$/.exec(String(result.tool_call_id))?.[1] : undefined;
    if (result && callId !== undefined) {
      pending
        .get(Number(callId))
        ?.done(typeof result.content === 'string' ? result.content : JSON.stringify(result.content));
      pending.delete(Number(callId));
      return reply.text('done');
    }
    const asked = last.role === 'user' ? RUN.exec(String(last.content).trim()) : null;
    const run = asked ? pending.get(Number(asked[1])) : undefined;
    if (run) return reply.toolCalls([{ id: `drive-${asked![1]}`, name: run.tool, args: run.args }]);
    return fallback(request);
  });
  return {
    fake,
    provider: { id, type: 'openai-compatible', name: 'Tool driver', baseUrl: fake.baseUrl, defaultModel: 'driver-1' },
    model: { provider: id, model_id: 'driver-1' },
    async run(d, agentId, tool, args) {
      const n = ++counter;
      const result = new Promise<string>((done) => pending.set(n, { tool, args, done }));
      const sent = await d.request('POST', `/agents/${agentId}/chat`, { text: `run tool ${n}` });
      if (sent.status !== 202) throw new Error(`chat to ${agentId}: ${sent.status} ${JSON.stringify(sent.body)}`);
      return result;
    },
  };
}
