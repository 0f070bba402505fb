/**
 * Test harness of the providers extension: the client runtime with a capturing logger, targets and
 * requests for direct client tests, and `bootProviders`, which mounts the extension on a real fastify
 * server (loopback, port 0) with fake kernel services, the way the loader does: its own scope under
 * `/providers` and an agent scope under `/agents/:id/providers`.
 */
import Fastify from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AddressInfo } from 'node:net';
import type { ExtensionContext, ExtensionHooks } from '../../contracts/extension.js';
import type { Logger } from '../../contracts/logger.js';
import type { ModelClientProvider, ModelRequest } from '../../contracts/model.js';
import type { AgentView, AgentsService, SettingsService } from '../../contracts/services.js';
import type { Settings } from '../../contracts/settings.js';
import { installErrorHandling } from '../../kernel/http/error-handler.js';
import providers from '../../extensions/providers/index.js';
import type { ProvidersOptions } from '../../extensions/providers/options.js';
import { createRuntime } from '../../extensions/providers/runtime.js';
import type { ProviderKind, ProviderTarget } from '../../extensions/providers/types.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

/** A logger that keeps every line (bindings, object and message, as JSON text) for assertions. */
export function captureLogger(
  lines: string[] = [],
  bindings: Record<string, unknown> = {},
): Logger & { lines: string[] } {
  const write = (level: string) => (obj: unknown, msg?: string) => {
    const data = obj instanceof Error ? { err: { message: obj.message, stack: obj.stack } } : obj;
    lines.push(
      JSON.stringify({ level, ...bindings, data, msg }, (_k, v) =>
        v instanceof Error ? { message: v.message, stack: v.stack, cause: String(v.cause) } : v,
      ),
    );
  };
  return {
    lines,
    debug: write('debug'),
    info: write('info'),
    warn: write('warn'),
    error: write('error'),
    child: (b) => captureLogger(lines, { ...bindings, ...b }),
  };
}

/** Fast limits for tests: short backoff, short timeouts. */
export const FAST: ProvidersOptions = {
  retryBaseMs: 20,
  retryMaxMs: 100,
  timeoutMs: 5_000,
  idleTimeoutMs: 2_000,
  checkTimeoutMs: 2_000,
};

/** The shared client state, as the extension builds it; `stop` does what the extension's stop does. */
export function makeRuntime(t: Teardown, config: ProvidersOptions = FAST) {
  const logger = captureLogger();
  const { runtime, stop } = createRuntime(config, logger);
  t.teardown(stop);
  return { runtime, logs: logger.lines, stop };
}

export function makeTarget(
  type: ProviderKind,
  baseUrl: string,
  overrides: Partial<ProviderTarget> = {},
): ProviderTarget {
  return {
    origin: 'app',
    id: `test-${type}`,
    type,
    name: `Test ${type}`,
    baseUrl,
    params: [],
    requestDelayMs: 0,
    timeoutMs: 5_000,
    idleTimeoutMs: 2_000,
    maxRetries: 2,
    gateKey: `app:test-${type}`,
    ...overrides,
  };
}

export function makeRequest(
  overrides: Partial<Omit<ModelRequest, 'model'>> & { model?: Partial<ModelRequest['model']> } = {},
): ModelRequest & { deltas: string[]; controller: AbortController } {
  const controller = new AbortController();
  const deltas: string[] = [];
  const { model, ...rest } = overrides;
  return {
    agentId: 'agent-1',
    system: 'You are a test.',
    messages: [{ role: 'user', content: 'hello' }],
    tools: [],
    signal: controller.signal,
    onDelta: (text) => deltas.push(text),
    ...rest,
    model: { provider: 'p', model_id: 'fake-model', ...model },
    deltas,
    controller,
  };
}

export interface FakeAgent {
  id: string;
  name?: string;
  providers?: Array<Record<string, unknown>>;
  credentials?: Record<string, string>;
}

