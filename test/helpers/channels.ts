/**
 * Shared setup of the channels tests: the built daemon (runDaemon) with the real providers and channels
 * extensions, a fake model that answers every `on_inbox` turn by replying through `msg_send` to the chat
 * the message came from (naming the inbox row as `parent_id`), an owner identity (credentials are
 * sealed), and one agent with an enabled agent-scope `on_inbox` target.
 */
import { join } from 'node:path';
import { createAgentFile } from './agent-file.js';
import { ROOT, runDaemon, tempDir, type SpawnedDaemon } from './daemon.js';
import { reply, startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export interface ChannelsRig {
  d: SpawnedDaemon;
  model: FakeOpenAI;
  agentId: string;
  inbox(): Promise<any[]>;
  outbox(): Promise<any[]>;
  adapter(type: string): Promise<any>;
  /** `status` may list several (a reconnect that fails turns `connecting` into `error` while it retries). */
  waitStatus(type: string, status: string | string[], ms?: number): Promise<any>;
}

/** The model's reply to an inbox turn: `echo: <text>` to `data.reply_to`, with `parent_id`. */
function answerInbox(messages: any[]) {
  const last = messages.at(-1);
  if (last?.role === 'tool') return reply.text('sent');
  const content = String(last?.content ?? '');
  // The owner's chat `call <tool> <json args>`: the model calls that tool (owner-task tests).
  const call = last?.role === 'user' ? /^call (\w+) (\{.*\})$/s.exec(content) : null;
  if (call) return reply.toolCalls([{ name: call[1]!, args: JSON.parse(call[2]!) }]);
  const id = /"messageId":(\d+)/.exec(content)?.[1];
  const to = /"reply_to":"([^"]+)"/.exec(content)?.[1];
  const text = /"text":"((?:[^"\\]|\\.)*)"/.exec(content)?.[1] ?? '';
  if (!id || !to) return reply.text('nothing to answer');
  const [channel] = to.split(':');
  const said = JSON.parse(`"${text}"`).split('\n')[0] as string;
  // "by parent: ..." leaves the recipient out: the parent row names the chat.
  const recipient = said.startsWith('by parent') ? {} : { recipient: to };
  return reply.toolCalls([
    { name: 'msg_send', args: { channel, ...recipient, text: `echo: ${said}`, data: { parent_id: Number(id) } } },
  ]);
}

export async function channelsRig(
  t: Teardown,
  types: Record<string, Record<string, unknown>>,
  extraExtensions: unknown[] = [],
  /** More of the channels extension's config (`owners`). */
  options: Record<string, unknown> = {},
): Promise<ChannelsRig> {
  const model = await startFakeOpenAI(t, (request) => answerInbox((request.body as any).messages));
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
          name: 'channels',
          module: join(ROOT, 'extensions/channels/index.ts'),
          enabled: true,
          config: { reconnectBaseMs: 50, reconnectMaxMs: 300, types, ...options },
        },
        ...extraExtensions,
      ],
    },
    settings: {
      providers: [
        { id: 'fake', type: 'openai-compatible', name: 'Fake', baseUrl: model.baseUrl, defaultModel: 'fake-1' },
      ],
    },
  });
  if (!d.url) throw new Error(`the daemon did not start: ${d.stderr()}`);
  const identity = await d.request('POST', '/identity/create', { passphrase: 'channels test passphrase' });
  if (identity.status !== 201) throw new Error(`identity: ${identity.status} ${JSON.stringify(identity.body)}`);
  const path = await createAgentFile(tempDir(t), {
    model: { provider: 'fake', model_id: 'fake-1' },
    messaging: { mode: 'proactive' },
    triggers: { on_inbox: { enabled: true, targets: [{ scope: 'agent' }] } },
  });
  const loaded = await d.request('POST', '/agents/load', { filePath: path });
  if (loaded.status !== 200) throw new Error(`load: ${loaded.status} ${JSON.stringify(loaded.body)}`);
  const agentId: string = loaded.body.id;
  const adapter = async (type: string) =>
    (await d.request('GET', `/agents/${agentId}/adapters`)).body.adapters.find((a: any) => a.type === type);
  return {
    d,
    model,
    agentId,
    inbox: async () => (await d.request('GET', `/agents/${agentId}/inbox`)).body.messages,
    outbox: async () => (await d.request('GET', `/agents/${agentId}/outbox`)).body.messages,
    adapter,
    async waitStatus(type, status, ms = 15_000) {
      const end = Date.now() + ms;
      for (;;) {
        const last = await adapter(type);
        if ([status].flat().includes(last?.status)) return last;
        if (Date.now() > end)
          throw new Error(`timed out waiting for the ${type} adapter to be ${status}; last: ${JSON.stringify(last)}`);
        await new Promise((resolve) => setTimeout(resolve, 30));
      }
    },
  };
}

/** Polls `probe` (every 30 ms) until it returns something truthy; throws naming `what` after `ms`. */
export async function eventually<T>(what: string, probe: () => Promise<T> | T, ms = 15_000): Promise<NonNullable<T>> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
}
