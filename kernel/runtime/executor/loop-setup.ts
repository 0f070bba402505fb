/**
 * What one loop's turn is built from: its model (main's, with the loop's partial override), its
 * instructions (main: `instructions`; inner loop: its `goal`) and its tools (see tools/effective.ts).
 */
import type { ModelClient, ModelSettings, ToolDefinition, ToolResult } from '@agt/contracts';
import { effectiveTools } from '../tools/effective.js';
import { noProviderExtension, noProviderServes } from '../errors.js';
import type { RuntimeAgent } from '../types.js';
import type { ActiveTool } from './turn.js';

/** Answers an eval copy's tool calls from a recording instead of running them (kernel/evals/replay.ts). */
export interface ToolReplayer {
  answer(tool: string, args: unknown): ToolResult;
}

/** Where a loop's model and tools come from (part of the runtime's deps, which it hands over). */
export interface LoopSources {
  hasModelProviders(): boolean;
  resolveModel(agent: RuntimeAgent, providerId: string): Promise<ModelClient | undefined>;
  builtinTools(): ToolDefinition[];
  contributedTools(agentId: string, taken: ReadonlySet<string>): Promise<ToolDefinition[]>;
  /** Recorded results an eval copy's tools answer with instead of running (docs/evals.md). */
  toolReplay?(agentId: string): ToolReplayer | undefined;
}

/** The client and settings for a loop; `unavailable` when no provider extension serves the provider. */
export async function loopModel(
  agent: RuntimeAgent,
  deps: LoopSources,
  loop: string,
): Promise<{ client: ModelClient; settings: ModelSettings }> {
  const override = loop === 'main' ? undefined : agent.config.loops?.find((l) => l.name === loop)?.model;
  const settings = { ...agent.config.model, ...(override ?? {}) } as ModelSettings;
  if (!deps.hasModelProviders()) {
    throw noProviderExtension();
  }
  const client = await deps.resolveModel(agent, settings.provider);
  if (!client) throw noProviderServes(settings.provider);
  return { client, settings };
}

export function loopInstructions(agent: RuntimeAgent, loop: string): string {
  if (loop === 'main') return agent.config.instructions;
  const goal = agent.config.loops?.find((l) => l.name === loop)?.goal ?? '';
  return `You are the inner loop "${loop}" of the agent ${agent.config.name}.\nYour goal: ${goal}`;
}

/** Tool definitions an agent sees: built-ins first; contributed names that clash are skipped. */
export async function toolDefinitions(agent: RuntimeAgent, deps: LoopSources): Promise<ToolDefinition[]> {
  const builtins = deps.builtinTools();
  const contributed = await deps.contributedTools(agent.id, new Set(builtins.map((t) => t.name)));
  return [...builtins, ...contributed];
}

/** The enabled tools of one loop, by name. */
export async function loopTools(
  agent: RuntimeAgent,
  deps: LoopSources,
  loop: string,
): Promise<Map<string, ActiveTool>> {
  const out = new Map<string, ActiveTool>();
  const replay = deps.toolReplay?.(agent.id);
  for (const tool of effectiveTools(agent.config, await toolDefinitions(agent, deps), loop)) {
    if (!tool.enabled) continue;
    // A replayed tool runs nothing, so there is nothing for the owner to approve.
    if (replay)
      out.set(tool.def.name, {
        def: { ...tool.def, run: async (args) => replay.answer(tool.def.name, args) },
        visible: tool.visible,
        restricted: false,
      });
    else out.set(tool.def.name, { def: tool.def, visible: tool.visible, restricted: tool.restricted });
  }
  return out;
}
