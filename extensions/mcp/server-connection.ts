/**
 * One declared MCP server of one agent: its client (the official SDK), its child or HTTP session, its
 * status and recent log lines, and its failure rules (docs/mcp.md). Connecting has a time limit; a server that
 * exits, closes, writes garbage or leaves a call unanswered past its limit fails that call with a clear
 * error and is reconnected with backoff (`reconnectTries`, doubling from `reconnectBaseMs`), after which
 * it stays in `error` until `POST /agents/{id}/mcp/{name}/restart`. An interrupted or aborted call is
 * cancelled on the server (the SDK sends `notifications/cancelled` when the call's signal aborts). What the
 * server sends on its own (resource updates, its log, roots requests) is server-notifications.ts's; each
 * request of a traced call carries the trace context (request-meta.ts).
 */
import type {
  CallToolResult,
  Client,
  RequestOptions,
  ServerCapabilities,
  Tool,
  Transport,
} from '@modelcontextprotocol/client';
import type { McpRegistration, McpServerConfig } from '@agt/contracts';
import { isAgtError } from '@agt/contracts';
import type { Logger, ToolContext } from '@agt/contracts';
import { callFailed } from './errors.js';
import type { Launch } from './launch.js';
import type { McpOAuthProvider } from './oauth-provider.js';
import type { OAuthSignIn } from './oauth-signin.js';
import { LogRing } from './log-ring.js';
import { type RequestMeta, requestMeta } from './request-meta.js';
import { afterConnect, listenTo, type NotificationHooks } from './server-notifications.js';
import { sampleFor } from './sampling.js';
import { ELICITATION_TRIES, elicitFor, type InFlight, type RequestScope } from './server-requests.js';
import type { McpOptions } from './options.js';
import { loadSdk } from './sdk.js';
import { stepUpFetch } from './step-up.js';
import type { SandboxSpawner } from './stdio-transport.js';
import { type ElicitationEvent, UrlElicitations } from './url-elicitation.js';
import { settleUrlRequired } from './url-required.js';

export type ServerStatus = 'stopped' | 'connecting' | 'connected' | 'error' | 'skipped';

export interface CallOptions {
  signal: AbortSignal;
  timeoutMs: number;
  /** `ToolContext.progress`: restarts the kernel's limit and announces `tool.progress`. */
  progress?: ToolContext['progress'];
  /** `ToolContext.trace`: the call's trace context, carried in the request's `params._meta`. */
  trace?: ToolContext['trace'];
  /** The kernel's ask of the calling turn (`ToolContext.ask`): where the server's elicitations go. */
  ask?: ToolContext['ask'];
  /** The calling agent's model (`ToolContext.sample`): where the server's sampling requests go. */
  sample?: ToolContext['sample'];
  /** The model's id of the call (`ToolContext.callId`), named in the events about it. */
  callId?: string;
}

/** A tool call under way: an elicitation or sampling request that arrives meanwhile belongs to its turn. */
export interface ConnectionDeps {
  options: McpOptions;
  logger: Logger;
  /** How to run the server now (registrations and credentials are read at each connect). */
  resolve(): Promise<Launch>;
  /** The tool list changed (connected, reconnected, `tools/list_changed`). */
  toolsChanged(): void;
  /** A row in the agent's own log (`agt_logs`): connects, skips, failures. Never secrets. */
  agentLog(level: 'info' | 'warn', message: string): void;
  /** The registration's `sampling` policy now (default `ask`). */
  samplingPolicy?: () => 'deny' | 'ask' | 'allow';
  /** OAuth sign-in of registrations that have `oauth` (absent: such a server is skipped). */
  signIn?: OAuthSignIn;
  /** Subscriptions, the server's log, roots (server-notifications.ts); absent: none of them. */
  notifications?: NotificationHooks;
  /** Starts a registration's `sandbox` server in the agent's command sandbox; absent: such a server fails to start. */
  spawnSandboxed?: SandboxSpawner;
  /** Announces the waits for URL-mode elicitations (`mcp.elicitation.*`); absent: not announced. */
  elicitationEvent?: ElicitationEvent;
}

