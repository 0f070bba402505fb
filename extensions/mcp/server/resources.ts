/**
 * The resources of agt's MCP server, per exposed agent (settings `mcpServer.agents`, checked at every
 * list and read): its card (`agt://agents/{id}/card`), its recent conversation on the main loop
 * (`…/conversation`) and its stored files, read-only (`…/files/{path}`). Files are read through
 * `ctx.agents.files` keyed by the agent's id: only that agent's own `agt_files` rows exist there (no
 * host path is ever built), and the kernel refuses `.`/`..` segments.
 */
import { type McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { AgentTurnsAccess } from '@agt/contracts';
import type { AgentsService, AgentView } from '@agt/contracts';
import { passiveContentType, passiveStoredType } from '@agt/contracts';
import { type Exposed, notExposed } from './exposed.js';

/** Rows of the conversation resource; files listed per agent; the largest file read. */
const CONVERSATION_ROWS = 50;
const LISTED_FILES = 200;
const MAX_FILE_BYTES = 4 * 1024 * 1024;

export interface ResourceDeps {
  exposed: Exposed;
  agents: AgentsService;
  turns: AgentTurnsAccess;
}

const base = (agent: AgentView) => `agt://agents/${encodeURIComponent(agent.id)}`;
/** A listed file's type only when it is a passive one (the bytes decide at read). */
const optionalType = (mimeType: string | undefined) => (mimeType === undefined ? {} : { mimeType });
const json = (uri: URL, value: unknown) => ({
  contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(value, null, 2) }],
});

export function registerResources(server: McpServer, deps: ResourceDeps): void {
  const { exposed, agents, turns } = deps;
  const agentOf = (variable: string | string[] | undefined) => {
    const ref = decodeURIComponent(String(Array.isArray(variable) ? variable[0] : (variable ?? '')));
    const agent = exposed.find(ref);
    if (!agent) throw new McpError(ErrorCode.InvalidParams, notExposed(ref));
    return agent;
  };

  server.registerResource(
    'agent-card',
    new ResourceTemplate('agt://agents/{agent}/card', {
      list: async () => ({
        resources: exposed
          .list()
          .map((agent) => ({ uri: `${base(agent)}/card`, name: `${agent.name} card`, mimeType: 'application/json' })),
      }),
    }),
    {
      description: "An agent's card: id, name, handle, description, DID, skills, enabled tools",
      mimeType: 'application/json',
    },
    async (uri, variables) => {
      const agent = agentOf(variables.agent);
      const config = agent.config as Record<string, any>;
      return json(uri, {
        id: agent.id,
        name: agent.name,
        handle: agent.handle ?? null,
        description: config.description ?? '',
        did: agents.keys.identity(agent.id)?.did ?? null,
        skills: config.messaging?.skills ?? [],
        tools: Array.isArray(config.tools)
          ? config.tools.filter((tool: any) => tool?.enabled !== false).map((tool: any) => String(tool.name))
          : [],
      });
    },
  );

  server.registerResource(
    'agent-conversation',
    new ResourceTemplate('agt://agents/{agent}/conversation', {
      list: async () => ({
        resources: exposed.list().map((agent) => ({
          uri: `${base(agent)}/conversation`,
          name: `${agent.name} conversation`,
          mimeType: 'application/json',
        })),
      }),
    }),
    {
      description: `An agent's recent conversation on its main loop (the last ${CONVERSATION_ROWS} rows, oldest first)`,
      mimeType: 'application/json',
    },
    async (uri, variables) => json(uri, turns.history(agentOf(variables.agent).id, { limit: CONVERSATION_ROWS })),
  );

  server.registerResource(
    'agent-file',
    new ResourceTemplate('agt://agents/{agent}/files/{+path}', {
      list: async () => {
        const resources = [];
        for (const agent of exposed.list()) {
          const files = await agents.files.list(agent.id).catch(() => []);
          for (const file of files.slice(0, LISTED_FILES)) {
            resources.push({
              uri: `${base(agent)}/files/${file.path.split('/').map(encodeURIComponent).join('/')}`,
              name: `${agent.name}: ${file.path}`,
              ...optionalType(passiveStoredType(file.mimeType)),
              size: file.size,
            });
          }
        }
        return { resources };
      },
    }),
    { description: "One of an agent's stored files (what its fs_* tools see), read-only" },
    async (uri, variables) => {
      const agent = agentOf(variables.agent);
      let path: string;
      try {
        path = decodeURIComponent(String(variables.path ?? ''));
      } catch {
        throw new McpError(ErrorCode.InvalidParams, 'The file path is not valid percent-encoding.');
      }
      const file = await agents.files.read(agent.id, path).catch((error: unknown) => {
        throw new McpError(ErrorCode.InvalidParams, error instanceof Error ? error.message : String(error));
      });
      if (!file) throw new McpError(ErrorCode.InvalidParams, `Agent ${agent.name} has no file ${path}.`);
      if (file.size > MAX_FILE_BYTES)
        throw new McpError(ErrorCode.InvalidParams, `The file is larger than ${MAX_FILE_BYTES} bytes.`);
      // Never an active type (an agent chooses its files' stored types): contracts/file-types.ts.
      const mimeType = passiveContentType(file.mimeType, file.content);
      if (mimeType.endsWith('charset=utf-8'))
        return { contents: [{ uri: uri.href, mimeType, text: file.content.toString('utf8') }] };
      return { contents: [{ uri: uri.href, mimeType, blob: file.content.toString('base64') }] };
    },
  );
}
