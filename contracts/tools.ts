/**
 * Tools: the built-in registry's entries and the tool-contribution extension point (mcp, compute).
 *
 * Combination rule: contributed tools are gathered from every {@link ToolContributor} in parallel and
 * concatenated in extension load order. A name already taken (by a built-in tool or an earlier
 * contributor) is skipped and logged: built-ins always win.
 */
import type { Logger } from './logger.js';

export interface ToolContext {
  agentId: string;
  loop: string;
  turnId: string | undefined;
  /** The model's id of this tool call (built-in tools that ask the owner key their request by it). */
  callId?: string;
  /** Aborted when the turn is interrupted or the agent unloads; long tools must stop. */
  signal: AbortSignal;
  logger: Logger;
}

export interface ToolResult {
  /** Text handed back to the model. */
  content: string;
  isError?: boolean;
}

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
  run(args: Record<string, unknown>, context: ToolContext): Promise<ToolResult>;
}

export interface ToolContributor {
  /** The tools this contributor offers to one agent right now. Must not throw for an agent it ignores. */
  toolsFor(agentId: string): Promise<ToolDefinition[]> | ToolDefinition[];
}
