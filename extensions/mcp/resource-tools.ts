/**
 * A server's resources and prompts as tools of the agent (docs/mcp.md "Resources and prompts"), offered
 * when the server said it has them (its `resources` / `prompts` capability):
 *
 * - `mcp_<server>_resources_list`: its resources and resource templates (every page, at most 1,000 of each);
 * - `mcp_<server>_resources_read {uri}`: one resource's contents (text as text, images as images);
 * - `mcp_<server>_prompts_list`: its prompts and their arguments;
 * - `mcp_<server>_prompts_get {name, arguments?}`: one prompt's messages.
 *
 * Each request is made when the agent calls the tool, so what a server's `list_changed` announces is what
 * the next call sees. They take the server's `restricted` flag like its own tools.
 */
import type { ToolDefinition } from '@agt/contracts';
import type { CallToolResult, RequestOptions } from '@modelcontextprotocol/client';
import type { ServerConnection } from './server-connection.js';
import { toToolResult } from './tool-results.js';

/** Each call asks the server: the SDK's cache of list and read results (by the server's hints) is not used. */
const fresh = (request: RequestOptions) => ({ ...request, cacheMode: 'bypass' as const });

const MAX_ITEMS = 1000;

export interface ResourceToolOptions {
  name(suffix: string): string;
  restricted: boolean;
  timeoutMs: number;
}

type Content = CallToolResult['content'];

/** Every page of a cursor-paged list, at most {@link MAX_ITEMS} items. */
async function allPages<T>(page: (cursor: string | undefined) => Promise<{ items: T[]; next?: string }>): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  do {
    const result = await page(cursor);
    items.push(...result.items);
    cursor = result.next;
  } while (cursor && items.length < MAX_ITEMS);
  return items.slice(0, MAX_ITEMS);
}

export function resourceAndPromptTools(connection: ServerConnection, options: ResourceToolOptions): ToolDefinition[] {
  const server = connection.name;
  const base = {
    source: `mcp:${server}`,
    restricted: options.restricted,
    notable: true,
    timeoutMs: options.timeoutMs,
  };
  const call = (context: Parameters<ToolDefinition['run']>[1]) => ({
    signal: context.signal,
    timeoutMs: options.timeoutMs,
    ...(context.progress ? { progress: context.progress } : {}),
    ...(context.trace ? { trace: context.trace } : {}),
    ...(context.ask ? { ask: context.ask } : {}),
    ...(context.sample ? { sample: context.sample } : {}),
    ...(context.callId ? { callId: context.callId } : {}),
  });
  const tools: ToolDefinition[] = [];
  if (connection.capabilities?.resources) {
    tools.push({
      ...base,
      name: options.name('resources_list'),
      description: `List the resources and resource templates of MCP server ${server} (URIs to read with ${options.name('resources_read')}).`,
      inputSchema: { type: 'object', properties: {} },
      run: async (_args, context) => {
        const resources = await allPages(async (cursor) => {
          const page = await connection.request('resources/list', call(context), (client, request, meta) =>
            client.listResources({ ...(cursor ? { cursor } : {}), ...meta }, fresh(request)),
          );
          return { items: page.resources, ...(page.nextCursor ? { next: page.nextCursor } : {}) };
        });
        const templates = await allPages(async (cursor) => {
          const page = await connection
            .request('resources/templates/list', call(context), (client, request, meta) =>
              client.listResourceTemplates({ ...(cursor ? { cursor } : {}), ...meta }, fresh(request)),
            )
            // A server with resources but no templates may not answer this method at all.
            .catch(() => ({ resourceTemplates: [], nextCursor: undefined }));
          return { items: page.resourceTemplates, ...(page.nextCursor ? { next: page.nextCursor } : {}) };
        });
        return {
          content: JSON.stringify({
            resources: resources.map((r) => ({
              uri: r.uri,
              name: r.name,
              ...(r.title ? { title: r.title } : {}),
              ...(r.description ? { description: r.description } : {}),
              ...(r.mimeType ? { mimeType: r.mimeType } : {}),
            })),
            templates: templates.map((r) => ({
              uriTemplate: r.uriTemplate,
              name: r.name,
              ...(r.description ? { description: r.description } : {}),
              ...(r.mimeType ? { mimeType: r.mimeType } : {}),
            })),
          }),
        };
      },
    });
    tools.push({
      ...base,
      name: options.name('resources_read'),
      description: `Read one resource of MCP server ${server} by its URI (from ${options.name('resources_list')}, or a template filled in).`,
      inputSchema: {
        type: 'object',
        properties: { uri: { type: 'string', minLength: 1, maxLength: 4000 } },
        required: ['uri'],
      },
      run: async (args, context) => {
        const result = await connection.request('resources/read', call(context), (client, request, meta) =>
          client.readResource({ uri: String(args.uri), ...meta }, fresh(request)),
        );
        const content = result.contents.map((resource) => ({ type: 'resource' as const, resource }));
        return toToolResult({ content: content as Content });
      },
    });
  }
  if (connection.capabilities?.prompts) {
    tools.push({
      ...base,
      name: options.name('prompts_list'),
      description: `List the prompts of MCP server ${server} with their arguments (get one with ${options.name('prompts_get')}).`,
      inputSchema: { type: 'object', properties: {} },
      run: async (_args, context) => {
        const prompts = await allPages(async (cursor) => {
          const page = await connection.request('prompts/list', call(context), (client, request, meta) =>
            client.listPrompts({ ...(cursor ? { cursor } : {}), ...meta }, fresh(request)),
          );
          return { items: page.prompts, ...(page.nextCursor ? { next: page.nextCursor } : {}) };
        });
        return {
          content: JSON.stringify({
            prompts: prompts.map((p) => ({
              name: p.name,
              ...(p.title ? { title: p.title } : {}),
              ...(p.description ? { description: p.description } : {}),
              ...(p.arguments?.length ? { arguments: p.arguments } : {}),
            })),
          }),
        };
      },
    });
    tools.push({
      ...base,
      name: options.name('prompts_get'),
      description: `Get one prompt of MCP server ${server}: its messages, with the arguments filled in.`,
      inputSchema: {
        type: 'object',
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 200 },
          arguments: { type: 'object', additionalProperties: { type: 'string' } },
        },
        required: ['name'],
      },
      run: async (args, context) => {
        const given = (args.arguments ?? {}) as Record<string, unknown>;
        const result = await connection.request('prompts/get', call(context), (client, request, meta) =>
          client.getPrompt(
            {
              ...meta,
              name: String(args.name),
              arguments: Object.fromEntries(Object.entries(given).map(([k, v]) => [k, String(v)])),
            },
            request,
          ),
        );
        const content: Content = [];
        if (result.description) content.push({ type: 'text', text: result.description });
        for (const message of result.messages) {
          content.push({ type: 'text', text: `[${message.role}]` });
          content.push(message.content as Content[number]);
        }
        return toToolResult({ content });
      },
    });
  }
  return tools;
}
