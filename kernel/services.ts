/**
 * The composition root: every kernel service, built once, in dependency order (settings → identity →
 * runtime → registry → credentials → agent identity → event stream), each receiving what it uses as
 * constructor arguments. Routes and the extension host only use these services; nothing here is filled
 * in later.
 *
 * The registry and the runtime call each other (the registry attaches the runtime to every agent it
 * loads; the runtime writes configs through the registry). The runtime is built first and reaches the
 * registry through two callbacks that only run once an agent is loaded.
 */
import type { FastifyBaseLogger } from 'fastify';
import {
  type CommandRun,
  type AgentsService,
  type InboxService,
  type ToolDefinition,
  type AgentLauncher,
  agentLocator,
  type RuntimeGaugesAccess,
} from '@agt/contracts';
import { AgentIdentityService } from './agent-identity/service.js';
import { AgentRegistry } from './agents/registry.js';
import { agentIdNotLoaded } from './agents/errors.js';
import { agentsService, inboxService } from './agents/services.js';
import type { LoadedAgent } from './agents/loaded-agent.js';
import { agentLauncher } from './agents/launcher.js';
import type { Contributions } from './extensions/contributions.js';
import { CredentialsService } from './credentials/service.js';
import { isPasswordProtected } from './credentials/index.js';
import { SummaryReader } from './credentials/summary-reader.js';
import { ExtensionRegistry } from './extensions/registry.js';
import type { DaemonEnv } from './env.js';
import type { KernelBus } from './events/bus.js';
import { SseHub } from './events/sse.js';
import { OwnerIdentity } from './identity/owner.js';
import { loadOrCreateRuntimeKeys } from './identity/runtime-keys.js';
import type { KdfCost } from './identity/kdf.js';
import { RuntimeService } from './runtime/runtime.js';
import { allowsUnsandboxedCommands, HostCommandRunner } from './runtime/sandbox/command-runner.js';
import { readAgentKey, sameKey } from './agents/agent-key.js';
import { resolveCommandLimits } from './runtime/sandbox/command-limits.js';
import { daemonSqlSlots } from './runtime/sql-sandbox/sql-slots.js';
import { builtinTools } from './runtime/tools/index.js';
import { ShutdownSteps } from './shutdown-steps.js';
import { StorageService } from './storage/service.js';
import { endSqliteJobs } from './storage/sqlite-job.js';
import { endSearchThread } from './memory/search-thread.js';
import { EvalService } from './evals/service.js';
import { inboundTrace } from './extensions/kernel-points.js';
import { runtimeGauges } from './extensions/runtime-gauges.js';
import type { SettingsStore } from './settings.js';
import { AGT_VERSION } from './version.js';
import { turnsAccess } from './runtime/turns-access.js';
import { agentFetch } from './runtime/agent-fetch.js';

export interface KernelInput {
  env: DaemonEnv;
  settings: SettingsStore;
  logger: FastifyBaseLogger;
  bus: KernelBus;
  contributions: Contributions;
  secrets: { token: string; localProof: string };
  /** The port the server is bound to (known once it listens). */
  boundPort: () => number;
  /** Begins the daemon's shutdown sequence once (`POST /daemon/shutdown`). */
  requestShutdown: (reason: string) => Promise<void>;
  /** The scrypt cost of owner secrets written from now on (tests pass a cheap one). */
  kdfCost?: KdfCost;
}

