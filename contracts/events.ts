/**
 * The typed event map of the bus (docs/events.md). One entry per event type: adding a type here is the
 * only way to emit it, and {@link EVENT_DESCRIPTIONS} must describe it (the `Record` makes tsc refuse a
 * type left undocumented).
 *
 * @public
 */

export interface UsageCounts {
  /** Input tokens, already including cacheRead and cacheWrite. */
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/**
 * Event type -> payload. Payload fields are snake_case where the API's clients read them so.
 *
 * @public
 */
export interface EventPayloads {
  'daemon.started': { version: string };
  'daemon.stopping': { reason: string };
  'extension.state.changed': { name: string; enabled: boolean; loaded: boolean; error: string | null };
  'identity.changed': { status: string };
  'agent.loaded': { name: string; filePath: string | null };
  'agent.unloaded': { name: string; reason: string };
  'agent.started': { startupTriggered: boolean };
  'agent.state.changed': { state: string; previous?: string; loop?: string };
  'agent.config.changed': { fields: string[] };
  'agent.degraded': { degraded: string | null };
  'agent.identity.changed': { did: string };
  'agent.error': {
    code: string;
    message: string;
    status?: number;
    turn_id?: string;
    absorbed_turn_ids?: string[];
    /** A system-scope command target that exited non-zero: its exit code (124 when its time limit ended it). */
    exit_code?: number;
  };
  'turn.started': { turn_id: string; trigger: string };
  'turn.completed': {
    turn_id: string;
    absorbed_turn_ids: string[];
    text: string | null;
    llm_calls: number;
    tool_calls: number;
    stop_reason: string;
  };
  'chat.delivered': { turn_ids: string[] };
  'chat.discarded': { turn_ids: string[]; reason: string };
  'loop.appended': { row_id: number; role: string; kind: string };
  'loop.compacted': { removed: number; summary_chars: number; memories?: number[] };
  'memory.saved': { memory_id: number; kind: string; source: string };
  'memory.forgotten': { memory_id: number; actor: string };
  'memory.recalled': { memory_ids: number[]; tokens: number; mode: 'hybrid' | 'fulltext' };
  'memory.embedded': { count: number; pending: number; model: string };
  /** An eval run began on copies of this agent (docs/evals.md). */
  'eval.run.started': { run_id: string; suite: string; cases: number; variants: string[]; repeat: number };
  /** One case of an eval run ended (`done` of `total`). */
  'eval.case.finished': {
    run_id: string;
    case: string;
    variant: string;
    repeat: number;
    status: 'passed' | 'failed' | 'error';
    ms: number;
    done: number;
    total: number;
  };
  /** An eval run ended: `passed`, `failed`, `cancelled` or `error`. */
  'eval.run.finished': { run_id: string; status: string; passed: number; failed: number; errors: number };
  /** A consolidation run ended: how many changelog rows of each action it wrote (docs/memory.md). */
  'memory.consolidated': { run_id: string; merged: number; updated: number; forgotten: number; refused: number };
  /** The spend governor set aside a model call's worst case against the agent's budgets (docs/costs.md). */
  'budget.reserved': { budget_names: string[]; tokens: number; usd: number | null; purpose: string };
  /** A model call would pass `budget` (`agent.day_usd`, `daemon.month_usd`, ...); `action` is what follows. */
  'budget.exceeded': {
    budget: string;
    limit: number;
    used: number;
    needed: number;
    action: 'fail' | 'ask';
    task_id: string | null;
  };
  /** The owner raised today's limit of `budget` by `amount` (a budget task approved with an amount). */
  'budget.raised': { budget: string; amount: number; day: string; task_id: string | null };
  'loop.cleared': { removed: number };
  'llm.delta': { text: string; call: number };
  'llm.completed': {
    provider: string;
    model: string;
    usage: UsageCounts;
    cost: number | null;
    duration_ms: number;
    stop_reason: string;
    /** The vendor's id of the completion, when it sent one. */
    response_id?: string;
  };
  'tool.started': { tool: string; call_id: string; args: unknown };
  /** A running tool call reported progress (an MCP server's progress notification); at most every 100 ms per call. */
  'tool.progress': { tool: string; call_id: string; progress: number; total?: number; message?: string };
  /** `error`, when not ok: `timeout`, `tool_error`, `denied` (the owner refused the call), `unknown_tool` or `aborted`. */
  'tool.completed': { tool: string; call_id: string; ok: boolean; duration_ms: number; error?: string };
  'task.created': { taskId: string; tool: string; status: string };
  'hil.requested':
    | { kind: 'approval'; taskId: string; tool: string; args: unknown }
    | { kind: 'ask'; requestId: string; question: string; schema?: Record<string, unknown> }
    | { kind: 'suspend'; requestId: string; reason: string };
  'hil.resolved': { kind: 'approval' | 'ask' | 'suspend'; id: string; resolution: string };
  'inbox.received': { messageId: number; source: string };
  'outbox.queued': { messageId: number; channel: string };
  'timer.fired': { timerId: number; run_count: number };
  'credential.changed': { name: string; action: 'set' | 'replaced' | 'deleted' | 'sealed' };
  'log.written': { level: string; origin: string | null; event: string | null; message: string };
  'agent.said': { text: string };
  /**
   * A backup of the agent's file was written and checked (docs/backups.md); `removed`: older scheduled copies deleted
   * by `keep`.
   */
  'backup.completed': {
    path: string;
    bytes: number;
    sha256: string;
    schema_version: number;
    sealed: boolean;
    scheduled: boolean;
    removed: string[];
  };
  /** A backup of the agent's file failed; nothing was left at `path`. */
  'backup.failed': { path: string | null; code: string; error: string; scheduled: boolean; file_path: string };
  'tracked.changed': {
    change: 'added' | 'changed' | 'moved' | 'removed';
    filePath: string;
    /** The tracked folder it is in. */
    folder: string;
    /** The path it had before, for `moved`. */
    from?: string;
    agentId?: string;
  };
  'tracked.autostarted': {
    scanned: number;
    started: Array<{ agentId: string; filePath: string; name: string; startupTriggered: boolean }>;
    skipped: Array<{ filePath: string; name: string; reason: string; agentId?: string }>;
    failed: Array<{ filePath: string; name: string; error: string }>;
  };
  /**
   * An MCP server listed a tool whose description or input schema differs from the definition the owner
   * approved (docs/mcp.md "Pinned tool definitions"): the tool is disabled until reviewed. Announced once
   * per change, with the agent whose connection saw it.
   */
  'mcp.tool.changed': { server: string; tool: string; changed: Array<'description' | 'inputSchema'> };
  /**
   * The owner accepted an MCP server's URL-mode elicitation (opened its link) and the tool call `call_id`
   * now waits for the server to confirm the interaction finished (docs/mcp.md "Elicitation").
   */
  'mcp.elicitation.waiting': { server: string; tool: string; call_id: string | null; elicitation_id: string };
  /**
   * A URL-mode elicitation the call waited for ended: `completed` (the server's completion notification
   * came) or `timed_out` (none within the owner's `elicitationTimeoutMs`).
   */
  'mcp.elicitation.completed': {
    server: string;
    tool: string;
    call_id: string | null;
    elicitation_id: string;
    outcome: 'completed' | 'timed_out';
  };
}

/** @public */
export type EventType = keyof EventPayloads;

/**
 * What one event on the bus looks like (schema `UmbilicalEvent` in /openapi.json).
 *
 * @public
 */
export interface UmbilicalEvent<T extends EventType = EventType> {
  /** Per-agent sequence (per process; daemon-wide events with `agent_id: null` share one sequence). */
  seq: number;
  event_type: T;
  timestamp: number;
  source: string;
  agent_id: string | null;
  /** The inner loop that produced it; absent means `main`. */
  loop?: string;
  payload: EventPayloads[T];
  sig?: string;
  turn_id?: string;
  /**
   * Set on `GET /events` frames whose serialized form exceeded the per-frame cap: `payload` is then
   * `{_truncated: true, preview, bytes}` (the start of the payload's JSON and the original frame size).
   */
  truncated?: boolean;
}

/**
 * What `GET /events` sends as `data:` of an event frame.
 *
 * @public
 */
export interface EventFrame {
  cursor: number;
  event: UmbilicalEvent;
}

/** @public */
export interface EmitInput<T extends EventType> {
  agentId: string | null;
  payload: EventPayloads[T];
  /** Who emitted it: `kernel`, `runtime`, `ext:<name>`. Defaults to the emitter's own name. */
  source?: string;
  loop?: string;
  turnId?: string;
}

/**
 * The daemon's event bus. Emitting is synchronous and never throws into the caller: a listener that
 * throws is logged and skipped. Emit only after the row an event announces is committed.
 *
 * @public
 */
export interface EventBus {
  emit<T extends EventType>(type: T, input: EmitInput<T>): UmbilicalEvent<T>;
  /** Listen to every event; returns the unsubscribe function. Listeners must not block. */
  subscribe(listener: (event: UmbilicalEvent) => void): () => void;
}

/**
 * One line per event type, used for the OpenAPI description and docs.
 *
 * @public
 */
export const EVENT_DESCRIPTIONS: Record<EventType, string> = {
  'daemon.started': 'The daemon finished starting.',
  'daemon.stopping': 'Shutdown began.',
  'extension.state.changed': 'An extension was loaded, failed or stopped.',
  'identity.changed': 'The owner identity changed state.',
  'agent.loaded': 'An agent file was loaded.',
  'agent.unloaded': 'An agent was stopped and unloaded.',
  'agent.started': 'An agent started (startup trigger fired or not).',
  'agent.state.changed': 'A loop executor or the display state changed.',
  'agent.config.changed': 'The agent config was replaced or updated.',
  'agent.degraded': 'The degraded flag was set or cleared.',
  'agent.identity.changed':
    "The agent's key pair and attestations were (re)generated; payload carries the new DID only.",
  'agent.error':
    'A turn or agent operation failed; names the turn ids it ends (code daemon_restart: a crash cut the turn short).',
  'turn.started': 'A turn began.',
  'turn.completed': 'A turn finished; names the turn id and absorbed chat turn ids.',
  'chat.delivered': 'Queued chats were absorbed into the starting turn.',
  'chat.discarded':
    'Queued work was dropped by abort, unload or off, or after a restart because its loop is gone (reason daemon_restart).',
  'loop.appended': 'A row was committed to a loop stream.',
  'loop.compacted': 'A loop history was summarized (`memories`: the ids it kept as memories).',
  'memory.saved': 'A memory was written to the agent file.',
  'memory.forgotten': 'A memory was forgotten (kept as forgotten, out of every search) or deleted.',
  'memory.recalled': 'Memories were given to the model before a turn (docs/memory.md).',
  'memory.embedded': 'Memories got their embeddings (in the background).',
  'eval.run.started': 'An eval run began on throwaway copies of the agent (docs/evals.md).',
  'eval.case.finished': 'One case of an eval run ended, passed, failed or in error.',
  'eval.run.finished': 'An eval run ended (passed, failed, cancelled or error).',
  'memory.consolidated':
    'A memory consolidation run merged, updated or forgot memories (its changelog rows say which).',
  'budget.reserved': "The spend governor reserved a model call's worst case against the budgets that apply (debug).",
  'budget.exceeded':
    'A model call would pass a budget: the turn fails (budget_exceeded) or waits on an owner task of kind budget.',
  'budget.raised': "The owner raised today's limit of a budget.",
  'loop.cleared': 'A loop stream was cleared.',
  'llm.delta': 'A streamed token delta of a running model call.',
  'llm.completed': 'A model call finished, with usage and cost.',
  'tool.started': 'A tool call began.',
  'tool.progress': 'A running tool call reported progress (progress, total, message).',
  'tool.completed': 'A tool call ended.',
  'task.created': 'A task was created (approval or background work).',
  'hil.requested': 'A human is asked: approval, ask or suspend.',
  'hil.resolved': 'A human request was resolved.',
  'inbox.received': 'A message was committed to the inbox.',
  'outbox.queued': 'A message was committed to the outbox.',
  'timer.fired': 'A timer woke the agent.',
  'credential.changed': 'A credential was set, replaced, sealed or deleted (metadata only).',
  'log.written': 'A row was written to the agent log.',
  'agent.said': 'The agent spoke to the owner mid-turn (the `say` tool).',
  'backup.completed':
    'A backup of the agent file was written and checked (integrity ok); scheduled ones name the older copies removed by `keep`.',
  'backup.failed': 'A backup of the agent file failed (nothing left behind); `code` says why.',
  'tracked.changed':
    'An agent file in a tracked folder was added, changed, moved or removed (tracked-folders extension).',
  'mcp.tool.changed':
    "An MCP server's tool definition (description, input schema) changed since the owner approved it: the tool is disabled until `agt mcp review <server>`.",
  'mcp.elicitation.waiting':
    'A tool call waits for an MCP server to confirm a URL-mode elicitation the owner accepted (opened its link).',
  'mcp.elicitation.completed':
    'A URL-mode elicitation a tool call waited for ended: the server confirmed it, or it timed out.',
  'tracked.autostarted':
    'The boot autostart of the tracked folders ran: what started, what was skipped and why, what failed.',
};
