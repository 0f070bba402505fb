/**
 * `startTestExtension`: boots ONE extension against fake kernel services, on a real fastify server
 * (127.0.0.1, port 0) answering real HTTP, the way the daemon's loader would: its own scope under its
 * `prefix` (and `/agents/:id/<agentRoutes>`), its `config` checked against `options` with defaults
 * applied, `register(ctx)` inside that scope, then `start()`; a throw in either leaves the extension
 * failed and its routes answering the daemon's 503, as in the daemon.
 *
 * Not faked: the daemon's request guards (bearer token, Host and loopback checks), its input checks
 * (numeric query text must be plain decimal, JSON depth), OpenAPI, and other extensions (stand in for
 * what a dependency offers with `uses`). `startTestDaemon` has all of them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TSchema } from 'typebox';
import { Value } from 'typebox/value';
import type { EmitInput, EventType, UmbilicalEvent } from '../events.js';
import {
  CONTRACT_VERSION,
  type ExtensionContext,
  type ExtensionDefinition,
  type ExtensionHooks,
  type ExtensionHttp,
  type ExtensionPoint,
} from '../extension.js';
import type { Logger } from '../logger.js';
import type { Settings } from '../settings.js';
import type { AgentLauncher } from '../agent-launcher.js';
import {
  recordContributions,
  recordingLogger,
  RecordingBus,
  testAgents,
  testEnv,
  testInbox,
  testLauncher,
  TestPoints,
  TestSettings,
  type AgentLogRow,
  type Delivery,
  type LogLine,
  type PointOffer,
  type RecordedContributions,
  type TestAgent,
} from './fake-kernel.js';
import { guardScope, testApp } from './http-app.js';
import { agtModuleUrl } from './test-daemon.js';
import type { ServerGuards } from '../server-guards.js';
import { httpClient, type TestRequest } from './http-client.js';

/** @public */
export interface TestExtensionOptions {
  /** The manifest entry's `config`: checked against the definition's `options`, defaults applied. */
  config?: Record<string, unknown>;
  /** The loaded agents `ctx.agents` shows (a live list: push or splice to change it). */
  agents?: TestAgent[];
  /** The settings `ctx.settings.current()` returns at first (change them with `settings.set`). */
  settings?: Settings;
  /** The variables `ctx.env` shows (default none; `AGT_*` hidden as in the daemon). */
  env?: Record<string, string>;
  /** What the extensions in `dependsOn` would offer, for `ctx.use`: `[offer(point, implementation)]`. */
  uses?: PointOffer[];
  /** `ctx.settings.dataDir` (default a temporary folder, removed by `stop`). */
  dataDir?: string;
  /** Where `ctx.logger` writes (default a recording logger: see `logs`). */
  logger?: Logger;
  /** Call `start()` after the server listens (default true; false to call `start` yourself). */
  start?: boolean;
  /**
   * `ctx.launcher`: the test kernel has no agent files, so each member left out rejects with
   * `unavailable`; pass the ones the extension calls.
   */
  launcher?: Partial<AgentLauncher>;
}

/** @public */
export type TestExtensionState = 'loaded' | 'started' | 'failed' | 'stopped';

