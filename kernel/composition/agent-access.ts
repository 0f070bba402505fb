/**
 * How routes and extensions reach loaded agents: `ctx.agents` (each extension's own, so log rows carry
 * its origin) with the capabilities it lends (the agent's key, its lambdas, host commands and sandboxed
 * processes, its turns, its fetch), the inbox, the launcher of agent files and the summary reader behind it.
 */
import type { AgentLauncher, AgentsService, CommandRun, InboxService, SandboxedSpawn } from '@agt/contracts';
import type { AgentIdentityService } from '../agent-identity/service.js';
import { agentIdNotLoaded } from '../agents/errors.js';
import { agentLauncher } from '../agents/launcher.js';
import type { LoadedAgent } from '../agents/loaded-agent.js';
import type { AgentRegistry } from '../agents/registry.js';
import { type AgentCapabilities, agentsService, inboxService } from '../agents/services.js';
import { isPasswordProtected } from '../credentials/index.js';
import type { CredentialsService } from '../credentials/service.js';
import type { FileReader } from '../credentials/file-reader.js';
import type { KernelBus } from '../events/bus.js';
import type { Contributions } from '../extensions/contributions.js';
import { inboundTrace } from '../extensions/kernel-points.js';
import { agentFetch } from '../runtime/agent-fetch.js';
import type { RuntimeService } from '../runtime/runtime.js';
import { allowsUnsandboxedCommands, type HostCommandRunner } from '../runtime/sandbox/command-runner.js';
import { ownerTasksAccess } from '../runtime/owner-tasks.js';
import { turnsAccess } from '../runtime/turns-access.js';
import { pageImage, snapshotFile } from '../storage/snapshot.js';
import type { ShutdownSteps } from '../shutdown-steps.js';

export interface AgentAccessInput {
  bus: KernelBus;
  contributions: Contributions;
  runtime: RuntimeService;
  registry: AgentRegistry;
  credentials: CredentialsService;
  agentIdentity: AgentIdentityService;
  hostCommands: HostCommandRunner;
  shutdownSteps: ShutdownSteps;
  fileReader: FileReader;
  /** Where `ctx.agents.snapshots` makes its copies (`<data dir>/snapshots-tmp`). */
  dataDir: string;
}

export interface AgentAccess {
  agentsFor: (origin: string) => AgentsService;
  agents: AgentsService;
  inbox: InboxService;
  launcher: AgentLauncher;
}

/** What `ctx.agents` lends beyond the registry: the agent's key, the runtime's sandboxes, turns and fetch. */
function agentCapabilities(input: AgentAccessInput): AgentCapabilities {
  const { runtime, registry, agentIdentity, hostCommands, contributions, bus } = input;
  return {
    identity: (agent: LoadedAgent) => agentIdentity.publicIdentity(agent),
    sign: (agent: LoadedAgent, message: Uint8Array) => agentIdentity.signOrThrow(agent, message),
    runLambda: (agentId: string, lambda: string, input: unknown, timeoutMs?: number) => {
      const agentRuntime = runtime.byId(agentId);
      if (!agentRuntime) throw agentIdNotLoaded(agentId);
      return agentRuntime.runLambda(lambda, input, timeoutMs);
    },
    runHostCommand: (agent: LoadedAgent, run: CommandRun) =>
      hostCommands.runHost(run, allowsUnsandboxedCommands(agent.config)),
    workFolder: (agent: LoadedAgent) => hostCommands.prepareWorkFolder(agent.id),
    spawnSandboxed: async (agent: LoadedAgent, spec: SandboxedSpawn) => {
      const started = await hostCommands.spawnProcess(agent.id, spec);
      // Unloaded while it started: the unload's kill has passed it by.
      if (registry.byId(agent.id) !== agent) {
        started.kill();
        await started.exited;
        throw agentIdNotLoaded(agent.id);
      }
      return started;
    },
    turns: turnsAccess(
      (agentId) => runtime.byId(agentId),
      (trace) => inboundTrace(contributions.points, trace),
    ),
    fetch: agentFetch((agentId) => registry.byId(agentId)),
    tasks: ownerTasksAccess({
      runtimeOf: (agentId) => runtime.byId(agentId),
      registry,
      subscribe: (listener) => bus.subscribe(listener),
    }),
    snapshot: (agent, use) => snapshotFile(input.dataDir, agent.id, agent.filePath, use),
    pages: (agent) => pageImage(agent.id, agent.filePath, agent.file.raw),
  };
}

export function composeAgentAccess(input: AgentAccessInput): AgentAccess {
  const { bus, contributions, runtime, registry, credentials } = input;
  const capabilities = agentCapabilities(input);
  // An agent's long-lived sandboxed processes (its sandboxed MCP servers) end with it, and all at shutdown.
  bus.subscribe((event) => {
    if (event.event_type === 'agent.unloaded' && event.agent_id) void input.hostCommands.killAgent(event.agent_id);
  });
  input.shutdownSteps.add({ name: 'sandboxed-processes', phase: 'final', run: () => input.hostCommands.killAll() });
  const agentsFor = (origin: string): AgentsService =>
    agentsService(registry, origin, async (agent, name) => credentials.read(agent, name), capabilities);
  const agents = agentsFor('kernel');
  const inbox: InboxService = inboxService(registry, bus, runtime, (trace) =>
    inboundTrace(contributions.points, trace),
  );
  const launcher = agentLauncher({
    runtime,
    bus,
    contributions,
    registry,
    isPasswordProtected,
    readSummary: (filePath) => input.fileReader.summary(filePath),
  });
  return { agentsFor, agents, inbox, launcher };
}