export interface BootedProviders {
  url: string;
  logs: string[];
  clients: ModelClientProvider[];
  hooks: ExtensionHooks | void;
  setSettings(next: Settings): void;
  request(method: string, path: string, body?: unknown): Promise<{ status: number; body: any; text: string }>;
}

/** Mounts the extension on a real server with fake settings and agents; closed by `t.teardown`. */
export async function bootProviders(
  t: Teardown,
  options: { settings?: Settings; config?: ProvidersOptions; agents?: FakeAgent[] } = {},
): Promise<BootedProviders> {
  let settings: Settings = options.settings ?? {};
  const listeners = new Set<(s: Settings) => void>();
  const settingsService: SettingsService = {
    dataDir: '/nonexistent',
    current: () => settings,
    onChange: (listener) => (listeners.add(listener), () => listeners.delete(listener)),
    update: () => {
      throw new Error('the providers extension does not write settings');
    },
  };
  const agents = options.agents ?? [];
  const view = (a: FakeAgent): AgentView => ({
    id: a.id,
    name: a.name ?? a.id,
    filePath: null,
    config: { providers: a.providers ?? [] } as unknown as AgentView['config'],
  });
  const agentsService: AgentsService = {
    list: () => agents.map(view),
    find: (id) => {
      const agent = agents.find((a) => a.id === id || a.name === id);
      return agent ? view(agent) : undefined;
    },
    readCredential: async (agentId, name) => agents.find((a) => a.id === agentId)?.credentials?.[name],
    get files(): never {
      throw new Error('the providers extension does not use agent files');
    },
    get keys(): never {
      throw new Error('the providers extension does not sign');
    },
    runLambda: async () => {
      throw new Error('the providers extension runs no lambdas');
    },
    runHostCommand: async () => {
      throw new Error('the providers extension runs no commands');
    },
    updateConfig: async () => {
      throw new Error('the providers extension does not write agent configs');
    },
    log: () => {},
  };
  const logger = captureLogger();
  const app = Fastify({ logger: false }).withTypeProvider<TypeBoxTypeProvider>();
  installErrorHandling(app);
  const scopes: Partial<Pick<ExtensionContext, 'http' | 'agentHttp'>> = {};
  await app.register(async (scope) => void (scopes.http = scope), { prefix: '/providers' });
  await app.register(async (scope) => void (scopes.agentHttp = scope), { prefix: '/agents/:id/providers' });
  const clients: ModelClientProvider[] = [];
  const hooks = await providers.register({
    name: 'providers',
    config: options.config ?? FAST,
    logger,
    http: scopes.http!,
    agentHttp: scopes.agentHttp!,
    bus: {
      emit: () => {
        throw new Error('unused');
      },
      subscribe: () => () => {},
    },
    settings: settingsService,
    agents: agentsService,
    inbox: { deliver: async () => ({ messageId: 0 }), get: async () => undefined },
    get launcher(): never {
      throw new Error('the providers extension does not use the agent launcher');
    },
    env: { get: (name) => process.env[name] },
    print: () => {},
    contribute: {
      modelClients: (p) => void clients.push(p),
      tools: () => {},
      inboxSource: () => {},
      lifecycle: () => {},
    },
    provide: () => {
      throw new Error('unused');
    },
    use: () => {
      throw new Error('unused');
    },
    get serverGuards(): never {
      throw new Error('the providers extension opens no server of its own');
    },
  } as ExtensionContext<ProvidersOptions>);
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.teardown(async () => {
    await hooks?.stop?.();
    await app.close();
  });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return {
    url,
    logs: logger.lines,
    clients,
    hooks,
    setSettings(next) {
      settings = next;
      for (const listener of listeners) listener(next);
    },
    async request(method, path, body) {
      const init: RequestInit = { method };
      if (body !== undefined) {
        init.body = JSON.stringify(body);
        init.headers = { 'content-type': 'application/json' };
      }
      const res = await fetch(url + path, init);
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = text;
      }
      return { status: res.status, body: parsed, text };
    },
  };
}
