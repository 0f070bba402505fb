/**
 * Context usage of one loop (`GET /agents/{id}/context`): an estimate of what the loop's next model
 * call carries, split into non-overlapping categories that sum to `totalTokens`.
 *
 * Estimator: `ceil(characters / 4)` per text (no provider tokenizer is consulted). Each part:
 * - `system`: the loop's system prompt (main: `instructions`; an inner loop: the runtime's header plus
 *   its `goal`);
 * - `files`: files injected into the prompt (the runtime injects none: always 0);
 * - `tools`: each visible enabled tool as the model receives it (name, description, JSON schema) for
 *   built-in and extension tools; `mcp:<server>`: the same for each MCP server's tools;
 * - `dynamic`: dynamic instructions (the runtime sends none: always 0);
 * - `messages`: the history the next call sends (the newest 400 rows, as provider messages) plus
 *   {@link MESSAGE_OVERHEAD_TOKENS} per message of framing (`breakdown.overhead_tokens`, counted in this
 *   category).
 * Categories are ordered biggest first; `items` lists the biggest entries of each (at most `items`).
 */
import type { AgentConfig, ModelMessage, ToolDefinition } from '@agt/contracts';
import type { LoopRow } from '../../agents/stores/loop-store.js';
import { buildMessages } from '../executor/context.js';
import { effectiveTools } from '../tools/effective.js';

export const DEFAULT_COMPACT_THRESHOLD = 100_000;
export const MESSAGE_OVERHEAD_TOKENS = 4;
export const DEFAULT_CONTEXT_ITEMS = 12;
export const MAX_CONTEXT_ITEMS = 200;

export const estimateTokens = (text: string): number => Math.ceil(text.length / 4);

export type ThresholdSource = 'loop' | 'agent' | 'model' | 'default';

const positive = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;

/** Loop `compact_threshold` → agent `context.compact_threshold` → the loop's model's → 100000. */
export function resolveCompactThreshold(
  config: AgentConfig,
  loop: string,
): { compactThreshold: number; source: ThresholdSource; agentCompactThreshold: number } {
  const declared = loop === 'main' ? undefined : config.loops?.find((l) => l.name === loop);
  const agent = positive(config.context?.compact_threshold);
  const model = positive({ ...config.model, ...(declared?.model ?? {}) }.compact_threshold);
  const agentCompactThreshold = agent ?? positive(config.model.compact_threshold) ?? DEFAULT_COMPACT_THRESHOLD;
  const own = positive(declared?.compact_threshold);
  if (own !== undefined) return { compactThreshold: own, source: 'loop', agentCompactThreshold };
  if (agent !== undefined) return { compactThreshold: agent, source: 'agent', agentCompactThreshold };
  if (model !== undefined) return { compactThreshold: model, source: 'model', agentCompactThreshold };
  return { compactThreshold: DEFAULT_COMPACT_THRESHOLD, source: 'default', agentCompactThreshold };
}

export interface ContextItem {
  name: string;
  tokens: number;
  detail?: string;
}

export interface ContextCategory {
  id: string;
  key: string;
  label: string;
  tokens: number;
  count?: number;
  items: ContextItem[];
}

export interface ContextInput {
  config: AgentConfig;
  loop: string;
  /** The loop has a live executor (else `available: false`). */
  live: boolean;
  system: string;
  /** The system prompt's fixed part (the rest is instructions / goal). */
  systemBase: string;
  definitions: ToolDefinition[];
  rows: LoopRow[];
  items: number;
  now: number;
}

const byTokens = <T extends { tokens: number }>(a: T, b: T) => b.tokens - a.tokens;

function messageTokens(message: ModelMessage): number {
  let tokens = estimateTokens(message.content);
  if (message.role === 'assistant' && message.toolCalls) tokens += estimateTokens(JSON.stringify(message.toolCalls));
  return tokens;
}

function messageName(message: ModelMessage, index: number): string {
  return `#${index + 1} ${message.role}${message.role === 'tool' ? ` ${message.name}` : ''}`;
}

