/**
 * The composition root: every kernel service, built once, in dependency order (settings → identity →
 * runtime → registry → credentials → agent identity → event stream), each receiving what it uses as
 * constructor arguments. Routes and the extension host only use these services; nothing here is filled
 * in later.
 *
 * Each group of services is built by one named step (composition/): the runtime with the registry
 * (they call each other; see composition/agents.ts), the host command runner, how routes and extensions
 * reach agents, storage. A step registers the shutdown steps of what it built.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { AgentLauncher, AgentsService, InboxService, RuntimeGaugesAccess, ToolDefinition } from '@agt/contracts';
import { AgentIdentityService } from './agent-identity/service.js';
import { readAgentKey, sameKey } from './agents/agent-key.js';
import type { AgentRegistry } from './agents/registry.js';
import { composeAgentAccess } from './composition/agent-access.js';
import { composeAgents } from './composition/agents.js';
import { hostCommandRunner } from './composition/host-commands.js';
import { composeStorage } from './composition/storage.js';
import { CredentialsService } from './credentials/service.js';
import type { FileReader } from './credentials/file-reader.js';
import type { DaemonEnv } from './env.js';
import type { KernelBus } from './events/bus.js';
import { SseHub } from './events/sse.js';
import { EvalService } from './evals/service.js';
import type { Contributions } from './extensions/contributions.js';
import { ExtensionRegistry } from './extensions/registry.js';
import { runtimeGauges } from './extensions/runtime-gauges.js';
import type { KdfCost } from './identity/kdf.js';
import { OwnerIdentity } from './identity/owner.js';
import { loadOrCreateRuntimeKeys } from './identity/runtime-keys.js';
import { endSearchThread } from './memory/search-thread.js';
import type { RuntimeService } from './runtime/runtime.js';
import type { SettingsStore } from './settings.js';
import { ShutdownSteps } from './shutdown-steps.js';
import type { StorageService } from './storage/service.js';
import { AGT_VERSION } from './version.js';

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
  /** Reads agent files the daemon did not write last, in a child process (credentials/file-reader.ts). */
  readonly fileReader: FileReader;
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

  const identity = await ownerIdentity(input, shutdownSteps);
  const hostCommands = hostCommandRunner({
    dataDir,
    settings,
    logger,
    // The work folder and uid of an id go only to the file holding the key the id is bound to.
    holdsKey: (agentId) => {
      const agent = registry.byId(agentId);
      const known = registry.known.get(agentId);
      return agent !== undefined && known !== undefined && sameKey(known, readAgentKey(agent.file));
    },
  });
  const { runtime, tools, registry, fileReader } = composeAgents({
    dataDir,
    settings,
    logger,
    bus,
    contributions,
    hostCommands,
    shutdownSteps,
    readCredential: (agentId, name) => access.agents.readCredential(agentId, name),
    deliver: (agentId, message) => access.inbox.deliver(agentId, message),
  });
  const credentials = credentialsService({ identity, registry, bus, logger }, shutdownSteps);
  const agentIdentity = new AgentIdentityService({ identity, credentials, registry, bus });
  const access = composeAgentAccess({
    bus,
    contributions,
    runtime,
    registry,
    credentials,
    agentIdentity,
    hostCommands,
    shutdownSteps,
    fileReader,
    dataDir,
  });
  const storage = composeStorage({
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
    tools,
    shutdownSteps,
  });
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
    fileReader,
    ...access,
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

/** The owner's identity, unlocked from the environment when it says how; its keys are wiped at shutdown. */
async function ownerIdentity(input: KernelInput, shutdownSteps: ShutdownSteps): Promise<OwnerIdentity> {
  const { settings, logger, bus } = input;
  const identity = new OwnerIdentity({
    dataDir: settings.dataDir,
    env: input.env,
    logger,
    runtime: loadOrCreateRuntimeKeys(settings.dataDir, logger),
    ...(input.kdfCost ? { kdfCost: input.kdfCost } : {}),
  });
  identity.onChange((status) => bus.emit('identity.changed', { agentId: null, payload: { status: status.status } }));
  await identity.unlockFromEnvironment();
  // The owner keys live in memory only; drop them when the daemon goes away.
  shutdownSteps.add({ name: 'identity', phase: 'final', run: () => identity.wipe() });
  return identity;
}

/** Agents' sealed credentials and the watcher of their files; the unlocked keys are dropped at shutdown. */
function credentialsService(
  deps: ConstructorParameters<typeof CredentialsService>[0],
  shutdownSteps: ShutdownSteps,
): CredentialsService {
  const credentials = new CredentialsService(deps);
  credentials.watcher.start();
  shutdownSteps.add({
    name: 'credentials',
    phase: 'final',
    run: () => {
      credentials.watcher.stop();
      credentials.keys.clear();
    },
  });
  return credentials;
}
