/**
 * Backups, restores, the backup schedule and bounded growth (docs/backups.md). Tracked files come from
 * the agent locator's `list`.
 */
import { agentLocator, type ToolDefinition } from '@agt/contracts';
import type { AgentIdentityService } from '../agent-identity/service.js';
import type { AgentRegistry } from '../agents/registry.js';
import type { CredentialsService } from '../credentials/service.js';
import type { KernelBus } from '../events/bus.js';
import type { Contributions } from '../extensions/contributions.js';
import type { OwnerIdentity } from '../identity/owner.js';
import type { RuntimeService } from '../runtime/runtime.js';
import type { SettingsStore } from '../settings.js';
import type { ShutdownSteps } from '../shutdown-steps.js';
import { StorageService } from '../storage/service.js';
import { endSqliteJobs } from '../storage/sqlite-job.js';
import type { FastifyBaseLogger } from 'fastify';

export function composeStorage(input: {
  dataDir: string;
  settings: SettingsStore;
  logger: FastifyBaseLogger;
  bus: KernelBus;
  contributions: Contributions;
  runtime: RuntimeService;
  registry: AgentRegistry;
  identity: OwnerIdentity;
  agentIdentity: AgentIdentityService;
  credentials: CredentialsService;
  tools: ToolDefinition[];
  shutdownSteps: ShutdownSteps;
}): StorageService {
  const { runtime, contributions, shutdownSteps, tools } = input;
  const storage = new StorageService({
    dataDir: input.dataDir,
    settings: input.settings,
    logger: input.logger,
    bus: input.bus,
    contributions,
    runtime,
    registry: input.registry,
    identity: input.identity,
    agentIdentity: input.agentIdentity,
    credentials: input.credentials,
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
  return storage;
}
