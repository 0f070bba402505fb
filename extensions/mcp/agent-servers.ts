/**
 * The declared MCP servers of every loaded agent: connected when the agent loads (all in parallel; the
 * agent's first turn waits for them at most `startBudgetMs`, slower ones join later), closed when it
 * unloads or the extension stops (every child killed). Offers their tools to the kernel as
 * `mcp_<server>_<tool>` with `source: "mcp:<server>"`.
 */
import type { McpServerConfig } from '@agt/contracts';
import type { ExtensionEnv } from '@agt/contracts';
import type { Logger } from '@agt/contracts';
import type { AgentView, AgentsService, SettingsService } from '@agt/contracts';
import type { ToolContributor, ToolDefinition } from '@agt/contracts';
import type { Tool } from '@modelcontextprotocol/client';
import { agentNotLoaded, serverNotDeclared, toolNotFound } from './errors.js';
import { resolveLaunch } from './launch.js';
import { serverNotificationHooks } from './notification-hooks.js';
import { resourceAndPromptTools } from './resource-tools.js';
import type { McpOptions } from './options.js';
import type { OAuthSignIn } from './oauth-signin.js';
import { ServerConnection } from './server-connection.js';
import { toToolResult } from './tool-results.js';
import type { PinChange, ToolPins } from './tool-pins.js';
import type { ToolStateStore, ToolVerdict } from './tool-state.js';
import type { ElicitationEvent } from './url-elicitation.js';

export interface ManagerDeps {
  options: McpOptions;
  logger: Logger;
  settings: SettingsService;
  env: ExtensionEnv;
  agents: AgentsService;
  packagesDir: string;
  toolState: ToolStateStore;
  /** The definitions the owner approved, per server (tool-pins.ts). */
  pins: ToolPins;
  /** A listing changed a pinned definition (announced as `mcp.tool.changed`). */
  toolChanged(agentId: string, server: string, change: PinChange): void;
  /** Announces an agent's waits for URL-mode elicitations (`mcp.elicitation.*`). */
  elicitationEvent?(agentId: string, ...event: Parameters<ElicitationEvent>): void;
  signIn?: OAuthSignIn;
}

interface AgentServers {
  connections: Map<string, ServerConnection>;
  verdicts: Map<string, Map<string, ToolVerdict>>;
  /** Settles when every first connect has settled. */
  ready: Promise<void>;
  openedAt: number;
}

