/**
 * Tools: the built-in registry's entries and the tool-contribution extension point (mcp, compute).
 *
 * Combination rule: contributed tools are gathered from every {@link ToolContributor} in parallel and
 * concatenated in extension load order. A name already taken (by a built-in tool or an earlier
 * contributor) is skipped and logged: built-ins always win.
 */
import type { Logger } from './logger.js';
import type { ModelMessage, ModelTool, ToolCall, ToolImage } from './model.js';

/** @public */
export interface ToolContext {
  agentId: string;
  loop: string;
  turnId: string | undefined;
  /** The model's id of this tool call (built-in tools that ask the owner key their request by it). */
  callId?: string;
  /**
   * Aborted when the turn is interrupted or the agent unloads, or when the call's time limit passes
   * (`signal.reason` then says which); long tools must stop, and tools that forward the call elsewhere
   * (an MCP server) must cancel it there.
   */
  signal: AbortSignal;
  logger: Logger;
  /**
   * Tells the kernel the call is making progress (an MCP progress notification, a step of a long job):
   * its time limit (`timeoutMs`, else the agent's `limits.tool_timeout_ms`) starts over. Cheap; call
   * it as often as progress is seen. With `update`, the progress is also announced as `tool.progress`
   * (at most every 100 ms per call, the newest update kept for the next slot). Absent where no limit applies.
   */
  progress?: (update?: ToolProgress) => void;
  /**
   * The W3C trace context of this call, when a `traceContext` provider (the `telemetry` extension) traces
   * the turn: the call's own span as `traceparent`, for a tool that calls another system to carry (an MCP
   * request's `params._meta.traceparent`). Undefined when nothing traces. Synchronous and cheap.
   * @beta
   */
  trace?: () => TraceHeaders | undefined;
  /**
   * Asks the owner a question on behalf of this call, as the `ask` tool does: an `ask` of the turn
   * (`hil.requested` kind `ask`, answered by `POST /agents/{id}/asks/{requestId}`, listed with the turn's
   * other asks), committed to the agent file so it survives a restart (the resumed turn runs the call
   * again and finds the ask of the same call and order). The wait does not count against the call's
   * time limit. Resolves with the answer; `fromCaller` when the sender of the turn's message (not the
   * owner) answered. Rejects when the call's signal or `options.signal` aborts (the ask is then
   * withdrawn, `hil.resolved` cancelled). Absent where nobody can be asked.
   */
  ask?: (
    question: string,
    options?: {
      signal?: AbortSignal;
      /**
       * The JSON Schema of the answer wanted (an MCP elicitation's requested schema): shown with the ask
       * (`schema` on `hil.requested` and `GET /tasks`) so the console offers a form; the answer stays a
       * string (the form's object as JSON). Kept with the ask in the agent file, so its form shows again
       * after a restart.
       * @beta
       */
      schema?: Record<string, unknown>;
    },
  ) => Promise<{ answer: string; fromCaller: boolean }>;
  /**
   * A model call for this tool call (an MCP server's sampling request) on the calling agent's own
   * provider and model, through the spend governor like the turn's own calls (counted against the
   * agent's budgets, recorded in its ledger with `purpose`). With `approval`, the owner decides first: an
   * approval task (`hil.requested` kind `approval`, `tool` and `args` as given) that the owner resolves
   * like any other; the wait does not count against the call's time limit. Rejects with `forbidden` when
   * the owner denies, and as the model call does otherwise. With `tools`, the model may answer with tool
   * calls ({@link ToolSampleResult.toolCalls}) that the caller runs itself; it hands their results back
   * in a later request's `messages`. Absent where no turn runs the call.
   */
  sample?: (request: ToolSampleRequest) => Promise<ToolSampleResult>;
}

/**
 * A step of a long tool call ({@link ToolContext.progress}), as an MCP progress notification gives it.
 *
 * @beta
 */
export interface ToolProgress {
  /** Increases with each update (a count or a fraction; not necessarily an integer). */
  progress: number;
  /** The `progress` value at the end, when known. */
  total?: number;
  /** What is being done now (at most 500 characters are kept). */
  message?: string;
}

