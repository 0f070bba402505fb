/**
 * MCP sessions of agt's MCP server (loaded on the first request to `/mcp/server`, so a daemon nobody
 * calls never loads the SDK's server half). Session-based Streamable HTTP, not stateless: a `chat` that
 * waits on an approval asks the client by elicitation, a server-to-client request whose answer comes
 * back in a later POST; only a transport that lives across requests (keyed by `Mcp-Session-Id`) can
 * route that answer to the waiting call. Sessions are bounded in number and end after an idle time.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { EventBus } from '@agt/contracts';
import type { AgentTurnsAccess } from '@agt/contracts';
import type { AgentsService, SettingsService } from '@agt/contracts';
import { SessionEventStore } from './event-store.js';
import { Exposed } from './exposed.js';
import { registerResources } from './resources.js';
import { registerTools } from './tools.js';

export interface SessionDeps {
  agents: AgentsService;
  turns: AgentTurnsAccess;
  bus: EventBus;
  settings: SettingsService;
  version: string;
  maxSessions: number;
  idleMs: number;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  server: McpServer;
  lastUsed: number;
}

const INSTRUCTIONS =
  "agt agents. list_agents names them; chat sends one a message and returns its reply (an approval or question it waits on is asked by elicitation, or returned with how to answer it through answer_task); get_tasks lists what waits. Resources: each agent's card, recent conversation and files.";

/** A JSON-RPC error answer (what MCP clients read on this endpoint). */
function rpcError(res: ServerResponse, status: number, message: string): void {
  res
    .writeHead(status, { 'content-type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

export class McpSessions {
  private readonly sessions = new Map<string, Session>();
  private readonly exposed: Exposed;
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly deps: SessionDeps) {
    this.exposed = new Exposed(deps.settings, deps.agents);
    this.sweeper = setInterval(() => this.sweep(), Math.min(60_000, deps.idleMs)).unref();
  }

  /** One HTTP request to `/mcp/server` (the kernel's guards and bearer check already passed). */
  async handle(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const header = req.headers['mcp-session-id'];
    const id = Array.isArray(header) ? header[0] : header;
    if (id !== undefined) {
      const session = this.sessions.get(id);
      // 404 tells the client to start a new session (the MCP specification's answer for an unknown session).
      if (!session) return rpcError(res, 404, 'Session not found');
      session.lastUsed = Date.now();
      return session.transport.handleRequest(req, res, body);
    }
    if (req.method !== 'POST' || !isInitializeRequest(body))
      return rpcError(res, 400, 'No Mcp-Session-Id: initialize first');
    if (this.sessions.size >= this.deps.maxSessions) this.sweep(true);
    if (this.sessions.size >= this.deps.maxSessions) return rpcError(res, 503, 'Too many MCP sessions');
    const server = new McpServer(
      { name: 'agt', version: this.deps.version },
      { capabilities: { tools: {}, resources: {}, logging: {} }, instructions: INSTRUCTIONS },
    );
    registerTools(server, { exposed: this.exposed, turns: this.deps.turns, bus: this.deps.bus });
    registerResources(server, { exposed: this.exposed, agents: this.deps.agents, turns: this.deps.turns });
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      // A dropped stream resumes with Last-Event-ID (event-store.ts); clients reconnect after 1 s.
      eventStore: new SessionEventStore(),
      retryInterval: 1000,
      onsessioninitialized: (sessionId) =>
        void this.sessions.set(sessionId, { transport, server, lastUsed: Date.now() }),
      onsessionclosed: (sessionId) => void this.sessions.delete(sessionId),
    });
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  /** Ends idle sessions (all but the newest when `hard`, to make room). */
  private sweep(hard = false): void {
    const now = Date.now();
    const byAge = [...this.sessions.entries()].sort((a, b) => a[1].lastUsed - b[1].lastUsed);
    for (const [id, session] of byAge) {
      const idle = now - session.lastUsed > this.deps.idleMs;
      if (!idle && !(hard && this.sessions.size >= this.deps.maxSessions)) continue;
      this.sessions.delete(id);
      void session.server.close().catch(() => {});
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(all.map((session) => session.server.close().catch(() => {})));
  }
}
