/**
 * `/agents/{id}/mcp`: an agent's declared servers with status and recent log lines, the restart that
 * reconnects one at once (and starts a newly declared one), and re-enabling a tool whose input schema
 * changed.
 */
import { errorResponses } from '@agt/contracts';
import type { ExtensionHttp } from '@agt/contracts';
import type { AgentView, AgentsService } from '@agt/contracts';
import type { McpManager } from './agent-servers.js';
import { agentNotLoaded } from './errors.js';
import {
  AgentParams,
  AgentServerList,
  AgentServerParams,
  AgentToolParams,
  ServerView,
  TAG,
  ToolEnabled,
} from './schemas.js';

export function registerAgentMcpRoutes(http: ExtensionHttp, agents: AgentsService, manager: McpManager): void {
  const agentOf = (id: string): AgentView => {
    const agent = agents.find(id);
    if (!agent) throw agentNotLoaded(id);
    return agent;
  };

  http.get('', {
    schema: {
      tags: [TAG],
      summary: "An agent's MCP servers",
      params: AgentParams,
      response: { 200: AgentServerList, ...errorResponses(404) },
    },
    handler: async (request) => {
      const agent = agentOf(request.params.id);
      return { agentId: agent.id, servers: manager.servers(agent) };
    },
  });

  http.post('/:name/restart', {
    schema: {
      tags: [TAG],
      summary: 'Reconnect one MCP server now',
      description:
        'Closes the session (the child is killed) and connects again with the current declaration and registration; answers once the connect settled.',
      params: AgentServerParams,
      response: { 200: ServerView, ...errorResponses(404) },
    },
    handler: async (request) => manager.restart(agentOf(request.params.id), request.params.name),
  });

  http.post('/:name/tools/:tool/enable', {
    schema: {
      tags: [TAG],
      summary: 'Re-enable an MCP tool whose input schema changed',
      description:
        "Accepts the tool's current schema (see `disabledReason` in GET /agents/{id}/tools). `tool` is the server's own tool name. 404 when no change waits.",
      params: AgentToolParams,
      response: { 200: ToolEnabled, ...errorResponses(404) },
    },
    handler: async (request) => {
      const agent = agentOf(request.params.id);
      manager.enableTool(agent, request.params.name, request.params.tool);
      return { agentId: agent.id, server: request.params.name, tool: request.params.tool, enabled: true as const };
    },
  });
}