/**
 * W3C Trace Context headers ({@link ToolContext.trace}).
 *
 * @beta
 */
export interface TraceHeaders {
  traceparent: string;
  tracestate?: string;
}

/**
 * What {@link ToolContext.sample} asks the model.
 *
 * @beta
 */
export interface ToolSampleRequest {
  /**
   * The conversation: text from the user and the assistant, and with `tools`, the assistant's earlier
   * tool calls and their results (`tool` messages, each after the assistant message that made its call).
   */
  messages: ModelMessage[];
  system?: string;
  /**
   * Tools the model may call in its answer (an MCP server's sampling with tools). Nothing runs them here:
   * the answer carries the calls and the caller runs them. Empty or absent: a text answer.
   */
  tools?: ModelTool[];
  /** At most this many tokens in the answer (never more than the agent's own `max_tokens`). */
  maxTokens?: number;
  temperature?: number;
  /** Recorded in the ledger (for example `mcp_sampling`). */
  purpose: string;
  approval?: { tool: string; args: Record<string, unknown> };
  signal?: AbortSignal;
}

/**
 * The model's answer to a {@link ToolSampleRequest}.
 *
 * @beta
 */
export interface ToolSampleResult {
  text: string;
  /** The provider's model id that answered. */
  model: string;
  stopReason: 'end' | 'tool_use' | 'max_tokens' | 'other';
  /** The model's tool calls, when the request offered `tools` and it made some (`stopReason` `tool_use`). */
  toolCalls?: ToolCall[];
}

/** @public */
export interface ToolResult {
  /** Text handed back to the model (also where resources and anything non-visual are described). */
  content: string;
  isError?: boolean;
  /**
   * Images handed to the model with the text, in its provider's format (Anthropic: image blocks in the
   * tool result; Chat Completions: a user message with the images right after the tool results). At
   * most {@link MAX_TOOL_RESULT_IMAGES} are kept, each at most {@link MAX_TOOL_IMAGE_BYTES} decoded;
   * the rest are replaced by a note in the text. Stored with the result in the agent's loop.
   */
  images?: ToolImage[];
}

/** @public */
export const MAX_TOOL_RESULT_IMAGES = 4;
/** @public */
export const MAX_TOOL_IMAGE_BYTES = 2 * 1024 * 1024;

/** @public */
export interface ToolDefinition {
  name: string;
  description: string;
  /** JSON Schema of the input object. */
  inputSchema: Record<string, unknown>;
  /** `builtin`, `mcp:<server>` or `ext:<name>`. */
  source: string;
  /** Default for agents that do not declare the tool. */
  defaultEnabled?: boolean;
  /** Restricted tools need owner approval when a model calls them. */
  restricted?: boolean;
  /** Marked `notable` in the review summary (code execution, network, messaging, ...). */
  notable?: boolean;
  /**
   * This tool's own time limit per call in ms (an MCP server's `tool_call_timeout_ms`), instead of the
   * agent's `limits.tool_timeout_ms`; {@link ToolContext.progress} restarts it.
   */
  timeoutMs?: number;
  /**
   * Set while the tool must not run, saying why (an MCP tool whose input schema changed since the
   * owner last saw it). It is then disabled whatever the agent declares: listed with `enabled: false`
   * and this reason as `disabledReason` in `GET /agents/{id}/tools`, never offered to the model, and a
   * call of it is refused. The contributor clears it when the owner re-enables the tool (for MCP:
   * `POST /agents/{id}/mcp/{server}/tools/{tool}/enable`).
   */
  disabledReason?: string;
  run(args: Record<string, unknown>, context: ToolContext): Promise<ToolResult>;
}

/** @public */
export interface ToolContributor {
  /** The tools this contributor offers to one agent right now. Must not throw for an agent it ignores. */
  toolsFor(agentId: string): Promise<ToolDefinition[]> | ToolDefinition[];
}
