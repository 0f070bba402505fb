/**
 * One agent's side of a server's notifications (server-notifications.ts): its `on_mcp_resource` trigger, its
 * log, and its work folder as the server's root, each as the owner's registration and the agent's
 * declaration say now (read at each connect, or at each message).
 */
import { pathToFileURL } from 'node:url';
import { type AgentsService, type McpRegistration, type McpServerConfig, SANDBOX_WORK_FOLDER } from '@agt/contracts';
import type { NotificationHooks } from './server-notifications.js';

export function serverNotificationHooks(
  agentId: string,
  declaration: McpServerConfig,
  agents: AgentsService,
  registration: () => McpRegistration | undefined,
): NotificationHooks {
  const server = declaration.name;
  return {
    subscriptions: () =>
      (agents.find(agentId)?.config.mcp?.servers.find((s) => s.name === server) ?? declaration).subscribe ?? [],
    resourceUpdated(uri) {
      try {
        agents.turns?.fire?.(agentId, 'on_mcp_resource', { server, uri });
      } catch (error) {
        agents.log(agentId, 'warn', `on_mcp_resource of ${server} not fired: ${(error as Error).message}`, { server });
      }
    },
    logLevel: () => registration()?.logLevel ?? 'warning',
    serverLog: (level, message) => agents.log(agentId, level, message, { server }),
    async root() {
      const owner = registration();
      // Only the owner's registration offers it, and only to a server run here, never one reached over HTTP.
      if (!owner?.exposeWorkFolder || owner.type === 'http') return undefined;
      // A sandboxed server sees the folder where the agent's commands do; others get its host path.
      if (owner.sandbox) return pathToFileURL(SANDBOX_WORK_FOLDER).href;
      if (!agents.workFolder) return undefined;
      return pathToFileURL(await agents.workFolder(agentId)).href;
    },
  };
}
