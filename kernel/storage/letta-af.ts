/**
 * Letta's Agent File (`.af`, github.com/letta-ai/agent-file): export an agt agent to it and import one
 * into a new agt agent. Written from the published schema (the current multi-agent layout
 * `{agents, blocks, tools, groups, files, sources, mcp_servers}` with ids such as `agent-0`, `block-0`,
 * `tool-0`; the older single-agent layout with `core_memory` and `in_context_message_indices` is read
 * too). What maps and what does not is in docs/backups.md ("Agent File (.af)").
 *
 * Import, mapped: name, description, system (→ instructions), llm_config.model (→ model.model_id),
 * memory blocks (→ stored files `memory/<label>.md`, `read_only` → protection readonly; limits and
 * descriptions kept in meta `letta.blocks`; and each → a pinned memory, as Letta keeps its blocks in
 * every prompt: {@link blockKind}), user and assistant text messages (→ main's loop rows, in
 * order), tool names (agt's built-in tools of the same name are enabled; the others listed in meta
 * `letta.tools`, never run: Letta tools are Python source). Not mapped: tool source code, tool rules,
 * tool calls and returns in the history, environment variables and secrets, embedding config,
 * groups, files, sources, MCP servers, passages.
 */
import { Type, type Static } from 'typebox';
import type { AgentConfig, ToolDefinition } from '@agt/contracts';
import type { LoadedAgent } from '../agents/loaded-agent.js';
import { MEMORY_KINDS, type MemoryKind } from '../memory/memory-store.js';
import { agentFileFormatInvalid } from './errors.js';

/** The largest .af file imported (messages included). */
export const AF_MAX_BYTES = 32 * 1024 * 1024;
const MEMORY_PREFIX = 'memory/';
const DEFAULT_BLOCK_LIMIT = 20_000;
/** The most pinned memories exported as blocks (every one of them is in each of the agent's prompts). */
const MAX_PINNED_BLOCKS = 1_000;

const Text = Type.Object({ type: Type.String(), text: Type.Optional(Type.String()) }, { additionalProperties: true });
const Message = Type.Object(
  {
    role: Type.String(),
    content: Type.Optional(Type.Union([Type.String(), Type.Array(Text), Type.Null()])),
    text: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    created_at: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  },
  { additionalProperties: true },
);
const Block = Type.Object(
  {
    id: Type.Optional(Type.String()),
    label: Type.String({ minLength: 1, maxLength: 200 }),
    value: Type.String(),
    limit: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
    description: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    read_only: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    metadata: Type.Optional(Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()])),
  },
  { additionalProperties: true },
);
const Tool = Type.Object(
  { id: Type.Optional(Type.String()), name: Type.String({ minLength: 1 }) },
  { additionalProperties: true },
);
const Agent = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    system: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    llm_config: Type.Optional(
      Type.Union([Type.Object({ model: Type.Optional(Type.String()) }, { additionalProperties: true }), Type.Null()]),
    ),
    block_ids: Type.Optional(Type.Union([Type.Array(Type.String()), Type.Null()])),
    tool_ids: Type.Optional(Type.Union([Type.Array(Type.String()), Type.Null()])),
    messages: Type.Optional(Type.Union([Type.Array(Message), Type.Null()])),
    core_memory: Type.Optional(Type.Union([Type.Array(Block), Type.Null()])),
    tools: Type.Optional(Type.Union([Type.Array(Tool), Type.Null()])),
  },
  { additionalProperties: true },
);
export const AgentFileDocument = Type.Object(
  {
    agents: Type.Optional(Type.Array(Agent, { minItems: 1 })),
    blocks: Type.Optional(Type.Array(Block)),
    tools: Type.Optional(Type.Array(Tool)),
  },
  { additionalProperties: true },
);
type AfAgent = Static<typeof Agent>;
type AfBlock = Static<typeof Block>;
type AfMessage = Static<typeof Message>;

/** What an import writes, read from the document (the caller creates the agent and writes it). */
export interface AfImport {
  name: string;
  description: string;
  instructions: string | null;
  model: string | null;
  blocks: Array<{
    label: string;
    value: string;
    limit: number;
    description: string | null;
    readOnly: boolean;
    kind: MemoryKind;
  }>;
  messages: Array<{ role: 'user' | 'assistant'; text: string; createdAt: number | null }>;
  toolNames: string[];
  /** What was left out, for the answer (counts by kind). */
  skipped: Record<string, number>;
}

function textOf(message: AfMessage): string {
  if (typeof message.content === 'string') return message.content;
  if (Array.isArray(message.content))
    return message.content
      .filter((part) => part.type === 'text' && typeof part.text === 'string')
      .map((part) => part.text)
      .join('\n');
  return typeof message.text === 'string' ? message.text : '';
}

