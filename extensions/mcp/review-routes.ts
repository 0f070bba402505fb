/**
 * `/mcp/servers/{name}/review`: the changed tool definitions of a server waiting for the owner (tool-pins.ts,
 * docs/mcp.md "Pinned tool definitions"). `GET` shows each change (the approved definition and the one the
 * server lists now); `POST` approves them (all, or the tools named), which enables the tools again for
 * every agent.
 */
import { errorResponses } from '@agt/contracts';
import type { ExtensionHttp, SettingsService } from '@agt/contracts';
import type { McpManager } from './agent-servers.js';
import { nothingToReview, registrationMissing } from './errors.js';
import { NameParams, ReviewApproved, ReviewBody, ReviewList, TAG } from './schemas.js';
import type { ToolPins } from './tool-pins.js';

export function registerReviewRoutes(
  http: ExtensionHttp,
  settings: SettingsService,
  pins: ToolPins,
  manager: McpManager,
): void {
  const known = (name: string) => {
    if (!pins.known(name) && !(settings.current().mcpServers ?? []).some((r) => r.name === name))
      throw registrationMissing(name);
  };

  http.get('/servers/:name/review', {
    schema: {
      tags: [TAG],
      summary: "An MCP server's changed tool definitions waiting for review",
      description:
        'Each tool whose description or input schema differs from the definition the owner approved (a tool is disabled while its change waits): `before` is the approved definition, `after` the one the server lists now.',
      params: NameParams,
      response: { 200: ReviewList, ...errorResponses(404) },
    },
    handler: async (request) => {
      known(request.params.name);
      return { server: request.params.name, changes: pins.review(request.params.name) };
    },
  });

  http.post('/servers/:name/review', {
    schema: {
      tags: [TAG],
      summary: "Approve an MCP server's changed tool definitions",
      description:
        'Pins the definitions the server lists now (of `tools`, else of every changed tool): the tools are enabled again for every agent. 404 when no change waits.',
      params: NameParams,
      body: ReviewBody,
      response: { 200: ReviewApproved, ...errorResponses(404) },
    },
    handler: async (request) => {
      const { name } = request.params;
      known(name);
      const approved = pins.approve(name, request.body?.tools);
      if (approved.length === 0) throw nothingToReview(name);
      manager.acceptReviewed(name, approved);
      return { server: name, approved };
    },
  });
}
