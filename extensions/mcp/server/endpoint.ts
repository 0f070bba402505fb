/**
 * `/mcp/server`: agt as an MCP server over Streamable HTTP (POST for messages, GET for the session's
 * event stream, DELETE to end a session). The route sits in the extension's scope of the main API, so
 * the kernel's Host / Origin / Sec-Fetch-Site guards and the bearer token apply before it runs; the
 * transport then writes the answer itself (the reply is hijacked from fastify). Its answers, errors
 * included, are MCP's JSON-RPC messages rather than the REST API's `{error, code}`, so it is left out of
 * `/openapi.json` (docs/mcp.md documents it).
 */
import type { ExtensionHttp, Logger } from '@agt/contracts';
import type { McpSessions, SessionDeps } from './sessions.js';

export function registerServerEndpoint(
  http: ExtensionHttp,
  logger: Logger,
  deps: SessionDeps,
): { close(): Promise<void> } {
  let sessions: Promise<McpSessions> | undefined;
  const open = () => (sessions ??= import('./sessions.js').then(({ McpSessions }) => new McpSessions(deps)));
  for (const method of ['GET', 'POST', 'DELETE'] as const) {
    http.route({
      method,
      url: '/server',
      schema: { hide: true },
      async handler(request, reply) {
        const handler = await open();
        reply.hijack();
        try {
          await handler.handle(request.raw, reply.raw, request.body);
        } catch (error) {
          logger.warn({ err: error }, 'mcp server: a request failed');
          if (!reply.raw.headersSent)
            reply.raw
              .writeHead(500, { 'content-type': 'application/json' })
              .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null }));
          else reply.raw.end();
        }
      },
    });
  }
  return {
    async close() {
      if (sessions) await (await sessions).close();
    },
  };
}
