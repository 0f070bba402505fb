/**
 * The shape of one built-in tool: a TypeBox input schema (the JSON Schema the model sees and the
 * validation), and a `run` that gets the calling agent's runtime. Input errors and AgtErrors become
 * error results the model can read (tool-call.ts turns throws into results).
 */
import type { Static, TSchema } from 'typebox';
import { type ToolContext, type ToolDefinition, type ToolResult, assertValid } from '@agt/contracts';
import type { AgentRuntime } from '../agent-runtime.js';
import { toolAgentNotRunning } from './errors.js';

export type RuntimeLookup = (agentId: string) => AgentRuntime | undefined;

export interface BuiltinSpec<S extends TSchema> {
  name: string;
  description: string;
  input: S;
  /** Enabled for agents that do not declare the tool (default true). */
  defaultEnabled?: boolean;
  restricted?: boolean;
  /** Flagged in the review summary (network, messaging, self-modification). */
  notable?: boolean;
  run(runtime: AgentRuntime, args: Static<S>, context: ToolContext): Promise<ToolResult | string> | ToolResult | string;
}

export function builtin<S extends TSchema>(spec: BuiltinSpec<S>, lookup: RuntimeLookup): ToolDefinition {
  return {
    name: spec.name,
    description: spec.description,
    inputSchema: JSON.parse(JSON.stringify(spec.input)) as Record<string, unknown>,
    source: 'builtin',
    defaultEnabled: spec.defaultEnabled ?? true,
    ...(spec.restricted ? { restricted: true } : {}),
    ...(spec.notable ? { notable: true } : {}),
    async run(args, context) {
      const runtime = lookup(context.agentId);
      if (!runtime) throw toolAgentNotRunning(context.agentId);
      const input = assertValid(spec.input, args ?? {}, `${spec.name} input`);
      const out = await spec.run(runtime, input, context);
      return typeof out === 'string' ? { content: out } : out;
    },
  };
}

/** JSON text for a tool result. */
export const json = (value: unknown) => JSON.stringify(value, null, 1);