/**
 * The memory kind of a block: what agt wrote in its `metadata.agt.kind` on export, else `instruction`
 * for Letta's `persona` (how the agent is to behave) and `fact` for every other block (`human`, ...).
 */
export function blockKind(block: AfBlock): MemoryKind {
  const agt = (block.metadata as { agt?: { kind?: unknown } } | null | undefined)?.agt;
  if (typeof agt?.kind === 'string' && (MEMORY_KINDS as readonly string[]).includes(agt.kind))
    return agt.kind as MemoryKind;
  return block.label === 'persona' ? 'instruction' : 'fact';
}

/** Reads a parsed .af document (either layout): the first agent and what it refers to. */
export function readAgentFile(document: unknown): AfImport {
  if (typeof document !== 'object' || document === null || Array.isArray(document))
    throw agentFileFormatInvalid('the document is not a JSON object');
  const root = document as Static<typeof AgentFileDocument> & AfAgent;
  const multi = Array.isArray(root.agents);
  const agent: AfAgent | undefined = multi ? root.agents![0] : root;
  if (!agent || typeof agent.name !== 'string' || agent.name.trim() === '')
    throw agentFileFormatInvalid('no agent with a name (agents[0].name)');
  const skipped: Record<string, number> = {};
  const skip = (what: string, count = 1) => void (skipped[what] = (skipped[what] ?? 0) + count);
  if (multi && root.agents!.length > 1) skip('agents', root.agents!.length - 1);

  const blockById = new Map((Array.isArray(root.blocks) ? root.blocks : []).map((block) => [block.id, block]));
  const blocks: AfBlock[] = multi
    ? (agent.block_ids ?? []).map((id) => blockById.get(id)).filter((b): b is AfBlock => b !== undefined)
    : (agent.core_memory ?? []);
  const toolById = new Map((Array.isArray(root.tools) ? root.tools : []).map((tool) => [tool.id, tool]));
  const tools =
    multi && Array.isArray(agent.tool_ids)
      ? agent.tool_ids.map((id) => toolById.get(id)).filter((t) => t !== undefined)
      : (agent.tools ?? []);

  const messages: AfImport['messages'] = [];
  for (const message of agent.messages ?? []) {
    const text = textOf(message);
    if ((message.role === 'user' || message.role === 'assistant') && text !== '') {
      const at = message.created_at ? Date.parse(message.created_at) : NaN;
      messages.push({ role: message.role, text, createdAt: Number.isFinite(at) ? at : null });
    } else skip(`messages:${message.role}`);
  }
  for (const key of ['groups', 'files', 'sources', 'mcp_servers'] as const) {
    const list = (root as Record<string, unknown>)[key];
    if (Array.isArray(list) && list.length > 0) skip(key, list.length);
  }
  const labels = new Set<string>();
  return {
    name: agent.name.trim(),
    description: typeof agent.description === 'string' ? agent.description : '',
    instructions: typeof agent.system === 'string' && agent.system !== '' ? agent.system : null,
    model: typeof agent.llm_config?.model === 'string' ? agent.llm_config.model : null,
    blocks: blocks
      .filter(
        (block) =>
          typeof block.label === 'string' &&
          /^[A-Za-z0-9_.-]{1,100}$/.test(block.label) &&
          !labels.has(block.label) &&
          labels.add(block.label),
      )
      .map((block) => ({
        label: block.label,
        value: String(block.value ?? ''),
        limit: typeof block.limit === 'number' ? block.limit : DEFAULT_BLOCK_LIMIT,
        description: typeof block.description === 'string' ? block.description : null,
        readOnly: block.read_only === true,
        kind: blockKind(block),
      })),
    messages,
    toolNames: [...new Set(tools.map((tool) => tool.name).filter((name): name is string => typeof name === 'string'))],
    skipped,
  };
}

/** Config changes of an import: instructions, description, model id, the built-in tools it names. */
export function importedConfig(
  base: Readonly<AgentConfig>,
  data: AfImport,
  builtin: readonly ToolDefinition[],
): AgentConfig {
  const known = new Set(builtin.map((tool) => tool.name));
  const tools = [...(base.tools ?? [])];
  for (const name of data.toolNames) {
    if (!known.has(name) || tools.some((tool) => tool.name === name)) continue;
    tools.push({ name, enabled: true });
  }
  return {
    ...base,
    description: data.description || base.description,
    instructions: data.instructions ?? base.instructions,
    model: data.model ? { ...base.model, model_id: data.model } : base.model,
    tools,
  } as AgentConfig;
}

