/**
 * The kernel's route groups, each a fastify plugin function, run under its prefix with the kernel's services (the
 * groups of one prefix share one scope). The kernel's top-level paths (which an extension may not claim) are read off
 * the routes as they register, never kept by hand.
 */
import type { KernelApp } from '../http/app.js';
import type { KernelServices } from '../services.js';
import { agentContextRoutes } from './agent-context.js';
import { agentFileRoutes } from './agent-files.js';
import { agentIdentityRoutes } from './agent-identity.js';
import { agentLogRoutes } from './agent-logs.js';
import { agentMessageRoutes } from './agent-messages.js';
import { agentMemoryRoutes } from './agent-memory.js';
import { agentMetaRoutes } from './agent-meta.js';
import { agentOutboxRoutes } from './agent-outbox.js';
import { agentRemoveRoutes } from './agent-remove.js';
import { agentReviewRoutes } from './agent-review.js';
import { agentTableRoutes } from './agent-tables.js';
import { agentToolRoutes } from './agent-tools.js';
import { agentUmbilicalRoutes } from './agent-umbilical.js';
import { agentRoutes } from './agents.js';
import { autostartRoutes } from './autostart.js';
import { backupRoutes } from './backups.js';
import { chatRoutes } from './chat.js';
import { compactRoutes } from './compact.js';
import { controlRoutes } from './control.js';
import { createAgentRoutes } from './create-agent.js';
import { credentialRoutes } from './credentials.js';
import { daemonRoutes } from './daemon.js';
import { eventRoutes } from './events.js';
import { evalRoutes } from './evals.js';
import { extensionConfigRoutes } from './extension-config.js';
import { healthRoutes } from './health.js';
import { identityRoutes } from './identity.js';
import { loopWriteRoutes } from './loops-write.js';
import { loopRoutes } from './loops.js';
import type { KernelRoutes } from './plugin.js';
import { operatorTaskRoutes } from './operator-tasks.js';
import { runtimeRoutes } from './runtime-extensions.js';
import { runtimeInfoRoutes } from './runtime-info.js';
import { settingsRoutes } from './settings.js';
import { startAgentRoutes } from './start-agent.js';
import { taskRoutes } from './tasks.js';
import { templateRoutes } from './templates.js';
import { timerRoutes } from './timers.js';
import { usageRoutes } from './usage.js';

/** Route groups and their prefixes. Agent-scoped groups live under `/agents/:id`. */
const GROUPS: ReadonlyArray<[string, KernelRoutes[]]> = [
  // Backups register full paths (`/agents/:id/backup`, `/agents/restore`, `/backups`, ...): one group of their own.
  ['', [healthRoutes, backupRoutes]],
  ['/daemon', [daemonRoutes]],
  ['/events', [eventRoutes]],
  ['/settings', [settingsRoutes]],
  ['/identity', [identityRoutes]],
  ['/templates', [templateRoutes]],
  ['/runtime', [runtimeInfoRoutes, runtimeRoutes, extensionConfigRoutes]],
  ['/tasks', [operatorTaskRoutes]],
  ['/usage', [usageRoutes]],
  ['/evals', [evalRoutes]],
  ['/agents', [agentRoutes, createAgentRoutes, agentReviewRoutes, autostartRoutes]],
  [
    '/agents/:id',
    [
      startAgentRoutes,
      chatRoutes,
      controlRoutes,
      loopRoutes,
      loopWriteRoutes,
      agentContextRoutes,
      compactRoutes,
      timerRoutes,
      taskRoutes,
      credentialRoutes,
      agentIdentityRoutes,
      agentMetaRoutes,
      agentTableRoutes,
      agentLogRoutes,
      agentMessageRoutes,
      agentUmbilicalRoutes,
      agentFileRoutes,
      agentRemoveRoutes,
      agentOutboxRoutes,
      agentToolRoutes,
      agentMemoryRoutes,
    ],
  ],
];

/** Registers every kernel route group; returns the kernel's top-level paths (`/agents`, `/health`, ...). */
export async function registerKernelRoutes(app: KernelApp, services: KernelServices): Promise<ReadonlySet<string>> {
  const prefixes = new Set<string>();
  await app.register(async (kernel) => {
    kernel.addHook('onRoute', (route) => {
      prefixes.add(`/${route.url.split('/')[1] ?? ''}`);
    });
    // One fastify scope per prefix, its groups run on it one after another: a group only adds routes
    // (no request hooks, decorators, parsers or handlers of its own; events.ts adds close hooks), so
    // sharing a scope changes no answer, and every scope fastify makes (hooks, parsers, reply and
    // request classes copied) was start-up time (37 scopes -> 11).
    for (const [prefix, plugins] of GROUPS) {
      await kernel.register(
        async (scope, options: { services: KernelServices }) => {
          for (const plugin of plugins) await plugin(scope, options);
        },
        { prefix, services },
      );
    }
  });
  return prefixes;
}
