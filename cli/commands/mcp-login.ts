/**
 * `agt mcp login <server>` / `agt mcp logout <server>`: the owner's OAuth sign-in to a registered HTTP
 * MCP server (`/mcp/servers/{name}/login`, docs/mcp.md "OAuth sign-in"). Login prints the authorization
 * URL (`--open` hands it to the desktop's opener too), then waits until the browser came back to the
 * daemon (or `--no-wait`). `--agent` names the agent of a per-agent registration (`oauth.signIn:
 * per-agent`). The tokens stay in the daemon, sealed: nothing secret passes through here.
 */
import { spawn } from 'node:child_process';
import { seg } from '../client.js';
import type { Ctx } from '../context.js';
import { EXIT } from '../errors.js';

interface SignInState {
  server: string;
  agentId?: string;
  signedIn: boolean;
  scopeNeeded?: string;
  pending: boolean;
  expiresAt?: number;
  scope?: string;
  error?: string;
}

function opener(): [string, string[]] {
  if (process.platform === 'darwin') return ['open', []];
  if (process.platform === 'win32') return ['cmd', ['/c', 'start', '']];
  return ['xdg-open', []];
}

/** The sign-in route, of one agent's account when `agent` is given. */
const loginPath = (server: string, agent: string | undefined) =>
  `/mcp/servers/${seg(server)}/login${agent !== undefined ? `?agent=${encodeURIComponent(agent)}` : ''}`;

export async function login(
  ctx: Ctx,
  server: string,
  options: { open?: boolean; wait?: boolean; agent?: string },
): Promise<number | void> {
  const { client, out } = ctx;
  const path = loginPath(server, options.agent);
  const before = await client.get<SignInState>(path);
  if (before.scopeNeeded && !ctx.out.json)
    out.line(`${out.bold(server)} asks for more scopes: this sign-in asks for ${before.scopeNeeded}`);
  const started = await client.post<{ server: string; authorizationUrl?: string; expiresAt?: number }>(path);
  if (!started.authorizationUrl) {
    out.result(started, () => out.line(`signed in to ${out.bold(server)} (the stored sign-in was renewed)`));
    return;
  }
  if (!ctx.out.json) {
    out.line(`open this URL in a browser on this machine to sign in to ${out.bold(server)}:`);
    out.line(started.authorizationUrl);
  }
  if (options.open) {
    const [command, args] = opener();
    const child = spawn(command, [...args, started.authorizationUrl], { stdio: 'ignore', detached: true });
    child.on('error', () => out.line(out.dim(`could not run ${command}: open the link above by hand`)));
    child.unref();
  }
  if (options.wait === false) {
    if (ctx.out.json) out.result(started, () => {});
    return;
  }
  const end = started.expiresAt ?? Date.now() + 600_000;
  for (;;) {
    const state = await client.get<SignInState>(path);
    if (state.signedIn && !state.pending) {
      out.result(state, () => out.line(out.green(`signed in to ${server}`)));
      return;
    }
    if (!state.pending || Date.now() > end) {
      out.result(state, () => out.line(out.red(`not signed in to ${server}: ${state.error ?? 'the sign-in ended'}`)));
      return EXIT.failed;
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

export async function logout(ctx: Ctx, server: string, options: { agent?: string } = {}): Promise<void> {
  const answer = await ctx.client.request<{ server: string; signedOut: boolean }>(
    'DELETE',
    loginPath(server, options.agent),
  );
  ctx.out.result(answer, () =>
    ctx.out.line(answer.signedOut ? `signed out of ${server}` : `${server} was not signed in`),
  );
}
