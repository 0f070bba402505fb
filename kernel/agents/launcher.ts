/**
 * The kernel's {@link AgentLauncher} (`ctx.launcher`, contracts/agent-launcher.ts): summaries of agent
 * files read without loading them, start and autostart through the review gate, unload with a reason.
 * The same code paths as `POST /agents/{id}/start`, `POST /agents/autostart` and `POST /agents/{id}/stop`.
 */
import type { AgentLauncher } from '@agt/contracts';
import { autostartFiles, type AutostartDeps } from './autostart.js';
import { canonicalPath } from './registry.js';
import { startAgent } from './start-agent.js';

export function agentLauncher(kernel: AutostartDeps): AgentLauncher {
  const { registry } = kernel;
  return {
    async summarize(filePath) {
      const canonical = canonicalPath(filePath);
      // A loaded agent's file config is what its file holds (the registry writes the file, then the
      // memory): read from memory. Opening and closing the file would cost a full garbage collection
      // (handle-release.ts), and tracked-folders asks for every agent it is told was created or changed.
      const loaded = registry.byPath(canonical);
      const { config, passwordProtected } = loaded
        ? { config: loaded.fileConfig, passwordProtected: kernel.isPasswordProtected(loaded.file) }
        : await kernel.readSummary(canonical);
      return {
        filePath: canonical,
        id: config.id,
        name: config.name,
        handle: config.handle ?? null,
        reviewed: registry.reviews.isReviewed(config),
        autostart: config.autostart === true,
        passwordProtected,
      };
    },
    async start(filePath) {
      const before = registry.byPath(filePath);
      const agent = await registry.load(filePath, { requireReview: true });
      const startupTriggered = agent.started ? false : (await startAgent(kernel, agent)).startupTriggered;
      return {
        agentId: agent.id,
        filePath: agent.filePath ?? canonicalPath(filePath),
        name: agent.name,
        loaded: before !== agent,
        startupTriggered,
      };
    },
    autostart: async (filePaths) => (await autostartFiles(kernel, filePaths)).report,
    async unload(agentId, reason) {
      const agent = registry.byId(agentId);
      if (!agent) return false;
      await registry.unload(agent, { reason });
      return true;
    },
  };
}
