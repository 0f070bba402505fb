/**
 * `agt mcp serve`: a stdio bridge to the daemon's MCP server (`/mcp/server`), for MCP clients that only
 * spawn processes. Every JSON-RPC message read on stdin goes to the endpoint over Streamable HTTP (with
 * the daemon's bearer token, found as every command finds it) and every message from it is written to
 * stdout, unchanged both ways: the session, progress notifications and elicitation requests pass
 * through as they are. stdout carries protocol messages only; what goes wrong is said on stderr.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Ctx } from '../context.js';

const say = (line: string) => process.stderr.write(`agt mcp serve: ${line}\n`);

export async function serve(ctx: Ctx): Promise<number> {
  const { url, token, tokenSource } = ctx.client.connection;
  if (!token)
    say(
      `no daemon token found (looked at --token, AGT_DAEMON_TOKEN and ${tokenSource}); the daemon will refuse the session`,
    );
  const http = new StreamableHTTPClientTransport(new URL(`${url.replace(/\/+$/, '')}/mcp/server`), {
    requestInit: { headers: token ? { authorization: `Bearer ${token}` } : {} },
  });
  const stdio = new StdioServerTransport();
  let ending: Promise<void> | undefined;
  const end = () =>
    (ending ??= (async () => {
      // Ends the session on the daemon (DELETE) so its turns' waits are not left to the idle sweep.
      await http.terminateSession().catch(() => {});
      await http.close().catch(() => {});
      await stdio.close().catch(() => {});
    })());

  stdio.onmessage = (message: JSONRPCMessage) => {
    http.send(message).catch((error: unknown) => {
      const why = error instanceof Error ? error.message : String(error);
      say(`the daemon at ${url} did not take the message: ${why}`);
      // A request gets an error answer, so the client does not wait for ever.
      if ('method' in message && 'id' in message)
        void stdio.send({ jsonrpc: '2.0', id: message.id, error: { code: -32000, message: `agt daemon: ${why}` } });
    });
  };
  http.onmessage = (message: JSONRPCMessage) => {
    // The client transport sends the negotiated version on later requests once it knows it.
    if ('result' in message && message.result && typeof message.result.protocolVersion === 'string')
      http.setProtocolVersion(message.result.protocolVersion);
    void stdio.send(message);
  };
  http.onerror = (error) => say(error.message);
  stdio.onerror = (error) => say(error.message);

  await http.start();
  await stdio.start();
  await new Promise<void>((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  await end();
  return 0;
}
