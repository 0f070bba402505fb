/**
 * The runtime, the built-in tools and the agent registry, built together because they call each other:
 * the registry attaches the runtime to every agent it loads, and the runtime reads and writes agents
 * through the registry. The runtime is built first and reaches the registry through callbacks that only
 * run once an agent is loaded. What comes from services built later (an agent's credentials, the inbox)
 * is handed in the same way.
 */
import { FileReader } from '../credentials/file-reader.js';
import type { InboundMessage, ToolDefinition } from '@agt/contracts';
import { AgentRegistry } from '../agents/registry.js';
import type { KernelBus } from '../events/bus.js';
import type { Contributions } from '../extensions/contributions.js';
import { RuntimeService } from '../runtime/runtime.js';
import type { HostCommandRunner } from '../runtime/sandbox/command-runner.js';
import { daemonSqlSlots } from '../runtime/sql-sandbox/sql-slots.js';
import { builtinTools } from '../runtime/tools/index.js';
import type { SettingsStore } from '../settings.js';
import type { ShutdownSteps } from '../shutdown-steps.js';
import type { FastifyBaseLogger } from 'fastify';

export interface AgentsInput {
  dataDir: string;
  settings: SettingsStore;
  logger: FastifyBaseLogger;
  bus: KernelBus;
  contributions: Contributions;
  hostCommands: HostCommandRunner;
  shutdownSteps: ShutdownSteps;
  /** One of the agent's sealed credentials, decrypted (the agents service, built later). */
  readCredential(agentId: string, name: string): Promise<string | undefined>;
  /** Delivery to an agent's inbox (the inbox service, built later). */
  deliver(agentId: string, message: InboundMessage): Promise<{ messageId: number }>;
}

export function composeAgents(input: AgentsInput): {
  runtime: RuntimeService;
  tools: ToolDefinition[];
  registry: AgentRegistry;
  fileReader: FileReader;
} {
  const { dataDir, settings, logger, bus, contributions } = input;
  // Agent SQL child processes across all agents: at most the owner's `sqlMaxProcesses`, read at each call.
  daemonSqlSlots.configure(() => settings.current().sqlMaxProcesses);
  const runtime: RuntimeService = new RuntimeService({
    hostCommands: input.hostCommands,
    bus,
    logger,
    contributions,
    builtinTools: () => tools,
    readCredential: (agentId, name) => input.readCredential(agentId, name),
    resolveAgent: (idOrName) => registry.resolve(idOrName),
    findAgent: (agentId) => registry.byId(agentId),
    updateConfig: async (agent, next) => {
      await registry.updateConfig(agent, next);
    },
    settings: () => settings.current(),
    listAgents: () => registry.list(),
  });
  const tools = builtinTools((agentId) => runtime.byId(agentId));

  // Files the daemon did not write last are read in a child process first (agents/vetted-files.ts).
  const fileReader = new FileReader();
  input.shutdownSteps.add({ name: 'file-reader', phase: 'final', run: () => fileReader.close() });
  const registry: AgentRegistry = new AgentRegistry({
    dataDir,
    logger,
    bus,
    contributions,
    runtime,
    deliver: (agentId) => (message) => input.deliver(agentId, message),
    settings,
    readWhole: (filePath) => fileReader.readWhole(filePath),
  });
  // Shutdown unloads in immediate mode: no grace for running turns, a deadline per agent.
  input.shutdownSteps.add({
    name: 'agents',
    phase: 'agents',
    run: async (deadlineMs) => {
      await registry.unloadAll({ reason: 'shutdown', graceMs: 0, deadlineMs });
      registry.dispose();
    },
  });
  return { runtime, tools, registry, fileReader };
}
