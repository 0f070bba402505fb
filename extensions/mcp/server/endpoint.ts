/**
 * `/mcp/server`: agt as an MCP server over Streamable HTTP (POST for messages, GET for the session's
 * event stream, DELETE to end a session). The route sits in the extension's scope of the main API, so
 * the kernel's Host / Origin / Sec-Fetch-Site guards and the bearer token apply before it runs; the
 * transport then writes the answer itself (the reply is hijacked from fastify).
 */
import type { ExtensionHttp } from '@agt/contracts';
import type { McpSessions, SessionDeps } from './sessions.js';

export function registerServerEndpoint(http: ExtensionHttp, deps: SessionDeps): { close(): Promise<void> } {
  let sessions: Promise<McpSessions> | undefined;
  const open = () => (sessions ??= import('./sessions.js').then(({ McpSessions }) => new McpSessions(deps)));
  for (const method of ['GET', 'POST', 'DELETE'] as const) {
    http.route({
      method,
      url: '/server',
      schema: { tags: ['MCP'], summary: `agt as an MCP server (Streamable HTTP ${method}; docs/mcp.md "agt as an MCP server")`, hide: method !== 'POST' } as Record<string, unknown>,
      async handler(request, reply) {
        const handler = await open();
        reply.hijack();
        await handler.handle(request.raw, reply.raw, request.body);
      },
    });
  }
  return {
    async close() {
      if (sessions) await (await sessions).close();
    },
  };
}
