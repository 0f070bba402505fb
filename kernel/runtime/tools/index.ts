/**
 * The built-in tools (decision D7). Each is a {@link ToolDefinition} with a JSON input schema; `run`
 * finds the calling agent's runtime by id, so one list serves every agent (and `GET /agents/{id}/tools`).
 */
import type { ToolDefinition } from '../../../contracts/tools.js';
import type { AgentRuntime } from '../agent-runtime.js';

export type RuntimeLookup = (agentId: string) => AgentRuntime | undefined;

export function builtinTools(_lookup: RuntimeLookup): ToolDefinition[] {
  return [];
}