const CLIENT_INFO = { name: 'agt', version: '1.0.0' };
/** The `_meta` key of a 2026-07-28 request naming the least severe server log message wanted. */
const LOG_LEVEL_META_KEY = 'io.modelcontextprotocol/logLevel';
/** How a connect attempt chooses the protocol revision: negotiated (2026 if both know it), or 2025 only. */
type Era = 'auto' | 'legacy';
/** `tryTransport`'s answer when the revision could not be negotiated (the connection is gone). */
const NEGOTIATION_FAILED = 'negotiation failed';

export class ServerConnection {
  status: ServerStatus = 'stopped';
  error: string | undefined;
  connectedAt: number | undefined;
  restartCount = 0;
  transport: 'stdio' | 'http' = 'stdio';
  /** The last tool list the server gave (kept across reconnects so the model's tool list stays stable). */
  tools: Tool[] | undefined;
  /** What the server said it offers when it connected (resources, prompts, ...). */
  capabilities: ServerCapabilities | undefined;
  /** The protocol revision agreed with the server (`2026-07-28`, `2025-11-25`, ...) while connected. */
  protocolVersion: string | undefined;
  /** The declared per-call limit (declaration, else registration), once resolved. */
  timeoutMs: number | undefined;
  readonly logs: LogRing;
  /** URL-mode elicitations the server started and their completion notifications. */
  private readonly urls: UrlElicitations;
  private client: Client | undefined;
  private current: Transport | undefined;
  private connecting: Promise<void> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private tries = 0;
  private closed = false;
  /** A restart dropped the connect under way: its failure is not a reason to schedule a reconnect. */
  private abandoning = false;
  private lastFailure: string | undefined;
  private readonly inFlight: InFlight[] = [];
  /** The registration when the server is signed in to by OAuth. */
  private oauth: (McpRegistration & { url: string }) | undefined;

  constructor(
    readonly agentId: string,
    readonly declaration: McpServerConfig,
    private readonly deps: ConnectionDeps,
  ) {
    this.logs = new LogRing(deps.options.logLines);
    this.urls = new UrlElicitations(
      declaration.name,
      this.logs,
      deps.options.elicitationTimeoutMs,
      deps.elicitationEvent,
    );
    this.transport = declaration.transport;
  }

  get name(): string {
    return this.declaration.name;
  }

  /** The stdio child's pid while it runs. */
  get pid(): number | undefined {
    return (this.current as { pid?: number } | undefined)?.pid;
  }

  /** Connects (or joins the connect under way); never throws: failures end in `error` or `skipped`. */
  connect(): Promise<void> {
    if (this.closed) return Promise.resolve();
    // Whatever goes wrong while connecting ends in `error` (and a reconnect), never in a stuck `connecting`.
    this.connecting ??= this.connectOnce()
      .catch((error: unknown) =>
        this.failed(`could not connect: ${this.logs.scrub(String((error as Error)?.message ?? error)).slice(0, 300)}`),
      )
      .finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  /** The restart route: drops the current session and connects at once, with a fresh set of tries. */
  async restart(): Promise<void> {
    if (this.closed) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.tries = 0;
    // Dropping first makes a connect under way fail at once instead of running out its limit.
    this.abandoning = true;
    await this.drop();
    await this.connecting?.catch(() => {});
    this.abandoning = false;
    this.restartCount++;
    this.logs.note('restart requested');
    await this.connect();
  }

  /** Final: closes the session and kills the child (and its process group). */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    // Closing the session under way kills its child, so a pending connect settles at once.
    await this.drop();
    await this.connecting?.catch(() => {});
    await this.drop();
    this.urls.clear();
    this.status = 'stopped';
  }

