/**
 * `agt mcp …`: MCP server registrations and packages (daemon-wide, `/mcp`) and an agent's servers
 * (`/agents/{id}/mcp`). Other areas may add a subcommand to the group here (one declaration each).
 */
import type { Command } from 'commander';
import { run } from '../run.js';

const mcp = () => import('../commands/mcp.js');

export function declareMcp(agt: Command): Command {
  const group = agt
    .command('mcp')
    .description("MCP servers: registrations, packages, an agent's servers and tools")
    .action(run(async (ctx) => (await mcp()).list(ctx, {})));
  group
    .command('ls')
    .alias('list')
    .description(
      "registrations and the open servers of loaded agents (--agent: one agent's declared servers with status and logs)",
    )
    .option('--agent <agent>', "one agent's servers")
    .action(run(async (ctx, options: { agent?: string }) => (await mcp()).list(ctx, options)));
  group
    .command('install <package>')
    .description(
      'install an MCP server package with npm into the data directory (name, name@version, tarball or folder)',
    )
    .action(run(async (ctx, spec: string) => (await mcp()).install(ctx, spec)));
  group
    .command('packages')
    .description('installed MCP server packages and the latest installs')
    .action(run(async (ctx) => (await mcp()).packages(ctx)));
  group
    .command('uninstall <package>')
    .description('uninstall an MCP server package')
    .action(run(async (ctx, spec: string) => (await mcp()).uninstall(ctx, spec)));
  group
    .command('add <name>')
    .description('register an MCP server: one of --npm, --command or --http')
    .option('--npm <package>', 'an installed package (agt mcp install), run with node')
    .option('--command <path>', 'an executable')
    .option('--arg <arg...>', 'arguments (npm and command)')
    .option('--http <url>', 'a Streamable HTTP (or SSE) endpoint')
    .option('--env <NAME=value...>', 'plain variables for the child (never secrets)')
    .option('--env-from <NAME=DAEMON_VAR...>', "a child variable read from the daemon's environment")
    .option('--header-env <Header=DAEMON_VAR...>', "http: a header read from the daemon's environment")
    .option('--allow-agent-env <NAME...>', 'variable names an agent may set for this server')
    .option('--allow-agent-headers <Header...>', 'http: header names an agent may send')
    .option('--timeout-ms <ms>', 'per tool call limit')
    .option('--log-level <level>', "the least severe server log message kept in the agent's log (default warning)")
    .option('--expose-work-folder', "npm and command: offer the calling agent's work folder as the server's root")
    .option('--sandbox', "npm and command: run the server in the calling agent's command sandbox (no network)")
    .option('--oauth', 'http: the server needs an OAuth sign-in (agt mcp login <name>)')
    .option('--oauth-client-id <id>', 'http: a client id registered with the authorization server beforehand')
    .option('--oauth-client-secret-env <DAEMON_VAR>', "http: the daemon's variable holding that client's secret")
    .option('--oauth-scopes <scopes>', 'http: scopes to ask for when the server names none')
    .option('--oauth-per-agent', 'http: each agent signs in with its own account (agt mcp login <name> --agent <id>)')
    .action(run(async (ctx, name: string, options: Record<string, unknown>) => (await mcp()).add(ctx, name, options)));
  group
    .command('remove <name>')
    .alias('rm')
    .description('remove an MCP server registration')
    .action(run(async (ctx, name: string) => (await mcp()).remove(ctx, name)));
  group
    .command('restart <agent> <server>')
    .description("reconnect one of an agent's MCP servers now (also starts a newly declared one)")
    .action(run(async (ctx, agent: string, server: string) => (await mcp()).restart(ctx, agent, server)));
  group
    .command('tools <agent> [server]')
    .description("an agent's MCP tools (of one server), with their state")
    .action(run(async (ctx, agent: string, server: string | undefined) => (await mcp()).tools(ctx, agent, server)));
  group
    .command('enable-tool <agent> <server> <tool>')
    .description('re-enable an MCP tool whose input schema changed (accepts the new schema)')
    .action(
      run(async (ctx, agent: string, server: string, tool: string) =>
        (await mcp()).enableTool(ctx, agent, server, tool),
      ),
    );
  group
    .command('review <server>')
    .description(
      'the tool definitions of a server that changed since you approved them (description, input schema), as a diff; approve them (asked, or --yes)',
    )
    .option('--yes', 'approve without asking')
    .option('--tool <tool...>', 'only these tools')
    .action(
      run(async (ctx, server: string, options: { yes?: boolean; tool?: string[] }) =>
        (await import('../commands/mcp-review.js')).review(ctx, server, options),
      ),
    );
  group
    .command('login <server>')
    .description(
      'sign in to an OAuth-protected MCP server (registered with oauth): prints the authorization URL, waits for the browser',
    )
    .option('--open', 'open the URL in the default browser too')
    .option('--no-wait', 'print the URL and return at once')
    .option('--agent <agent>', 'a per-agent registration (oauth.signIn per-agent): sign in this agent’s own account')
    .action(
      run(async (ctx, server: string, options: { open?: boolean; wait?: boolean; agent?: string }) =>
        (await import('../commands/mcp-login.js')).login(ctx, server, options),
      ),
    );
  group
    .command('logout <server>')
    .description('sign out of an OAuth-protected MCP server (its tokens are dropped)')
    .option('--agent <agent>', 'a per-agent registration: sign out this agent’s account')
    .action(
      run(async (ctx, server: string, options: { agent?: string }) =>
        (await import('../commands/mcp-login.js')).logout(ctx, server, options),
      ),
    );
  group
    .command('serve')
    .description(
      "agt as an MCP server on stdio: a bridge to the daemon's /mcp/server for MCP clients that spawn a process (docs/mcp.md)",
    )
    .action(run(async (ctx) => (await import('../commands/mcp-serve.js')).serve(ctx)));
  return group;
}
