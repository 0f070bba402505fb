/**
 * The `mcp` extension (docs/mcp.md): agents use tools from MCP servers through the official SDK.
 * Registrations live in settings `mcpServers`; an agent's declared servers connect when it loads and
 * close when it unloads; their tools are contributed as `mcp_<server>_<tool>`. Routes: `/mcp` and
 * `/agents/{id}/mcp`. The SDK is loaded by `register` only (see setup.ts).
 */
import { defineExtension } from '@agt/contracts';
import { McpOptions } from './options.js';

export default defineExtension({
  name: 'mcp',
  version: '1.0.0',
  contract: '1.0',
  prefix: '/mcp',
  agentRoutes: 'mcp',
  routeGroups: ['MCP'],
  options: McpOptions,
  async register(ctx) {
    const { setupMcp } = await import('./setup.js');
    return setupMcp(ctx);
  },
});