/** Model-facing tool name: `mcp_<server>_<tool>`, limited to what every provider accepts. */
export function modelToolName(server: string, tool: string): string {
  return `mcp_${server}_${tool}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
}

export interface ServerView {
  name: string;
  transport: 'stdio' | 'http';
  status: ServerConnection['status'];
  toolCount: number;
  error?: string;
  connectedAt?: number;
  protocolVersion?: string;
  restartCount: number;
  logs: string[];
  pid?: number;
}

export class McpManager {
  private readonly agents = new Map<string, AgentServers>();
  private stopping = false;

  constructor(private readonly deps: ManagerDeps) {}

  /** Lifecycle `loaded`: starts connecting the agent's declared servers; does not wait for them. */
  open(agent: AgentView): void {
    if (this.stopping || this.agents.has(agent.id)) return;
    const entry: AgentServers = {
      connections: new Map(),
      verdicts: new Map(),
      ready: Promise.resolve(),
      openedAt: Date.now(),
    };
    this.agents.set(agent.id, entry);
    const seen = new Set<string>();
    for (const declaration of agent.config.mcp?.servers ?? []) {
      if (seen.has(declaration.name)) continue;
      seen.add(declaration.name);
      entry.connections.set(declaration.name, this.connection(agent.id, declaration, entry));
    }
    entry.ready = Promise.all([...entry.connections.values()].map((c) => c.connect())).then(() => {});
  }

  /** Lifecycle `unloaded`: closes every server of the agent (children killed). */
  async close(agentId: string): Promise<void> {
    const entry = this.agents.get(agentId);
    if (!entry) return;
    this.agents.delete(agentId);
    this.deps.toolState.forget(agentId);
    await Promise.all([...entry.connections.values()].map((c) => c.close()));
  }

  /** Extension stop: closes every agent's servers. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all([...this.agents.keys()].map((id) => this.close(id)));
  }

  contributor(): ToolContributor {
    return { toolsFor: (agentId) => this.toolsFor(agentId) };
  }

  async toolsFor(agentId: string): Promise<ToolDefinition[]> {
    // A turn resumed at load (after a restart) can ask before the `loaded` hook opened the servers:
    // open them now, so it waits for them like any first turn.
    if (!this.agents.has(agentId) && !this.stopping) {
      const agent = this.deps.agents.find(agentId);
      if (agent?.id === agentId && agent.config.mcp?.servers.length) this.open(agent);
    }
    const entry = this.agents.get(agentId);
    if (!entry) return [];
    const left = this.deps.options.startBudgetMs - (Date.now() - entry.openedAt);
    if (left > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([entry.ready, new Promise<void>((done) => (timer = setTimeout(done, left)))]);
      clearTimeout(timer);
    }
    // The agent's config may have changed since its servers started: a server no longer declared is
    // closed and offers nothing; the flags of one still declared (restricted, limits) are read afresh.
    const declared = new Map((this.deps.agents.find(agentId)?.config.mcp?.servers ?? []).map((s) => [s.name, s]));
    for (const [name, connection] of entry.connections) {
      if (declared.has(name)) continue;
      entry.connections.delete(name);
      void connection.close();
    }
    const out: ToolDefinition[] = [];
    const names = new Set<string>();
    for (const connection of entry.connections.values()) {
      if (!connection.tools || connection.status === 'stopped' || connection.status === 'skipped') continue;
      const verdicts = entry.verdicts.get(connection.name) ?? new Map<string, ToolVerdict>();
      for (const tool of connection.tools) {
        const name = modelToolName(connection.name, tool.name);
        if (names.has(name)) {
          this.deps.logger.warn(
            { agentId, server: connection.name, tool: tool.name },
            `mcp tool ${tool.name} skipped: its name ${name} is taken`,
          );
          continue;
        }
        names.add(name);
        out.push(
          this.definition(agentId, connection, declared.get(connection.name)!, tool, name, verdicts.get(tool.name)),
        );
      }
      // The server's resources and prompts, as tools (after its own: a server tool of the same name wins).
      const declaration = declared.get(connection.name)!;
      for (const extra of resourceAndPromptTools(connection, {
        name: (suffix) => modelToolName(connection.name, suffix),
        restricted: declaration.restricted === true,
        timeoutMs:
          declaration.tool_call_timeout_ms ?? connection.timeoutMs ?? this.deps.options.defaultToolCallTimeoutMs,
      })) {
        if (names.has(extra.name)) continue;
        names.add(extra.name);
        out.push(extra);
      }
    }
    return out;
  }

  private definition(
    agentId: string,
    connection: ServerConnection,
    declaration: McpServerConfig,
    tool: Tool,
    name: string,
    verdict: ToolVerdict | undefined,
  ): ToolDefinition {
    const timeoutMs =
      declaration.tool_call_timeout_ms ?? connection.timeoutMs ?? this.deps.options.defaultToolCallTimeoutMs;
    const restricted =
      declaration.restricted === true || (declaration.new_tools_restricted === true && verdict?.isNew === true);
    const pinChange = this.deps.pins.changedFields(connection.name, tool.name);
    const disabledReason = pinChange
      ? `the ${pinChange.map((f) => (f === 'inputSchema' ? 'input schema' : f)).join(' and ')} of ${tool.name} changed since the owner approved MCP server ${connection.name}; agt mcp review ${connection.name} shows the change and approves it`
      : verdict?.changed
        ? `the input schema of ${tool.name} changed since it was accepted; re-enable it with POST /agents/${agentId}/mcp/${connection.name}/tools/${tool.name}/enable`
        : undefined;
    return {
      name,
      description: tool.description ?? tool.title ?? `${tool.name} (MCP server ${connection.name})`,
      inputSchema: (tool.inputSchema as Record<string, unknown>) ?? { type: 'object' },
      source: `mcp:${connection.name}`,
      restricted,
      notable: true,
      timeoutMs,
      ...(disabledReason ? { disabledReason } : {}),
      run: async (args, context) =>
        toToolResult(
          await connection.call(tool.name, args, {
            signal: context.signal,
            timeoutMs,
            progress: context.progress,
            trace: context.trace,
            ask: context.ask,
            sample: context.sample,
            ...(context.callId ? { callId: context.callId } : {}),
          }),
        ),
    };
  }

  private connection(agentId: string, declaration: McpServerConfig, entry: AgentServers): ServerConnection {
    const registration = () => (this.deps.settings.current().mcpServers ?? []).find((r) => r.name === declaration.name);
    const connection: ServerConnection = new ServerConnection(agentId, declaration, {
      options: this.deps.options,
      logger: this.deps.logger,
      resolve: () =>
        resolveLaunch(
          declaration,
          (this.deps.settings.current().mcpServers ?? []).find((r) => r.name === declaration.name),
          {
            env: this.deps.env,
            packagesDir: this.deps.packagesDir,
            credential: (name) => this.deps.agents.readCredential(agentId, name),
          },
        ),
      ...(this.deps.signIn ? { signIn: this.deps.signIn } : {}),
      samplingPolicy: () =>
        (this.deps.settings.current().mcpServers ?? []).find((r) => r.name === declaration.name)?.sampling ?? 'ask',
      agentLog: (level, message) => this.deps.agents.log(agentId, level, message, { server: declaration.name }),
      notifications: serverNotificationHooks(agentId, declaration, this.deps.agents, registration),
      ...(this.deps.agents.spawnSandboxed
        ? { spawnSandboxed: (spawn) => this.deps.agents.spawnSandboxed!(agentId, spawn) }
        : {}),
      elicitationEvent: (type, payload) => this.deps.elicitationEvent?.(agentId, type, payload),
      toolsChanged: () => {
        const tools = connection.tools ?? [];
        for (const change of this.deps.pins.observe(declaration.name, tools)) {
          this.deps.agents.log(
            agentId,
            'warn',
            `MCP tool ${change.tool} of ${declaration.name} is disabled: its ${change.changed.join(' and ')} changed since the owner approved the server (agt mcp review ${declaration.name})`,
            { server: declaration.name },
          );
          this.deps.toolChanged(agentId, declaration.name, change);
        }
        const verdicts = this.deps.toolState.observe(
          agentId,
          declaration.name,
          tools.map((t) => ({ name: t.name, inputSchema: t.inputSchema })),
        );
        // A schema the owner approved in a review is accepted for this agent too.
        for (const [tool, verdict] of verdicts)
          if (verdict.changed && this.deps.pins.reviewedAndCurrent(declaration.name, tool)) {
            this.deps.toolState.enable(agentId, declaration.name, tool);
            verdict.changed = false;
          }
        entry.verdicts.set(declaration.name, verdicts);
      },
    });
    return connection;
  }

  private entryOf(agentId: string): AgentServers {
    const entry = this.agents.get(agentId);
    if (!entry) throw agentNotLoaded(agentId);
    return entry;
  }

  /** Every declared server of a loaded agent (an agent loaded before this extension started has none open). */
  servers(agent: AgentView): ServerView[] {
    const entry = this.agents.get(agent.id);
    return (agent.config.mcp?.servers ?? []).map((declaration) => {
      const connection = entry?.connections.get(declaration.name);
      return connection
        ? view(connection)
        : {
            name: declaration.name,
            transport: declaration.transport,
            status: 'stopped' as const,
            toolCount: 0,
            restartCount: 0,
            logs: [],
          };
    });
  }

  /** All open servers of all agents (for `GET /mcp`). */
  allServers(): Array<ServerView & { agentId: string }> {
    return [...this.agents.entries()].flatMap(([agentId, entry]) =>
      [...entry.connections.values()].map((c) => ({ agentId, ...view(c) })),
    );
  }

  /** Reconnects at once, with the agent's current declaration (a newly declared server starts here). */
  async restart(agent: AgentView, name: string): Promise<ServerView> {
    const declaration = agent.config.mcp?.servers.find((s) => s.name === name);
    if (!declaration) throw serverNotDeclared(agent.id, name);
    let entry = this.agents.get(agent.id);
    if (!entry) {
      this.open({ ...agent, config: { ...agent.config, mcp: { servers: [] } } });
      entry = this.entryOf(agent.id);
    }
    const existing = entry.connections.get(name);
    if (existing && JSON.stringify(existing.declaration) === JSON.stringify(declaration)) {
      await existing.restart();
      return view(existing);
    }
    await existing?.close();
    const fresh = this.connection(agent.id, declaration, entry);
    fresh.restartCount = (existing?.restartCount ?? 0) + (existing ? 1 : 0);
    entry.connections.set(name, fresh);
    await fresh.connect();
    return view(fresh);
  }

  /** A registration's sign-in changed: the open connections to that server (of one agent) reconnect with it. */
  reconnectServer(name: string, agentId?: string): void {
    for (const [id, entry] of this.agents)
      if (agentId === undefined || id === agentId) void entry.connections.get(name)?.restart();
  }

  /**
   * Accepts a tool's changed schema (and its changed pinned definition: the owner approves it here as in
   * a review): it is enabled again at the next tool listing.
   */
  enableTool(agent: AgentView, server: string, tool: string): void {
    const entry = this.entryOf(agent.id);
    if (!agent.config.mcp?.servers.some((s) => s.name === server)) throw serverNotDeclared(agent.id, server);
    const accepted = this.deps.toolState.enable(agent.id, server, tool);
    const approved = this.deps.pins.approve(server, [tool]).length > 0;
    if (!accepted && !approved) throw toolNotFound(server, tool);
    const verdict = entry.verdicts.get(server)?.get(tool);
    if (verdict) verdict.changed = false;
    if (approved) this.acceptReviewed(server, [tool]);
  }

  /** The owner approved changed definitions of `server`: every loaded agent accepts their schemas now. */
  acceptReviewed(server: string, tools: string[]): void {
    for (const [agentId, entry] of this.agents)
      for (const tool of tools) {
        this.deps.toolState.enable(agentId, server, tool);
        const verdict = entry.verdicts.get(server)?.get(tool);
        if (verdict) verdict.changed = false;
      }
  }
}

function view(connection: ServerConnection): ServerView {
  return {
    name: connection.name,
    transport: connection.transport,
    status: connection.status,
    toolCount: connection.tools?.length ?? 0,
    ...(connection.error ? { error: connection.error } : {}),
    ...(connection.connectedAt && connection.status === 'connected' ? { connectedAt: connection.connectedAt } : {}),
    ...(connection.protocolVersion && connection.status === 'connected'
      ? { protocolVersion: connection.protocolVersion }
      : {}),
    restartCount: connection.restartCount,
    logs: connection.logs.recent(),
    ...(connection.pid ? { pid: connection.pid } : {}),
  };
}
