/** `agt mcp …`: registrations and packages (`/mcp`), an agent's servers (`/agents/{id}/mcp`) and MCP tools. */
import { seg } from '../client.js';
import type { Ctx } from '../context.js';
import { CliError, EXIT } from '../errors.js';
import { ago } from '../output.js';
import { integer, pairs } from './args.js';

export interface ServerView {
  name: string;
  agentId?: string;
  transport: string;
  status: string;
  toolCount: number;
  error?: string;
  connectedAt?: number;
  restartCount: number;
  logs: string[];
}

/** `GET /agents/{id}/mcp`. */
export interface AgentServers {
  agentId: string;
  servers: ServerView[];
}

/** `GET /mcp`, the fields read here (a registration is printed by its name, type and command). */
export interface McpOverview {
  registrations: Array<Record<string, any>>;
  servers: ServerView[];
}

/** `GET /mcp/packages`. */
export interface PackageList {
  dir: string;
  packages: Array<{ name: string; version: string | null; bin: string | null }>;
  operations: Array<{ spec: string; action: string; status: string; error?: string }>;
}

function printServers(ctx: Ctx, servers: ServerView[], withAgent: boolean): void {
  const { out } = ctx;
  if (servers.length === 0) return out.line(out.dim('no open servers'));
  out.table(
    [...(withAgent ? ['AGENT'] : []), 'SERVER', 'STATUS', 'TOOLS', 'UP', 'RESTARTS', 'ERROR'],
    servers.map((s) => [
      ...(withAgent ? [s.agentId ?? '-'] : []),
      out.bold(s.name),
      s.status === 'connected' ? out.green(s.status) : s.status === 'error' ? out.red(s.status) : s.status,
      String(s.toolCount),
      s.connectedAt ? ago(Date.now() - s.connectedAt) : '-',
      String(s.restartCount),
      s.error ?? '',
    ]),
  );
}

export async function list(ctx: Ctx, options: { agent?: string }): Promise<void> {
  const { client, out } = ctx;
  if (options.agent) {
    const answer = await client.get<AgentServers>(`/agents/${seg(options.agent)}/mcp`);
    return out.result(answer, () => {
      printServers(ctx, answer.servers, false);
      for (const s of answer.servers.filter((s) => s.logs.length)) {
        out.line();
        out.line(out.dim(`${s.name}:`));
        for (const line of s.logs.slice(-10)) out.line(`  ${line}`);
      }
    });
  }
  const answer = await client.get<McpOverview>('/mcp');
  out.result(answer, () => {
    if (answer.registrations.length === 0) out.line(out.dim('no registrations (agt mcp add)'));
    else {
      out.table(
        ['NAME', 'TYPE', 'RUNS'],
        answer.registrations.map((r) => [
          out.bold(r.name),
          r.type,
          r.url ?? [r.npmPackage ?? r.command, ...(r.args ?? [])].join(' '),
        ]),
      );
    }
    out.line();
    printServers(ctx, answer.servers, true);
  });
}

export async function install(ctx: Ctx, spec: string): Promise<number | void> {
  const answer = await ctx.client.post('/mcp/packages', { package: spec });
  ctx.out.result(answer, () => {
    if (answer.package)
      ctx.out.line(
        `installed ${ctx.out.bold(answer.package.name)}${answer.package.version ? `@${answer.package.version}` : ''}`,
      );
    else ctx.out.line(`installing ${spec}: npm is still running (agt mcp packages shows how it ended)`);
  });
}

export async function packages(ctx: Ctx): Promise<void> {
  const answer = await ctx.client.get<PackageList>('/mcp/packages');
  ctx.out.result(answer, () => {
    const { out } = ctx;
    out.line(out.dim(`in ${answer.dir}`));
    if (answer.packages.length === 0) out.line(out.dim('no packages (agt mcp install <package>)'));
    else
      out.table(
        ['PACKAGE', 'VERSION', 'BIN'],
        answer.packages.map((p) => [out.bold(p.name), p.version ?? '-', p.bin ?? '-']),
      );
    const running = answer.operations.filter((o) => o.status !== 'done');
    for (const o of running)
      out.line(`${o.action} ${o.spec}: ${o.status === 'failed' ? out.red(`failed: ${o.error ?? ''}`) : o.status}`);
  });
}

export async function uninstall(ctx: Ctx, spec: string): Promise<void> {
  const answer = await ctx.client.request('DELETE', `/mcp/packages?package=${encodeURIComponent(spec)}`);
  ctx.out.result(answer, () => ctx.out.line(`uninstalled ${spec}`));
}

