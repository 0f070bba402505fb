/**
 * `PUT /agents/{id}/tools/{name}` `{enabled?, restricted?}`: change one tool of an agent without
 * sending its whole `tools` array (a merge patch replaces arrays, so a PATCH naming one tool dropped
 * the others). The change is merged into the config's declaration of that tool and goes through
 * `registry.updateConfig`, the path of `PUT`/`PATCH /agents/{id}/config`: schema, secrets, the owner's
 * ceiling, the extensions' config checks, persistence and the review mark.
 */
import { Type } from 'typebox';
import { type AgentConfig, type ToolDeclaration, AgtError, errorResponses } from '@agt/contracts';
import { ToolEntry } from '../http-api/agents-api.js';
import { toolEntries } from '../agents/tool-list.js';
import type { KernelRoutes } from './plugin.js';

const Params = Type.Object({ id: Type.String({ minLength: 1 }), name: Type.String({ minLength: 1, maxLength: 200 }) });

const Body = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    restricted: Type.Optional(Type.Boolean({ description: "true: every call waits for the owner's approval" })),
  },
  { additionalProperties: false, minProperties: 1 },
);

/** 404 with a stable code: a tool nothing offers this agent and its config does not declare. */
export const unknownTool = (agentId: string, name: string) =>
  new AgtError('unknown_tool', `agent ${agentId} has no tool "${name}" (GET /agents/${agentId}/tools lists them)`, {
    status: 404,
    details: { tool: name },
  });

export const agentToolRoutes: KernelRoutes<'builtinTools' | 'contributions' | 'registry'> = async (
  app,
  { services },
) => {
  const registry = services.registry;

  app.put(
    '/tools/:name',
    {
      schema: {
        tags: ['Agents'],
        summary: 'Enable, disable, restrict or unrestrict one tool of the agent (the other tools stay as they are)',
        description:
          "Merges `enabled` and/or `restricted` into the config's declaration of the tool (adding one when the tool was not declared, starting from what `GET /agents/{id}/tools` shows), then validates, persists and applies the config as `PUT /agents/{id}/config`. " +
          '404 `unknown_tool` when neither a registry (built-in, MCP, compute, ...) nor the config knows the tool.',
        params: Params,
        body: Body,
        response: { 200: Type.Object({ agentId: Type.String(), tool: ToolEntry }), ...errorResponses(400, 404, 409) },
      },
    },
    async (request) => {
      const agent = registry.resolve(request.params.id);
      const name = request.params.name;
      const builtin = services.builtinTools;
      const listed = async (tools: readonly ToolDeclaration[]) =>
        toolEntries(
          tools,
          builtin,
          await services.contributions.toolsFor(agent.id, new Set(builtin.map((tool) => tool.name))),
        );
      const current = (await listed(agent.fileConfig.tools)).find((tool) => tool.name === name);
      if (!current) throw unknownTool(agent.id, name);
      const declared = agent.fileConfig.tools.find((tool) => tool.name === name);
      // An undeclared tool starts from what applies now (its definition's defaults), so restricting a
      // tool does not also switch it on or off.
      const next: ToolDeclaration = { ...(declared ?? { name, enabled: current.enabled }), name };
      if (request.body.enabled !== undefined) next.enabled = request.body.enabled;
      if (request.body.restricted !== undefined) next.restricted = request.body.restricted;
      const tools = declared
        ? agent.fileConfig.tools.map((tool) => (tool.name === name ? next : tool))
        : [...agent.fileConfig.tools, next];
      await registry.updateConfig(agent, { ...agent.fileConfig, tools } as AgentConfig);
      // What applies now (the config capped by the owner's ceiling), as GET /agents/{id}/tools shows it.
      const tool = (await listed(agent.config.tools)).find((entry) => entry.name === name)!;
      return { agentId: agent.id, tool };
    },
  );
};
