/**
 * Shared setup of the compute tests: the built daemon (runDaemon) with the providers extension and the
 * compute extension pointed at a private dockerd (test/helpers/docker.ts), small limits so the tests can
 * hit them, and a scripted model over the wire (the runtime fixtures' WireModel played by the fake
 * OpenAI server) so turns can call `compute_exec`. `tool()` runs one call through a real turn and gives
 * back the parsed result; events come from `GET /events`.
 */
import { join } from 'node:path';
import type { AgentConfig } from '../../contracts/agent-config.js';
import type { UmbilicalEvent } from '../../contracts/events.js';
import { startFakeOpenAI } from '../fakes/openai.js';
import { WireModel } from '../fixtures/runtime/wire-model.js';
import { createAgentFile } from './agent-file.js';
import { ROOT, runDaemon, tempDir, type BootOptions, type SpawnedDaemon } from './daemon.js';
import { eventLog } from './events.js';
import { endsTurn } from './wire-daemon.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export const COMPUTE_MODULE = join(ROOT, 'extensions/compute/index.ts');
/** Small limits, so memory and pid tests hit them quickly. */
export const TEST_LIMITS = {
  memoryMb: 64,
  pids: 64,
  cpus: 1,
  tmpMb: 8,
  defaultTimeoutMs: 20_000,
  maxTimeoutMs: 60_000,
};

export interface ComputeDaemon {
  d: SpawnedDaemon;
  model: WireModel;
  events: UmbilicalEvent[];
  /** The file each agent was loaded from, by id (to load it into another daemon). */
  files: Map<string, string>;
  /** Writes and loads an agent; resolves its id. Tools: `compute_exec` declared, unrestricted unless `restricted`. */
  agent(config?: Partial<AgentConfig>, options?: { restricted?: boolean }): Promise<string>;
  /** One `compute_exec` call through a turn: the tool result (parsed JSON, or the error text) and the turn's end. */
  tool(agentId: string, args: Record<string, unknown>): Promise<{ result: any; text: string; isError: boolean }>;
  /** A system-scope command target through `POST /agents/{id}/trigger`; resolves the event that ended it. */
  command(agentId: string, command: string): Promise<{ event_type: string; payload: any }>;
  until<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, ms?: number): Promise<T>;
}

export async function bootCompute(
  t: Teardown,
  dockerHost: string,
  options: Partial<BootOptions> & { config?: Record<string, unknown> } = {},
): Promise<ComputeDaemon> {
  const model = new WireModel();
  const fake = await startFakeOpenAI(t, model.script);
  const d = await runDaemon(t, {
    ...options,
    extensions: {
      extensions: [
        // No retries: a turn is as many model calls as the script has steps.
        {
          name: 'providers',
          module: join(ROOT, 'extensions/providers/index.ts'),
          enabled: true,
          config: { maxRetries: 0 },
        },
        {
          name: 'compute',
          module: COMPUTE_MODULE,
          enabled: true,
          config: { dockerHost, ...TEST_LIMITS, ...options.config },
        },
      ],
    },
    settings: {
      ...options.settings,
      providers: [{ id: 'local', type: 'openai-compatible', name: 'Fake OpenAI', baseUrl: fake.baseUrl }],
    },
  });
  if (!d.url) throw new Error(`the daemon did not start: ${d.stderr()}`);
  const { events } = await eventLog(t, d);
  const dir = tempDir(t, 'agt-compute-agents-');

  const until: ComputeDaemon['until'] = async (what, probe, ms = 60_000) => {
    const end = Date.now() + ms;
    for (;;) {
      const value = await probe();
      if (value !== undefined && value !== false) return value as never;
      if (Date.now() > end) throw new Error(`failsafe: no ${what} within ${ms} ms`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };
  const ended = (turnId: string) => until(`the end of turn ${turnId}`, () => events.find((e) => endsTurn(e, turnId)));

  const files = new Map<string, string>();
  return {
    d,
    model,
    events,
    files,
    until,
    async agent(config = {}, { restricted = false } = {}) {
      const path = await createAgentFile(dir, {
        model: { provider: 'local', model_id: 'scripted' },
        tools: [{ name: 'compute_exec', enabled: true, ...(restricted ? {} : { restricted: false }) }],
        ...config,
      } as Partial<AgentConfig>);
      const res = await d.request('POST', '/agents/load', { filePath: path });
      if (res.status !== 200) throw new Error(`load failed: ${res.status} ${JSON.stringify(res.body)}`);
      files.set(res.body.id, path);
      return res.body.id as string;
    },
    async tool(agentId, args) {
      const before = model.calls.length;
      model.push({ toolCalls: [{ name: 'compute_exec', args }] }); // then the fallback text ends the turn
      const chat = await d.request('POST', `/agents/${agentId}/chat`, { text: 'run it' });
      if (chat.status !== 202 && chat.status !== 200)
        throw new Error(`chat: ${chat.status} ${JSON.stringify(chat.body)}`);
      await ended(chat.body.turnId);
      // The model call right after the tool ran ends with its result (one turn at a time: it is this one's).
      const call = model.calls.slice(before).find((seen) => seen.messages.at(-1)?.role === 'tool');
      const message = call?.messages.at(-1) as { content: string; isError?: boolean } | undefined;
      if (!message) throw new Error('the model never saw the tool result');
      let result: unknown;
      try {
        result = JSON.parse(message.content);
      } catch {
        result = undefined;
      }
      return { result, text: message.content, isError: message.isError === true };
    },
    async command(agentId, command) {
      const res = await d.request('POST', `/agents/${agentId}/trigger`, {
        type: 'timer',
        data: { n: 7 },
        scope: 'system',
        command,
      });
      if (res.status !== 202) throw new Error(`trigger: ${res.status} ${JSON.stringify(res.body)}`);
      return (await ended(res.body.turnId)) as never;
    },
  };
}