/** @public */
export interface TestExtension {
  /** `http://127.0.0.1:<port>`: the extension's routes are under its prefix there. */
  url: string;
  /** Real HTTP to `url` (no token: the harness has no guard). */
  request: TestRequest;
  /** `loaded` (registered), `started`, `failed` (see `error`) or `stopped`. */
  readonly state: TestExtensionState;
  /** Why it failed, as `GET /runtime/extensions` would say; null while it serves. */
  readonly error: string | null;
  /** The context handed to `register` (call its members directly to test without HTTP). */
  context: ExtensionContext;
  /** What `register` returned. */
  hooks: ExtensionHooks | null;
  /** Every event on the fake bus: the extension's (source `ext:<name>`) and those sent with `emit`. */
  events: UmbilicalEvent[];
  /** Sends an event to the extension's subscribers, as the kernel would (source `kernel` unless given). */
  emit<T extends EventType>(type: T, input: EmitInput<T>): UmbilicalEvent<T>;
  /** What it contributed through `ctx.contribute`. */
  contributions: RecordedContributions;
  /** What it offered on `point` with `ctx.provide`, in call order. */
  offered<T>(point: ExtensionPoint<T>): T[];
  /** Messages it delivered with `ctx.inbox.deliver`. */
  deliveries: Delivery[];
  /** Lines it printed with `ctx.print`. */
  printed: string[];
  /** Rows it wrote with `ctx.agents.log`. */
  agentLogs: AgentLogRow[];
  /** Lines of the recording logger (empty when `logger` was given). */
  logs: LogLine[];
  /** The live agent list behind `ctx.agents`. */
  agents: TestAgent[];
  /** `ctx.settings`; `settings.set(next)` changes them and calls the `onChange` listeners. */
  settings: TestSettings;
  /** Calls `start()` (when `start: false` was given); a throw fails the extension, as in the daemon. */
  start(): Promise<void>;
  /**
   * Calls the extension's `stop()` once, ends its subscriptions, closes the server and removes the
   * temporary data folder. Rejects with the error `stop()` threw (the daemon would log it), after all that.
   */
  stop(): Promise<void>;
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The first problems of `value` against `schema` (`/field: message`), or null. */
function schemaProblem(schema: TSchema, value: unknown): string | null {
  const problems = [...Value.Errors(schema, value)].filter((e) => e.keyword !== 'boolean').slice(0, 3);
  return problems.length === 0 ? null : problems.map((e) => `${e.instancePath || '(root)'}: ${e.message}`).join('; ');
}

function contractProblem(wanted: string): string | null {
  const [wantMajor, wantMinor] = String(wanted).split('.').map(Number);
  const [haveMajor, haveMinor] = CONTRACT_VERSION.split('.').map(Number);
  if (wantMajor === haveMajor && (wantMinor ?? 0) <= (haveMinor ?? 0)) return null;
  return `needs kernel contract ${wanted}, but this kernel implements ${CONTRACT_VERSION} (the major must match and the minor must not be newer)`;
}

/**
 * Boots `definition` (an extension module's default export) against fake kernel services on a real
 * server. Stop it with `stop()` (in tap: `t.teardown(ext.stop)`).
 *
 * @public
 */
export async function startTestExtension<Options extends TSchema>(
  definition: ExtensionDefinition<Options>,
  options: TestExtensionOptions = {},
): Promise<TestExtension> {
  const { name } = definition;
  const ownDataDir = options.dataDir === undefined ? mkdtempSync(join(tmpdir(), `agt-ext-${name}-`)) : null;
  const logs: LogLine[] = [];
  const rootLogger = options.logger ?? recordingLogger(logs);
  const bus = new RecordingBus(rootLogger);
  const settings = new TestSettings(options.dataDir ?? ownDataDir!, options.settings ?? {});
  const agents = options.agents ?? [];
  const agentLogs: AgentLogRow[] = [];
  const deliveries: Delivery[] = [];
  const printed: string[] = [];
  const contributions: RecordedContributions = { modelClients: [], tools: [], inboxSources: [], lifecycle: [] };
  const points = new TestPoints(name, options.uses ?? []);
  const subscriptions = new Set<() => void>();
  const track = (unsubscribe: () => void) => {
    const once = () => void (subscriptions.delete(once) && unsubscribe());
    subscriptions.add(once);
    return once;
  };
  const release = () => {
    for (const unsubscribe of [...subscriptions]) unsubscribe();
  };

  let state: TestExtensionState = 'loaded';
  let error: string | null = null;
  const fail = (why: string) => {
    if (state === 'failed' || state === 'stopped') return;
    state = 'failed';
    error = why;
    release();
  };

  const problem = contractProblem(definition.contract);
  let config: unknown = options.config ?? {};
  if (definition.options) {
    config = Value.Default(definition.options, Value.Clone(config));
    const invalid = schemaProblem(definition.options, config);
    if (invalid !== null && problem === null) fail(`invalid config: ${invalid}`);
  }
  if (problem !== null) fail(problem);

  const serverGuards = await kernelServerGuards();
  const app = testApp();
  let agentScope: ExtensionHttp | undefined;
  let context: ExtensionContext | undefined;
  let hooks: ExtensionHooks | null = null;
  const serving = () => (state === 'failed' ? `failed: ${error}` : state === 'stopped' ? 'stopped' : null);

  if (definition.agentRoutes) {
    app.register(
      async (scope) => {
        agentScope = scope as ExtensionHttp;
        guardScope(scope, name, serving, true);
      },
      { prefix: `/agents/:id/${definition.agentRoutes}` },
    );
  }
  app.register(
    async (scope) => {
      guardScope(scope, name, serving, definition.prefix !== undefined);
      if (agentScope) {
        // The agent scope has loaded already: a plugin registered on it runs inside this scope instead.
        const target = agentScope;
        Object.defineProperty(target, 'register', {
          configurable: true,
          value: (plugin: (instance: ExtensionHttp, opts: unknown) => Promise<void> | void, opts?: unknown) => {
            scope.register(async () => plugin(target, opts ?? {}));
            return target;
          },
        });
      }
      context = {
        name,
        config,
        logger: rootLogger.child({ extension: name }),
        http: scope as ExtensionHttp,
        ...(agentScope ? { agentHttp: agentScope } : {}),
        bus: {
          emit: (type, input) => bus.emit(type, { ...input, source: input.source ?? `ext:${name}` }),
          subscribe: (listener) => track(bus.subscribe(listener)),
        },
        settings: {
          dataDir: settings.dataDir,
          current: () => settings.current(),
          onChange: (listener) => track(settings.onChange(listener)),
          update: (patch) => settings.update(patch),
        },
        agents: testAgents(agents, agentLogs),
        inbox: testInbox(agents, deliveries),
        launcher: testLauncher(options.launcher ?? {}),
        env: testEnv(options.env ?? {}),
        print: (line) => void printed.push(String(line)),
        serverGuards,
        contribute: recordContributions(contributions),
        provide: (point, implementation) => points.provide(point, implementation),
        use: ((point: ExtensionPoint<unknown>) => points.use(point)) as ExtensionContext['use'],
      };
      if (state === 'failed') return;
      try {
        hooks = (await definition.register(context as ExtensionContext<never>)) ?? null;
      } catch (thrown) {
        fail(`register failed: ${message(thrown)}`);
      } finally {
        points.registering = false;
      }
    },
    definition.prefix ? { prefix: definition.prefix } : {},
  );

  try {
    await app.listen({ port: 0, host: '127.0.0.1' });
  } catch (thrown) {
    await app.close();
    if (ownDataDir) rmSync(ownDataDir, { recursive: true, force: true });
    throw new Error(`extension ${name}: a plugin it registered failed: ${message(thrown)}`, { cause: thrown });
  }
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

  let started = false;
  const start = async () => {
    if (started || state !== 'loaded') return;
    started = true;
    try {
      await hooks?.start?.();
      if (state === 'loaded') state = 'started';
    } catch (thrown) {
      fail(`start failed: ${message(thrown)}`);
    }
  };
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      let stopError: unknown;
      try {
        await hooks?.stop?.();
      } catch (thrown) {
        stopError = thrown;
      }
      if (state !== 'failed') state = 'stopped';
      release();
      await app.close();
      if (ownDataDir) rmSync(ownDataDir, { recursive: true, force: true });
      if (stopError !== undefined) throw stopError;
    })());

  if (options.start ?? true) await start();

  return {
    url,
    request: httpClient(url),
    get state() {
      return state;
    },
    get error() {
      return error;
    },
    context: context!,
    hooks,
    events: bus.events,
    emit: (type, input) => bus.emit(type, input),
    contributions,
    offered: <T>(point: ExtensionPoint<T>) => [...((points.offered.get(point.id) ?? []) as T[])],
    deliveries,
    printed,
    agentLogs,
    logs,
    agents,
    settings,
    start,
    stop,
  };
}

/**
 * `ctx.serverGuards` is the kernel's own (the code the daemon's API runs), imported from the agt package
 * at run time like `startTestDaemon`'s daemon; without agt installed, `createServer` says so when called.
 */
async function kernelServerGuards(): Promise<ServerGuards> {
  try {
    return ((await import(agtModuleUrl('kernel/http/server-guards'))) as { serverGuards: ServerGuards }).serverGuards;
  } catch (error) {
    const why = (error as Error).message;
    return {
      createServer: () => {
        throw new Error(`ctx.serverGuards needs the agt package (${why})`);
      },
      defaultLimits: {
        maxHeaderBytes: 16 * 1024,
        headersTimeoutMs: 10_000,
        requestTimeoutMs: 60_000,
        keepAliveTimeoutMs: 5_000,
        idleSocketTimeoutMs: 180_000,
        maxConnections: 512,
        maxConnectionsPerAddress: 128,
      },
    };
  }
}
