/**
 * Everything the `mcp` extension does once it is enabled (imported by `register` only, so reading the
 * definition of a disabled extension never loads the MCP SDK).
 */
import { join } from 'node:path';
import type { ExtensionContext, ExtensionHooks } from '@agt/contracts';
import { agentConfigChecks } from '@agt/contracts';
import { registerAgentMcpRoutes } from './agent-routes.js';
import { McpManager } from './agent-servers.js';
import { agentEnvCheck } from './config-check.js';
import type { McpOptions } from './options.js';
import { OAuthSignIn } from './oauth-signin.js';
import { McpPackages } from './packages.js';
import { registerMcpRoutes } from './routes.js';
import { registerSignInRoutes } from './signin-routes.js';
import { registerReviewRoutes } from './review-routes.js';
import { registerServerEndpoint } from './server/endpoint.js';
import { ToolPins } from './tool-pins.js';
import { ToolStateStore } from './tool-state.js';

export function setupMcp(ctx: ExtensionContext<McpOptions>): ExtensionHooks {
  const packages = new McpPackages(
    join(ctx.settings.dataDir, 'mcp-servers'),
    ctx.env,
    ctx.logger,
    ctx.config.installTimeoutMs,
  );
  const signIn = new OAuthSignIn({
    secrets: ctx.secrets,
    env: ctx.env,
    logger: ctx.logger,
    serverGuards: ctx.serverGuards,
    registration: (name) => (ctx.settings.current().mcpServers ?? []).find((r) => r.name === name),
    agentId: (ref) => ctx.agents.find(ref)?.id,
    changed: (server, agentId) => manager.reconnectServer(server, agentId),
    callbackPort: ctx.config.oauthCallbackPort,
    loginTimeoutMs: ctx.config.oauthLoginTimeoutMs,
  });
  const pins = new ToolPins(join(ctx.settings.dataDir, 'mcp-state', 'tool-pins.json'));
  const manager = new McpManager({
    pins,
    toolChanged: (agentId, server, change) =>
      ctx.bus.emit('mcp.tool.changed', { agentId, payload: { server, tool: change.tool, changed: change.changed } }),
    elicitationEvent: (agentId, type, payload) => ctx.bus.emit(type, { agentId, payload }),
    signIn,
    options: ctx.config,
    logger: ctx.logger,
    settings: ctx.settings,
    env: ctx.env,
    agents: ctx.agents,
    packagesDir: packages.dir,
    toolState: new ToolStateStore(join(ctx.settings.dataDir, 'mcp-state')),
  });
  ctx.contribute.tools(manager.contributor());
  // Agents set only the variables a registration allows: refused at config time, never passed (launch.ts).
  ctx.provide(agentConfigChecks, agentEnvCheck(ctx.settings));
  ctx.contribute.lifecycle({
    loaded: (agent) => manager.open(agent),
    unloaded: (agent) => manager.close(agent.id),
  });
  registerMcpRoutes(ctx.http, ctx.settings, manager, packages, ctx.config.installWaitMs, async (name) => {
    pins.forget(name);
    await signIn.forget(name);
  });
  registerSignInRoutes(ctx.http, signIn);
  registerReviewRoutes(ctx.http, ctx.settings, pins, manager);
  if (ctx.agentHttp) registerAgentMcpRoutes(ctx.agentHttp, ctx.agents, manager);
  // agt as an MCP server (`/mcp/server`); a fake kernel without turns has none.
  const turns = ctx.agents.turns;
  const endpoint = turns
    ? registerServerEndpoint(ctx.http, ctx.logger, {
        agents: ctx.agents,
        turns,
        bus: ctx.bus,
        settings: ctx.settings,
        version: '1.0.0',
        maxSessions: ctx.config.serverMaxSessions,
        idleMs: ctx.config.serverSessionIdleMs,
      })
    : undefined;
  return {
    async stop() {
      await endpoint?.close();
      await signIn.stop();
      packages.stop();
      await manager.stop();
    },
  };
}