export async function add(ctx: Ctx, name: string, options: Record<string, any>): Promise<void> {
  const kinds = (['npm', 'command', 'http'] as const).filter((k) => options[k] !== undefined);
  if (kinds.length !== 1)
    throw new CliError('agt mcp add takes exactly one of --npm <package>, --command <path>, --http <url>', EXIT.usage);
  const type = kinds[0]!;
  const body: Record<string, unknown> = { name, type };
  if (type === 'npm') body.npmPackage = options.npm;
  if (type === 'command') body.command = options.command;
  if (type === 'http') body.url = options.http;
  if (options.arg) body.args = options.arg;
  const env = pairs(options.env, '--env');
  if (env) body.env = env;
  const envFrom = pairs(options.envFrom, '--env-from');
  if (envFrom) body.envFrom = envFrom;
  const headerEnv = pairs(options.headerEnv, '--header-env');
  if (headerEnv) body.headerEnv = headerEnv;
  if (options.allowAgentEnv) body.allowAgentEnv = options.allowAgentEnv;
  if (options.allowAgentHeaders) body.allowAgentHeaders = options.allowAgentHeaders;
  if (options.logLevel) body.logLevel = options.logLevel;
  if (options.exposeWorkFolder) body.exposeWorkFolder = true;
  if (options.sandbox) body.sandbox = true;
  if (options.oauth || options.oauthClientId || options.oauthScopes || options.oauthPerAgent) {
    body.oauth = {
      ...(options.oauthPerAgent ? { signIn: 'per-agent' } : {}),
      ...(options.oauthClientId ? { clientId: options.oauthClientId } : {}),
      ...(options.oauthClientSecretEnv ? { clientSecretEnv: options.oauthClientSecretEnv } : {}),
      ...(options.oauthScopes ? { scopes: options.oauthScopes } : {}),
    };
  }
  const timeout = integer(options.timeoutMs, '--timeout-ms');
  if (timeout !== undefined) body.toolCallTimeoutMs = timeout;
  const answer = await ctx.client.post('/mcp/servers', body);
  ctx.out.result(answer, () =>
    ctx.out.line(
      `registered ${ctx.out.bold(name)} (${type}); agents declaring it get it at their next load or with agt mcp restart <agent> ${name}`,
    ),
  );
}

export async function remove(ctx: Ctx, name: string): Promise<void> {
  const answer = await ctx.client.request('DELETE', `/mcp/servers/${seg(name)}`);
  ctx.out.result(answer, () => ctx.out.line(`removed the registration ${name}`));
}

export async function restart(ctx: Ctx, agent: string, server: string): Promise<number | void> {
  const answer = await ctx.client.post<ServerView>(`/agents/${seg(agent)}/mcp/${seg(server)}/restart`);
  ctx.out.result(answer, () => printServers(ctx, [answer], false));
  // A restart that ends in error is a failed operation for scripts.
  return answer.status === 'error' ? EXIT.failed : undefined;
}

export async function tools(ctx: Ctx, agent: string, server: string | undefined): Promise<void> {
  const answer = await ctx.client.get<{
    agentId: string;
    tools: Array<{
      name: string;
      enabled: boolean;
      restricted: boolean;
      source: string;
      description: string;
      disabledReason?: string;
    }>;
  }>(`/agents/${seg(agent)}/tools`);
  const mcpTools = answer.tools.filter((t) => (server ? t.source === `mcp:${server}` : t.source.startsWith('mcp:')));
  ctx.out.result({ agentId: answer.agentId, tools: mcpTools }, () => {
    const { out } = ctx;
    if (mcpTools.length === 0) return out.line(out.dim(`no MCP tools${server ? ` from ${server}` : ''}`));
    out.table(
      ['TOOL', 'SERVER', 'ENABLED', 'RESTRICTED', 'DESCRIPTION'],
      mcpTools.map((t) => [
        out.bold(t.name),
        t.source.slice(4),
        t.enabled ? 'yes' : out.yellow(`no${t.disabledReason ? ` (${t.disabledReason})` : ''}`),
        t.restricted ? 'yes' : 'no',
        (t.description ?? '').split('\n')[0]!.slice(0, 60),
      ]),
    );
  });
}

export async function enableTool(ctx: Ctx, agent: string, server: string, tool: string): Promise<void> {
  const answer = await ctx.client.post(`/agents/${seg(agent)}/mcp/${seg(server)}/tools/${seg(tool)}/enable`);
  ctx.out.result(answer, () => ctx.out.line(`enabled ${tool} of ${server} for ${agent}`));
}