export function contextUsage(input: ContextInput) {
  const threshold = resolveCompactThreshold(input.config, input.loop);
  const base = {
    loop: input.loop,
    available: input.live,
    compactThreshold: threshold.compactThreshold,
    compactThresholdSource: threshold.source,
    agentCompactThreshold: threshold.agentCompactThreshold,
    note: 'Estimated: ceil(characters / 4) tokens per text; messages include 4 tokens of framing each. Categories do not overlap and sum to totalTokens.',
    computed_at: input.now,
  };
  if (!input.live) {
    return {
      ...base,
      totalTokens: null,
      percent: null,
      categories: [] as ContextCategory[],
      breakdown: null,
      note: 'The loop has no live executor (disabled, never woken, or put to sleep): nothing to measure.',
    };
  }
  const limit = (list: ContextItem[]) => list.sort(byTokens).slice(0, input.items);

  const systemTokens = estimateTokens(input.system);
  const baseTokens = Math.min(systemTokens, estimateTokens(input.systemBase));
  const instructionsTokens = systemTokens - baseTokens;

  const groups = new Map<string, Array<{ name: string; tokens: number }>>();
  for (const tool of effectiveTools(input.config, input.definitions, input.loop)) {
    if (!tool.enabled || !tool.visible) continue;
    const tokens = estimateTokens(
      JSON.stringify({ name: tool.def.name, description: tool.def.description, input_schema: tool.def.inputSchema }),
    );
    const source = tool.def.source.startsWith('mcp:') ? tool.def.source : 'builtin';
    groups.set(source, [...(groups.get(source) ?? []), { name: tool.def.name, tokens }]);
  }
  const toolGroups = [...groups.entries()].map(([source, tools]) => ({
    source,
    tokens: tools.reduce((sum, t) => sum + t.tokens, 0),
    tools: tools.sort(byTokens),
  }));
  const toolsTotal = toolGroups.reduce((sum, group) => sum + group.tokens, 0);

  const messages = buildMessages(input.rows);
  const perMessage = messages.map((message, index) => ({
    name: messageName(message, index),
    tokens: messageTokens(message),
    detail: message.content.slice(0, 80),
  }));
  const messagesTokens = perMessage.reduce((sum, m) => sum + m.tokens, 0);
  const overheadTokens = messages.length * MESSAGE_OVERHEAD_TOKENS;

  const builtinGroup = toolGroups.find((group) => group.source === 'builtin');
  const categories: ContextCategory[] = [
    {
      id: 'system',
      key: 'system',
      label: 'System prompt',
      tokens: systemTokens,
      items: limit(
        [
          { name: 'base_and_sections', tokens: baseTokens },
          { name: 'instructions', tokens: instructionsTokens },
        ].filter((item) => item.tokens > 0),
      ),
    },
    { id: 'files', key: 'files', label: 'Injected files', tokens: 0, count: 0, items: [] },
    {
      id: 'tools',
      key: 'tools',
      label: 'Tools',
      tokens: builtinGroup?.tokens ?? 0,
      count: builtinGroup?.tools.length ?? 0,
      items: limit([...(builtinGroup?.tools ?? [])]),
    },
    ...toolGroups
      .filter((group) => group.source !== 'builtin')
      .map((group) => ({
        id: group.source,
        key: group.source,
        label: `MCP server ${group.source.slice(4)}`,
        tokens: group.tokens,
        count: group.tools.length,
        items: limit([...group.tools]),
      })),
    { id: 'dynamic', key: 'dynamic', label: 'Dynamic instructions', tokens: 0, items: [] },
    {
      id: 'messages',
      key: 'messages',
      label: 'Messages',
      tokens: messagesTokens + overheadTokens,
      count: messages.length,
      items: limit(perMessage),
    },
  ];
  categories.sort(byTokens);
  const totalTokens = categories.reduce((sum, category) => sum + category.tokens, 0);
  return {
    ...base,
    totalTokens,
    percent: Math.round((totalTokens / threshold.compactThreshold) * 100),
    categories,
    breakdown: {
      system_prompt_tokens: systemTokens,
      system_prompt_parts: { base_and_sections: baseTokens, runtime_blocks: 0, instructions: instructionsTokens },
      injected_files: [] as Array<{ path: string; tokens: number }>,
      tool_groups: toolGroups,
      tools_total_tokens: toolsTotal,
      dynamic_instructions_tokens: 0,
      messages_tokens: messagesTokens,
      overhead_tokens: overheadTokens,
    },
  };
}
