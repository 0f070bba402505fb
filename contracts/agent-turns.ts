/**
 * `ctx.agents.turns`: turns of loaded agents for extensions that let other tools talk to agents (A2A on
 * the mesh server, the MCP server). The kernel runs the turns; the extension follows them on the event
 * bus (`turn.started`, `hil.requested`, `hil.resolved`, `turn.completed`, `agent.error`,
 * `chat.discarded`, each carrying the turn id) and uses these calls to start, stop and answer them.
 *
 * Two ways in, by who speaks:
 * - {@link AgentTurnsAccess.chat} is the owner's chat (`POST /agents/{id}/chat`): only for a surface
 *   that acts with the owner's authority (the daemon's bearer token). It interrupts a running turn.
 * - {@link AgentTurnsAccess.deliver} is a message from someone else (another agent over A2A): an `inbox`
 *   event dispatched to the agent's loop (the model sees `[trigger on_inbox] {…source, sender, text}`,
 *   never a user row), queued behind running work; it interrupts nothing and creates no inbox row.
 *
 * Approvals are the owner's: an extension serving callers who are not the owner must not resolve them.
 */

/**
 * A message from outside the daemon that starts a turn ({@link AgentTurnsAccess.deliver}).
 *
 * @beta
 */
export interface OutsideMessage {
  /** Where it came from (`a2a`); never `user` (that is chat). */
  source: string;
  /** Who sent it, as the source names senders (a DID, an address). */
  sender?: string;
  text: string;
  /** Carried to the turn with the message (JSON, nesting at most 64 levels). */
  data?: unknown;
  /**
   * The W3C `traceparent` the message arrived with (an A2A message's `metadata.traceparent`). The kernel
   * hands a well-formed one (`isTraceparent`) with the new turn's id to the `traceContext` provider
   * (`contracts/trace-context.ts`) before the turn can start; it is not stored.
   */
  traceparent?: string;
}

/**
 * An `ask` a turn waits on (the `ask` tool).
 *
 * @beta
 */
export interface PendingAsk {
  requestId: string;
  question: string;
  loop: string;
  turnId: string | null;
  createdAt: number;
}

/**
 * A restricted tool call waiting for the owner's approval.
 *
 * @beta
 */
export interface PendingApproval {
  taskId: string;
  tool: string;
  args: Record<string, unknown>;
  loop: string;
  turnId: string | null;
  createdAt: number;
}

/**
 * One row of a loop's conversation ({@link AgentTurnsAccess.history}), as `GET /agents/{id}/chat` gives it.
 *
 * @beta
 */
export interface ConversationEntry {
  id: number;
  /** `user`, `assistant`, `tool`, `system`. */
  role: string;
  kind: string;
  content: string;
  turnId: string | null;
  createdAt: number;
  /** A tool row: the tool's name. */
  name?: string;
  isError?: boolean;
}

/**
 * Where a turn is: queued, running (maybe waiting on an ask or approval), or nowhere (ended, unknown).
 *
 * @beta
 */
export type TurnPlace = 'queued' | 'running' | 'none';

/**
 * The triggers an extension may fire ({@link AgentTurnsAccess.fire}): each names an outside source the
 * kernel cannot see itself. Every other trigger (`on_inbox`, `on_chat`, ...) has its own kernel path.
 *
 * - `on_mcp_resource`: a resource the agent subscribed to on an MCP server changed
 *   (`notifications/resources/updated`); `data` is `{server, uri}` (docs/mcp.md).
 *
 * @beta
 */
export type ExtensionTrigger = 'on_mcp_resource';

