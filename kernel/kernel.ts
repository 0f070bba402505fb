/**
 * The kernel object: the services every kernel module and the extension loader share. Modules fill
 * the service slots during start-up; extensions see a narrowed view of it through their context.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { AgentsService, InboxService } from '../contracts/services.js';
import { AgtError } from '../contracts/errors.js';
import type { Contributions } from './contributions.js';
import type { DaemonEnv } from './env.js';
import type { KernelBus } from './events/bus.js';
import type { IdentityService } from './identity/types.js';
import type { SseHub } from './events/sse.js';
import type { SettingsStore } from './settings.js';
import type { AgentRegistry } from './agents/registry.js';
import type { AgentRuntimeHooks } from './agents/runtime-hooks.js';
import type { ToolDefinition } from '../contracts/tools.js';
import type { CredentialsService } from './credentials/service.js';
import type { AgentIdentityService } from './agent-identity/service.js';

/** A step run at shutdown, in phases: HTTP first, then agents, then extensions, then the rest. */
export type ShutdownPhase = 'agents' | 'extensions' | 'final';

export interface ShutdownStep {
  name: string;
  phase: ShutdownPhase;
  /** `deadlineMs` is this step's share of the overall cap; a step must stop by then. */
  run(deadlineMs: number): Promise<void> | void;
}

/** Status of each extension, for `GET /runtime/extensions`. */
export interface ExtensionStatus {
  name: string;
  version: string | null;
  enabled: boolean;
  loaded: boolean;
  error: string | null;
  prefix: string | null;
  dependsOn: string[];
  module: string;
  /** Set by the extension loader. */
  state?: 'disabled' | 'pending' | 'loaded' | 'started' | 'failed' | 'stopped';
  /** Segment of its agent-scoped routes (`/agents/{id}/<segment>`), or null. */
  agentRoutes?: string | null;
}

const emptyAgents: AgentsService = {
  list: () => [],
  find: () => undefined,
  readCredential: async () => undefined,
  log: () => {},
};

export class Kernel {
  readonly version = '0.2.0';
  readonly startedAt = Date.now();
  /** Filled by the agents module; until then no agent exists. */
  agents: AgentsService = emptyAgents;
  inbox: InboxService = {
    deliver: async (agentId) => {
      throw new AgtError('not_found', `agent ${agentId} is not loaded`);
    },
  };
  /** The owner identity and this runtime's keys; filled by the identity module (registered early). */
  identity!: IdentityService;
  /** The agent registry (load, resolve, unload, config); filled by the agents module. */
  registry!: AgentRegistry;
  /** Sealed per-agent credentials and their envelope's lock state; filled by the credentials module. */
  credentials!: CredentialsService;
  /** Agents' own key pairs and attestations; filled by the agent-identity module. */
  agentIdentity!: AgentIdentityService;
  /** The agent runtime, when installed: the registry calls it at load, config change and unload. */
  runtime: AgentRuntimeHooks | undefined = undefined;
  /** Built-in tools of the main registry (filled by the runtime); listed by `GET /agents/{id}/tools`. */
  builtinTools: ToolDefinition[] = [];
  /** Filled by the extension loader. */
  extensionStatus: () => ExtensionStatus[] = () => [];
  /** Filled by the events module: the `GET /events` fan-out (stats, internal test knobs). */
  eventStream: SseHub | null = null;
  private readonly shutdownSteps: ShutdownStep[] = [];
  /** Set by the daemon: begins the shutdown sequence once. */
  requestShutdown: (reason: string) => Promise<void> = async () => {};

  constructor(
    readonly env: DaemonEnv,
    readonly settings: SettingsStore,
    readonly logger: FastifyBaseLogger,
    readonly bus: KernelBus,
    readonly contributions: Contributions,
    readonly secrets: { token: string; localProof: string },
    readonly boundPort: () => number,
  ) {}

  get dataDir(): string {
    return this.settings.dataDir;
  }

  onShutdown(step: ShutdownStep): void {
    this.shutdownSteps.push(step);
  }

  /** Steps of one phase, last registered first (the reverse of start-up). */
  stepsFor(phase: ShutdownPhase): ShutdownStep[] {
    return this.shutdownSteps.filter((s) => s.phase === phase).reverse();
  }
}

/** A kernel module: routes and services of one kernel area, registered on the root app. */
export interface KernelModule {
  name: string;
  register(app: import('./http/app.js').KernelApp, kernel: Kernel): Promise<void> | void;
}