  /**
   * `tools/call`. A server that first needs the owner in a browser (`URLElicitationRequiredError`) gets
   * its links asked and confirmed (url-required.ts), then the call once more.
   */
  async call(tool: string, args: Record<string, unknown>, options: CallOptions): Promise<CallToolResult> {
    const send = () =>
      this.request(tool, options, (client, request, meta) =>
        client.callTool({ name: tool, arguments: args, ...meta }, request),
      ) as Promise<CallToolResult>;
    const { UrlElicitationRequiredError } = await loadSdk();
    try {
      return await send();
    } catch (error) {
      if (!(error instanceof UrlElicitationRequiredError)) throw error;
      this.logs.note(`${tool} needs the owner to open ${error.elicitations.length} link(s) first`);
      await settleUrlRequired(
        this.name,
        { tool, callId: options.callId, progress: options.progress, ask: options.ask, signal: options.signal },
        error.elicitations,
        this.confirmingUrls(),
        this.deps.options.elicitationTimeoutMs,
      );
    }
    try {
      return await send();
    } catch (error) {
      if (!(error instanceof UrlElicitationRequiredError)) throw error;
      throw callFailed(
        this.name,
        tool,
        'the server still asks for a link to be opened after it confirmed the last one',
      );
    }
  }

  /**
   * One request of a tool call on the session (`tools/call`, and the resource and prompt requests the
   * agent's `resources_*` / `prompts_*` tools make), with the failure rules above. `tool` names it in errors.
   */
  async request<T>(
    tool: string,
    options: CallOptions,
    send: (client: Client, request: RequestOptions, meta: RequestMeta) => Promise<T>,
  ): Promise<T> {
    if (this.status === 'connecting') await this.connecting;
    const client = this.client;
    if (this.status !== 'connected' || !client) {
      const state = this.status === 'error' ? 'in error' : this.status;
      throw callFailed(this.name, tool, `the server is ${state}${this.error ? ` (${this.error})` : ''}`);
    }
    // A token about to expire is refreshed before the call rather than failing it.
    if (this.oauth) await this.deps.signIn?.refreshIfDue(this.oauth, this.agentId);
    const flight: InFlight = {
      tool,
      ask: options.ask,
      sample: options.sample,
      callId: options.callId,
      progress: options.progress,
    };
    this.inFlight.push(flight);
    try {
      const result = await send(
        client,
        {
          signal: options.signal,
          // The kernel's limit (restarted by progress, not counting the owner's answers to elicitations)
          // normally fires first; this one is the backstop, so it leaves room for those answers.
          timeout: options.timeoutMs + 1_000 + ELICITATION_TRIES * this.deps.options.elicitationTimeoutMs,
          resetTimeoutOnProgress: true,
          onprogress: ({ progress, total, message }) =>
            options.progress?.({
              progress,
              ...(total !== undefined ? { total } : {}),
              ...(message !== undefined ? { message } : {}),
            }),
        },
        this.withLogLevel(client, requestMeta(options.trace)),
      );
      this.tries = 0;
      return result;
    } catch (error) {
      if (options.signal.aborted) {
        const reason: unknown = options.signal.reason;
        // The kernel's time limit passed: the server ignored the call that long, so it is restarted.
        if (isAgtError(reason) && reason.code === 'timeout') this.recycle(`no answer to ${tool} within its time limit`);
        throw reason ?? error;
      }
      // The sign-in lacks scopes (step-up.ts): the session is fine, the owner signs in again.
      if (isAgtError(error) && error.code === 'mcp_signin_required') throw error;
      const { ProtocolError, SdkError, SdkErrorCode, UrlElicitationRequiredError } = await loadSdk();
      // The server needs the owner in a browser first: `call` asks and makes the call again.
      if (error instanceof UrlElicitationRequiredError) throw error;
      if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) {
        this.recycle(`no answer to ${tool} within ${options.timeoutMs} ms`);
        throw callFailed(this.name, tool, `no answer within ${options.timeoutMs} ms (the server is being restarted)`);
      }
      const why =
        error instanceof SdkError && error.code === SdkErrorCode.ConnectionClosed
          ? `the connection closed during the call${this.lastFailure ? `: ${this.lastFailure}` : ''}`
          : (error as Error).message;
      // An HTTP session does not close when its server goes away: a failure that is not the server's own
      // JSON-RPC answer (a refused connection, a broken stream) starts a fresh session.
      if (this.transport === 'http' && !(error instanceof ProtocolError))
        this.recycle(`the call failed: ${this.logs.scrub(why).slice(0, 200)}`);
      throw callFailed(this.name, tool, this.logs.scrub(why).slice(0, 500));
    } finally {
      this.inFlight.splice(this.inFlight.indexOf(flight), 1);
    }
  }

  /**
   * The URL elicitations whose completion the server announces: the 2026-07-28 revision has no
   * `notifications/elicitation/complete`, so there an accepted link is not waited for.
   */
  private confirmingUrls(): UrlElicitations | undefined {
    return this.client?.getProtocolEra() === 'modern' ? undefined : this.urls;
  }

  /**
   * On the 2026-07-28 revision a server logs only inside its answer to a request that names the least
   * severe level wanted: the registration's `logLevel`, as `logging/setLevel` says it once on 2025.
   */
  private withLogLevel(client: Client, meta: RequestMeta): RequestMeta {
    const hooks = this.deps.notifications;
    if (!hooks || client.getProtocolEra() !== 'modern') return meta;
    return { _meta: { ...meta._meta, [LOG_LEVEL_META_KEY]: hooks.logLevel() } };
  }

  private async connectOnce(): Promise<void> {
    this.status = 'connecting';
    this.error = undefined;
    let launch: Launch;
    try {
      launch = await this.deps.resolve();
    } catch (error) {
      return this.failed(`could not prepare the server: ${(error as Error).message}`);
    }
    if (launch.kind === 'skip') {
      this.status = 'skipped';
      this.error = launch.reason;
      this.logs.note(`skipped: ${launch.reason}`);
      this.deps.logger.info(
        { agentId: this.agentId, server: this.name },
        `mcp server ${this.name} skipped: ${launch.reason}`,
      );
      this.deps.agentLog('info', `MCP server ${this.name} skipped: ${launch.reason}`);
      return;
    }
    let authProvider: McpOAuthProvider | undefined;
    if (launch.kind === 'http' && launch.oauth) {
      const signIn = await this.deps.signIn?.connectProvider(launch.oauth, this.agentId, () =>
        this.logs.note(`the sign-in has expired: the owner signs in again with agt mcp login ${launch.oauth?.name}`),
      );
      if (!signIn || 'reason' in signIn) {
        const reason = signIn?.reason ?? 'OAuth sign-in is not available in this daemon';
        this.status = 'skipped';
        this.error = reason;
        this.logs.note(`skipped: ${reason}`);
        this.deps.agentLog('info', `MCP server ${this.name} skipped: ${reason}`);
        return;
      }
      authProvider = signIn.provider;
      launch.secrets.push(...signIn.secrets);
    }
    this.oauth = launch.kind === 'http' ? launch.oauth : undefined;
    this.transport = launch.kind;
    this.timeoutMs = launch.timeoutMs;
    this.logs.setSecrets(launch.secrets);
    for (const note of launch.notes) this.logs.note(note);
    const { ChildStdioTransport, SSEClientTransport, StreamableHTTPClientTransport } = await loadSdk();
    const registration = launch.kind === 'http' ? launch.oauth : undefined;
    const signIn = this.deps.signIn;
    // A 403 insufficient_scope fails the request with mcp_signin_required instead of a sign-in of the SDK's.
    const auth =
      authProvider && registration && signIn
        ? { authProvider, fetch: stepUpFetch((scope) => signIn.stepUp(registration, this.agentId, scope)) }
        : {};
    // Each attempt says how the protocol revision is chosen: `auto` asks `server/discover` first and falls
    // back to the 2025 `initialize` handshake when the server does not know it (docs/mcp.md "Protocol
    // revisions"); HTTP+SSE predates the 2026 revision, so it only ever speaks the 2025 handshake.
    const attempts: Array<{ make: () => Transport; era: Era }> =
      launch.kind === 'stdio'
        ? [
            {
              make: () =>
                new ChildStdioTransport(launch.stdio, (text) => this.logs.write(text), this.deps.spawnSandboxed),
              era: 'auto',
            },
          ]
        : [
            {
              make: () =>
                new StreamableHTTPClientTransport(launch.url, { requestInit: { headers: launch.headers }, ...auth }),
              era: 'auto',
            },
            // Older servers speak only HTTP+SSE: the SDK's client for it is the fallback.
            {
              make: () =>
                new SSEClientTransport(launch.url, {
                  ...auth,
                  requestInit: { headers: launch.headers },
                  eventSourceInit: {
                    fetch: (url, init) =>
                      fetch(url, {
                        ...init,
                        headers: { ...launch.headers, ...(init?.headers as Record<string, string>) },
                      }),
                  },
                }),
              era: 'legacy',
            },
          ];
    let failure = 'no transport';
    for (const { make, era } of attempts) {
      if (this.closed || this.abandoning) return;
      let outcome = await this.tryTransport(make(), era);
      // A server that ends the connection on the unknown `server/discover` (some SDKs do, before
      // `initialize`) is an older one: a fresh connection goes straight to the 2025 handshake.
      if (outcome === NEGOTIATION_FAILED && !this.closed && !this.abandoning) {
        this.logs.note('the protocol revision could not be negotiated: trying the 2025 handshake');
        outcome = await this.tryTransport(make(), 'legacy');
      }
      if (outcome === true) return;
      failure = outcome;
    }
    if (!this.abandoning) this.failed(failure);
  }

  /** True when connected; else why not (`NEGOTIATION_FAILED` when the revision could not be agreed). */
  private async tryTransport(transport: Transport, era: Era): Promise<true | string> {
    const sdk = await loadSdk();
    const { Client, SdkError, SdkErrorCode } = sdk;
    const hooks = this.deps.notifications;
    const root = hooks ? await this.rootFor(hooks) : undefined;
    const limit = this.deps.options.connectTimeoutMs;
    // Elicitation in both modes; the SDK fills in the defaults of fields the owner left out. Roots only
    // when the owner exposes the agent's work folder to this server. On the 2026 revision the server asks
    // for these inside its answer (an input-required result); the SDK answers through the same handlers
    // and repeats the request.
    const client = new Client(CLIENT_INFO, {
      capabilities: {
        elicitation: { form: { applyDefaults: true }, url: {} },
        // Tools in sampling are declared always; a request with tools is refused unless the registration's
        // sampling policy is `allow` (sampling.ts).
        sampling: { tools: {} },
        ...(root ? { roots: {} } : {}),
      },
      // A stdio server silent on `server/discover` is an older one; half the connect limit leaves the
      // other half for the 2025 handshake.
      ...(era === 'auto' ? { versionNegotiation: { mode: 'auto', probe: { timeoutMs: Math.ceil(limit / 2) } } } : {}),
    });
    const listening = hooks ? listenTo(client, this.name, hooks, this.logs, root) : undefined;
    const scope = (): RequestScope => ({
      server: this.name,
      flight: this.inFlight.at(-1),
      logs: this.logs,
      ...(this.confirmingUrls() ? { urls: this.urls } : {}),
    });
    client.setRequestHandler('elicitation/create', (request, ctx) =>
      elicitFor(scope(), this.deps.options.elicitationTimeoutMs, request.params, ctx.mcpReq.signal),
    );
    client.setRequestHandler('sampling/createMessage', (request, ctx) =>
      sampleFor(scope(), this.deps.samplingPolicy?.() ?? 'ask', request.params, ctx.mcpReq.signal),
    );
    client.setNotificationHandler('notifications/elicitation/complete', (notification) =>
      this.urls.complete(notification.params.elicitationId),
    );
    client.onerror = (error) => {
      this.lastFailure = this.logs.scrub(error.message).slice(0, 300);
      this.logs.note(`error: ${this.lastFailure}`);
    };
    client.setNotificationHandler('notifications/tools/list_changed', () => void this.refreshTools(client));
    this.client = client;
    this.current = transport;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        (async () => {
          await client.connect(transport, { timeout: limit });
          // A server without tools (only resources or prompts) has no tools/list to ask.
          this.tools = client.getServerCapabilities()?.tools ? await listAllTools(client, limit) : [];
        })(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within the connect limit of ${limit} ms`)), limit);
        }),
      ]);
    } catch (error) {
      clearTimeout(timer);
      const why = this.logs
        .scrub(
          `${(error as Error).message}${this.lastFailure && !(error as Error).message.includes(this.lastFailure) ? ` (${this.lastFailure})` : ''}`,
        )
        .slice(0, 400);
      this.client = undefined;
      this.current = undefined;
      await client.close().catch(() => {});
      if (era === 'auto' && error instanceof SdkError && error.code === SdkErrorCode.EraNegotiationFailed) {
        this.logs.note(why);
        return NEGOTIATION_FAILED;
      }
      return why;
    }
    clearTimeout(timer);
    if (this.closed || this.abandoning || this.client !== client) {
      await client.close().catch(() => {});
      return 'closed';
    }
    client.onclose = () => this.lost(client);
    this.capabilities = client.getServerCapabilities();
    this.protocolVersion = client.getNegotiatedProtocolVersion();
    this.status = 'connected';
    this.connectedAt = Date.now();
    this.lastFailure = undefined;
    const revision = this.protocolVersion ? `, protocol ${this.protocolVersion}` : '';
    this.logs.note(`connected (${this.tools?.length ?? 0} tools${revision})`);
    this.deps.agentLog('info', `MCP server ${this.name} connected (${this.tools?.length ?? 0} tools)`);
    this.deps.toolsChanged();
    if (hooks && listening)
      void afterConnect(client, hooks, this.logs, listening.subscribed, this.deps.options.connectTimeoutMs);
    return true;
  }

  /** The work folder's URI when the owner exposes it to this server (stdio only); a failure is noted, no root. */
  private async rootFor(hooks: NotificationHooks): Promise<string | undefined> {
    if (this.transport !== 'stdio') return undefined;
    try {
      return await hooks.root();
    } catch (error) {
      this.logs.note(`the work folder is not offered as a root: ${(error as Error).message.slice(0, 200)}`);
      return undefined;
    }
  }

  private async refreshTools(client: Client): Promise<void> {
    try {
      this.tools = await listAllTools(client, this.deps.options.connectTimeoutMs);
      this.logs.note(`tool list changed (${this.tools.length} tools)`);
      this.deps.toolsChanged();
    } catch (error) {
      this.logs.note(`could not re-read the tool list: ${(error as Error).message}`);
    }
  }

  /** The session ended without our asking (exit, garbage, network): reconnect with backoff. */
  private lost(client: Client): void {
    if (client !== this.client || this.closed) return;
    this.client = undefined;
    this.current = undefined;
    this.failed(`the connection ended${this.lastFailure ? `: ${this.lastFailure}` : ''}`);
  }

  /** Ends a hung session; `lost` then schedules the reconnect. */
  private recycle(why: string): void {
    this.lastFailure = why;
    this.logs.note(`restarting: ${why}`);
    void this.client?.close().catch(() => {});
  }

  private failed(why: string): void {
    this.status = 'error';
    this.error = why;
    this.logs.note(why);
    this.deps.logger.warn({ agentId: this.agentId, server: this.name }, `mcp server ${this.name}: ${why}`);
    this.deps.agentLog('warn', `MCP server ${this.name}: ${why}`);
    if (this.closed || this.retryTimer) return;
    if (this.tries >= this.deps.options.reconnectTries) {
      this.logs.note(
        `gave up after ${this.tries} reconnect tries; POST /agents/${this.agentId}/mcp/${this.name}/restart tries again`,
      );
      return;
    }
    this.tries++;
    const delay = this.deps.options.reconnectBaseMs * 2 ** (this.tries - 1);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.restartCount++;
      this.logs.note(`reconnecting (try ${this.tries} of ${this.deps.options.reconnectTries})`);
      void this.connect();
    }, delay);
    this.retryTimer.unref();
  }

  private async drop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.current = undefined;
    if (client) await client.close().catch(() => {});
  }
}

/** Every page of `tools/list` (the SDK walks the pages when no cursor is given); never served from its cache. */
async function listAllTools(client: Client, timeout: number): Promise<Tool[]> {
  return (await client.listTools(undefined, { timeout, cacheMode: 'bypass' })).tools;
}