/** @beta */
export interface AgentTurnsAccess {
  /**
   * The owner's chat on `loop` (default `main`), committed before it returns, as `POST /agents/{id}/chat`;
   * returns the turn id. A repeated `idempotencyKey` with the same loop and text returns the first turn
   * id; with another request it throws `idempotency_key_reused` (422). Throws `not_found` (agent or loop)
   * and `conflict` (disabled or stopped loop). `traceparent`: the caller's W3C trace context (an MCP request's
   * `_meta.traceparent`); a well-formed one goes to the `traceContext` provider with the new turn's id before
   * the turn can start, so the turn joins that trace. It is not stored.
   */
  chat(
    agentId: string,
    text: string,
    options?: { loop?: string; idempotencyKey?: string; traceparent?: string },
  ): string;
  /**
   * A message from someone other than the owner, queued on the agent's main loop as an `inbox` event
   * (committed before it returns); returns the turn id. A repeated `idempotencyKey` returns the first
   * turn id whatever the message (no request is compared). Throws `bad_request` for `source: "user"`,
   * `not_found`, `conflict` as {@link chat}.
   */
  deliver(agentId: string, message: OutsideMessage, options?: { idempotencyKey?: string }): string;
  /**
   * Offers an event to the agent's `trigger` (its config's `triggers.<trigger>` targets), as the kernel's
   * own sources do: the display state gates it, each target's `filter` and timing apply, an agent-scope
   * target queues a trigger turn whose input shows `data` (`[trigger on_mcp_resource] {…}`), a system-scope
   * one runs its lambda or command. Returns how many targets took it (0: none configured, gated, filtered;
   * a held event of a `suspended` agent counts 0 too). `data` is JSON (nesting at most 64 levels); keep it
   * small (what changed, not its content). Throws `not_found` for an agent that is not loaded.
   */
  fire?(agentId: string, trigger: ExtensionTrigger, data: unknown): number;
  /** Where turn `turnId` of the agent is now. */
  place(agentId: string, turnId: string): TurnPlace;
  /**
   * Interrupts turn `turnId` when it is the one running on its loop (its end is `turn.completed` with
   * `stop_reason: "interrupted"`); false when it is not running (queued, ended, unknown).
   */
  interrupt(agentId: string, turnId: string): boolean;
  /** The asks waiting for an answer (oldest first). */
  asks(agentId: string): PendingAsk[];
  /**
   * Answers a pending ask; the turn resumes with it. `fromCaller`: the answer comes from whoever sent the
   * turn's message, not the owner (the model is told so; `hil.resolved` says `answered_by_caller`).
   * Throws `not_found` for an unknown request.
   */
  answerAsk(agentId: string, requestId: string, answer: string, options?: { fromCaller?: boolean }): void;
  /** The approvals waiting for the owner (oldest first). */
  approvals(agentId: string): PendingApproval[];
  /**
   * The owner's decision on a pending approval (only for a surface acting with the owner's authority).
   * Throws `not_found` (unknown task) and `conflict` (no longer pending).
   */
  resolveApproval(agentId: string, taskId: string, action: 'approve' | 'deny', reason?: string): void;
  /**
   * The newest `limit` rows (default 50, clamped 1-500) of loop `loop`'s conversation (default `main`),
   * oldest first, as the owner reads them (`GET /agents/{id}/chat`). Throws `not_found` (agent or loop).
   */
  history(agentId: string, options?: { loop?: string; limit?: number }): ConversationEntry[];
  /**
   * Records kept beside the agent's turns, in its file (absent on older kernels and fake ones): see
   * {@link TurnRecordsAccess}.
   */
  readonly records?: TurnRecordsAccess;
}

/**
 * One record an extension keeps beside a turn ({@link TurnRecordsAccess}).
 *
 * @beta
 */
export interface TurnRecord {
  turnId: string;
  /** What was last put, parsed. */
  record: unknown;
  /** Its place in the kind's order (first write); pass it as `before` to list the older ones. */
  seq: number;
  createdAt: number;
  updatedAt: number;
}

/**
 * Records an extension keeps beside an agent's turns, in the agent's file, so they outlive a restart (the
 * mesh keeps the A2A task each turn is). One JSON record per `kind` and turn id; name the kind after the
 * extension (`mesh.a2a-task`: `^[a-z0-9][a-z0-9._-]{0,63}$`). A kind keeps at most 10,000 records (the oldest
 * go first); a record is at most 256 KB of JSON. The agent's own tools cannot read or write them. Each call
 * throws `not_found` for an agent that is not loaded, `bad_request` for a bad kind or record.
 *
 * @beta
 */
export interface TurnRecordsAccess {
  /** Writes (or replaces) the record of `turnId`, committed before it returns. */
  put(agentId: string, kind: string, turnId: string, record: unknown): void;
  get(agentId: string, kind: string, turnId: string): TurnRecord | undefined;
  /** Newest first, at most `limit` (default 50, clamped 1-500); `before`: older than that `seq`. */
  list(agentId: string, kind: string, options?: { limit?: number; before?: number }): TurnRecord[];
}

/**
 * One HTTP request an extension makes on an agent's behalf ({@link AgentFetch}).
 *
 * @beta
 */
export interface AgentFetchRequest {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Default 15 s, at most 60 s. */
  timeoutMs?: number;
  /** Body bytes read at most (default 256 KB, at most 4 MB); the rest is cut (`truncated`). */
  maxBytes?: number;
}

/** @beta */
export interface AgentFetchResponse {
  status: number;
  /** Lowercase names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  text: string;
  truncated: boolean;
}

/**
 * `ctx.agents.fetch`: an HTTP(S) request under the agent's fetch policy, the one `sys_fetch` obeys:
 * loopback, private, link-local and other non-public addresses (after DNS, on every redirect hop) are
 * refused unless the agent's effective `security.fetch_allow_hosts` (capped by the owner's
 * `agentCeiling.fetchAllowHosts`) names the host. Rejects with `forbidden` when the policy refuses, with
 * `not_found` for an agent that is not loaded, `bad_request` for a URL that is not http(s); any other
 * rejection is a network failure or the time limit (worth retrying).
 *
 * @beta
 */
export type AgentFetch = (agentId: string, request: AgentFetchRequest) => Promise<AgentFetchResponse>;