/** The agent as a .af document (the current multi-agent layout, one agent). */
export function exportAgentFile(agent: LoadedAgent, builtin: readonly ToolDefinition[]): Record<string, unknown> {
  const config = agent.fileConfig;
  const file = agent.file;
  const blockMeta = parseBlockMeta(file.meta.get('letta.blocks')?.value);
  const linked = new Set<number>();
  const fileBlocks = file.files.list(MEMORY_PREFIX.slice(0, -1)).map((info) => {
    const label = info.path.slice(MEMORY_PREFIX.length).replace(/\.md$/, '');
    const stored = file.files.read(info.path);
    const meta = blockMeta[label];
    // The memory an imported block became is what the agent and its owner keep up to date: its text wins.
    const memory = typeof meta?.memory_id === 'number' ? file.memory.get(meta.memory_id) : undefined;
    const live = memory && memory.forgotten_at === null ? memory : undefined;
    if (live) linked.add(live.id);
    const value = live ? live.text : stored ? stored.content.toString('utf8') : '';
    return {
      label,
      value,
      limit: Math.max(meta?.limit ?? DEFAULT_BLOCK_LIMIT, value.length),
      description: meta?.description ?? null,
      read_only: info.protection === 'readonly',
      is_template: false,
      metadata: live ? { agt: { memory_id: live.id, kind: live.kind } } : {},
    };
  });
  // Pinned memories are in every prompt, as Letta's blocks are: each one not already a block becomes one.
  const pinnedBlocks = file.memory
    .pinned(MAX_PINNED_BLOCKS)
    .filter((memory) => !linked.has(memory.id))
    .map((memory) => ({
      label: `memory_${memory.id}`,
      value: memory.text,
      limit: Math.max(DEFAULT_BLOCK_LIMIT, memory.text.length),
      description: `agt memory ${memory.id} (${memory.kind}, pinned)`,
      read_only: false,
      is_template: false,
      metadata: { agt: { memory_id: memory.id, kind: memory.kind } },
    }));
  const blocks = [...fileBlocks, ...pinnedBlocks].map((block, index) => ({ id: `block-${index}`, ...block }));
  const byName = new Map(builtin.map((tool) => [tool.name, tool]));
  const enabled = (config.tools ?? []).filter((tool) => tool.enabled && byName.has(tool.name));
  const tools = enabled.map((tool, index) => {
    const definition = byName.get(tool.name)!;
    return {
      id: `tool-${index}`,
      name: tool.name,
      description: definition.description,
      tool_type: 'external_agt',
      source_type: null,
      source_code: null,
      json_schema: {
        name: tool.name,
        description: definition.description,
        parameters: definition.inputSchema ?? { type: 'object', properties: {} },
      },
      tags: ['agt'],
    };
  });
  const rows = file.loop.list('main');
  const messages = rows
    .filter((row) => row.role === 'user' || row.role === 'assistant')
    .map((row, index) => {
      const content = row.content as { text?: unknown } | string | null;
      const text = typeof content === 'string' ? content : typeof content?.text === 'string' ? content.text : '';
      return {
        id: `message-${index}`,
        type: 'message',
        role: row.role,
        content: [{ type: 'text', text }],
        agent_id: 'agent-0',
        model: row.model,
        created_at: new Date(row.created_at).toISOString(),
        tool_calls: null,
        tool_call_id: null,
        tool_returns: [],
      };
    })
    .filter((message) => message.content[0]!.text !== '');
  return {
    agents: [
      {
        id: 'agent-0',
        name: config.name,
        description: config.description,
        system: config.instructions,
        agent_type: 'letta_v1_agent',
        tags: config.metadata?.tags ?? [],
        llm_config: {
          model: config.model.model_id,
          model_endpoint_type: config.model.provider,
          context_window: 128_000,
          temperature: config.model.temperature ?? 0.7,
        },
        block_ids: blocks.map((block) => block.id),
        tool_ids: tools.map((tool) => tool.id),
        tool_rules: [],
        messages,
        in_context_message_ids: messages.map((message) => message.id),
        tool_exec_environment_variables: {},
        metadata: { agt: { id: config.id, exported_at: new Date().toISOString() } },
      },
    ],
    blocks,
    tools,
    groups: [],
    files: [],
    sources: [],
    mcp_servers: [],
    metadata: { exported_by: 'agt' },
  };
}

type BlockMeta = Record<string, { limit?: number; description?: string | null; memory_id?: number }>;

export function parseBlockMeta(value: string | undefined): BlockMeta {
  if (!value) return {};
  try {
    const parsed = JSON.parse(value) as unknown;
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as BlockMeta) : {};
  } catch {
    return {};
  }
}

export { MEMORY_PREFIX };