/** What routes and the extension host are given. Every member exists from the start. */
export interface KernelServices extends Readonly<Omit<KernelInput, 'kdfCost'>> {
  readonly version: string;
  readonly startedAt: number;
  readonly dataDir: string;
  readonly identity: OwnerIdentity;
  readonly runtime: RuntimeService;
  readonly builtinTools: ToolDefinition[];
  readonly registry: AgentRegistry;
  /** Loaded agents as extensions see them (origin `kernel` in logs). */
  readonly agents: AgentsService;
  /** `agents` whose `log` rows carry `origin` (each extension's context gets its own). */
  readonly agentsFor: (origin: string) => AgentsService;
  readonly inbox: InboxService;
  /** Agent files for extensions: summaries, start, autostart, unload (`ctx.launcher`). */
  readonly launcher: AgentLauncher;
  /** Summaries of not-loaded agent files, read on a worker thread (credentials/summary-reader.ts). */
  readonly summaries: SummaryReader;
  readonly credentials: CredentialsService;
  readonly agentIdentity: AgentIdentityService;
  /** The `GET /events` fan-out. */
  readonly eventStream: SseHub;
  /** The manifest's extensions and their state (filled by the extension loader as they load). */
  readonly extensions: ExtensionRegistry;
  /** `ctx.gauges`: queued turns, `GET /events` clients and extension states, walked at each read. */
  readonly gauges: RuntimeGaugesAccess;
  /** Steps the shutdown sequence runs, by phase. */
  readonly shutdownSteps: ShutdownSteps;
  /** Backups, restores, the backup schedule, WAL and retention maintenance, .af export/import (docs/backups.md). */
  readonly storage: StorageService;
  /** Eval runs on throwaway copies of agents (docs/evals.md). */
  readonly evals: EvalService;
}

export async function composeKernel(input: KernelInput): Promise<KernelServices> {
  const { settings, logger, bus, contributions } = input;
  const dataDir = settings.dataDir;
  const shutdownSteps = new ShutdownSteps();

  const identity = new OwnerIdentity({
    dataDir,
    env: input.env,
    logger,
    runtime: loadOrCreateRuntimeKeys(dataDir, logger),
    ...(input.kdfCost ? { kdfCost: input.kdfCost } : {}),
  });
  identity.onChange((status) => bus.emit('identity.changed', { agentId: null, payload: { status: status.status } }));
  await identity.unlockFromEnvironment();
  // The owner keys live in memory only; drop them when the daemon goes away.
  shutdownSteps.add({ name: 'identity', phase: 'final', run: () => identity.wipe() });

  // Agents' host commands: one bubblewrap sandbox per command, limits and private paths read from the
  // settings at every command (a PATCH applies to the next one).
  const hostCommands = new HostCommandRunner({
    dataDir,
    limits: () => resolveCommandLimits(settings.current().commandLimits),
    privatePaths: () => {
      const current = settings.current();
      return [...(current.agentsFolder ? [current.agentsFolder] : []), ...(current.trackedFolders ?? [])];
    },
    // The work folder and uid of an id go only to the file holding the key the id is bound to.
    holdsKey: (agentId) => {
      const agent = registry.byId(agentId);
      const known = registry.known.get(agentId);
      return agent !== undefined && known !== undefined && sameKey(known, readAgentKey(agent.file));
    },
    onProbe: (state) => {
      if (state.available && state.fallback)
        logger.warn(
          { mode: state.mode, reason: state.fallback },
          "agents' commands run in a bubblewrap sandbox without a user namespace of their own",
        );
      else if (state.available) logger.info({ mode: state.mode }, "agents' commands run in a bubblewrap sandbox");
      else
        logger.warn(
          { reason: state.reason },
          "agents' commands cannot be sandboxed here: they are refused unless unsandboxed commands are allowed",
        );
    },
  });
  // Agent SQL child processes across all agents: at most the owner's `sqlMaxProcesses`, read at each call.
  daemonSqlSlots.configure(() => settings.current().sqlMaxProcesses);
  const runtime: RuntimeService = new RuntimeService({
    hostCommands,
    bus,
    logger,
    contributions,
    builtinTools: () => tools,
    readCredential: (agentId, name) => agents.readCredential(agentId, name),
    resolveAgent: (idOrName) => registry.resolve(idOrName),
    findAgent: (agentId) => registry.byId(agentId),
    updateConfig: async (agent, next) => {
      await registry.updateConfig(agent, next);
    },
    settings: () => settings.current(),
    listAgents: () => registry.list(),
  });
  const tools = builtinTools((agentId) => runtime.byId(agentId));

  const registry: AgentRegistry = new AgentRegistry({
    dataDir,
    logger,
    bus,
    contributions,
    runtime,
    deliver: (agentId) => (message) => inbox.deliver(agentId, message),
    settings,
  });
  // Shutdown unloads in immediate mode: no grace for running turns, a deadline per agent.
  shutdownSteps.add({
    name: 'agents',
    phase: 'agents',
    run: async (deadlineMs) => {
      await registry.unloadAll({ reason: 'shutdown', graceMs: 0, deadlineMs });
      registry.dispose();
    },
  });

  const credentials = new CredentialsService({ identity, registry, bus, logger });
  credentials.watcher.start();
  shutdownSteps.add({
    name: 'credentials',
    phase: 'final',
    run: () => {
      credentials.watcher.stop();
      credentials.keys.clear();
    },
  });
  const agentIdentity = new AgentIdentityService({ identity, credentials, registry, bus });
  const capabilities = {
    identity: (agent: LoadedAgent) => agentIdentity.publicIdentity(agent),
    sign: (agent: LoadedAgent, message: Uint8Array) => agentIdentity.signOrThrow(agent, message),
    runLambda: (agentId: string, lambda: string, input: unknown, timeoutMs?: number) => {
      const agentRuntime = runtime.byId(agentId);
      if (!agentRuntime) throw agentIdNotLoaded(agentId);
      return agentRuntime.runLambda(lambda, input, timeoutMs);
    },
    runHostCommand: (agent: LoadedAgent, run: CommandRun) =>
      hostCommands.runHost(run, allowsUnsandboxedCommands(agent.config)),
    turns: turnsAccess(
      (agentId) => runtime.byId(agentId),
      (trace) => inboundTrace(contributions.points, trace),
    ),
    fetch: agentFetch((agentId) => registry.byId(agentId)),
  };
  const agentsFor = (origin: string): AgentsService =>
    agentsService(registry, origin, async (agent, name) => credentials.read(agent, name), capabilities);
  const agents = agentsFor('kernel');
  const inbox: InboxService = inboxService(registry, bus, runtime, (trace) =>
    inboundTrace(contributions.points, trace),
  );
  const summaries = new SummaryReader();
  shutdownSteps.add({ name: 'summary-reader', phase: 'final', run: () => summaries.close() });
  const launcher = agentLauncher({
    runtime,
    bus,
    contributions,
    registry,
    isPasswordProtected,
    readSummary: (filePath) => summaries.read(filePath),
  });

  // Backups and bounded growth (docs/backups.md). Tracked files come from the agent locator's `list`.
  const storage = new StorageService({
    dataDir,
    settings,
    logger,
    bus,
    contributions,
    runtime,
    registry,
    identity,
    agentIdentity,
    credentials,
    builtinTools: () => tools,
    isIdle: (agent) => ['idle', 'stopped'].includes(runtime.status(agent).runtimeState),
    knownFiles: async () => {
      const [locator] = contributions.points.providers(agentLocator);
      const listed = await locator?.value.list?.();
      return Array.isArray(listed) ? listed.filter((path): path is string => typeof path === 'string') : [];
    },
  });
  shutdownSteps.add({ name: 'storage', phase: 'agents', run: () => storage.stop() });
  // A backup or restore copy still running once the HTTP server has closed has no one waiting for it.
  shutdownSteps.add({ name: 'sqlite-jobs', phase: 'final', run: () => endSqliteJobs() });
  shutdownSteps.add({ name: 'memory-search', phase: 'final', run: () => endSearchThread() });
  shutdownSteps.add({ name: 'token-count', phase: 'final', run: () => runtime.governor.tokens.close() });

  const evals = new EvalService({ dataDir, registry, runtime, bus, logger });
  // Before the agents unload: a run's copies are agents too, and its record says it was cancelled.
  shutdownSteps.add({ name: 'evals', phase: 'agents', run: () => evals.close() });

  const eventStream = new SseHub(bus, logger);
  const extensions = new ExtensionRegistry({ logger, bus, contributions });
  const gauges = runtimeGauges({
    agents: () => registry.list(),
    runtimeOf: (agentId) => runtime.byId(agentId),
    sseClients: () => eventStream.stats().clients,
    extensions: () => extensions.status(),
  });

  const { kdfCost: _cost, ...rest } = input;
  return {
    ...rest,
    version: AGT_VERSION,
    startedAt: Date.now(),
    dataDir,
    identity,
    runtime,
    builtinTools: tools,
    registry,
    agents,
    agentsFor,
    inbox,
    launcher,
    summaries,
    credentials,
    agentIdentity,
    eventStream,
    extensions,
    gauges,
    shutdownSteps,
    storage,
    evals,
  };
}
