/**
 * `memory_*` tools: the agent's own long-term memory (docs/memory.md). Saves are held to the agent's
 * storage quota and refuse credential values; search is hybrid (full-text and, with an embedding model,
 * vectors); forgetting keeps the memory as forgotten for the owner, out of every search.
 */
import { Type } from 'typebox';
import type { ToolDefinition } from '@agt/contracts';
import { MAX_MEMORY_CHARS } from '../../memory/memory-store.js';
import type { MemoryService } from '../../memory/service.js';
import type { AgentRuntime } from '../agent-runtime.js';
import { builtin, json, type RuntimeLookup } from './define.js';
import { toolAgentNotRunning } from './errors.js';

const Kind = Type.Union(
  [Type.Literal('fact'), Type.Literal('episode'), Type.Literal('summary'), Type.Literal('instruction')],
  { description: 'fact (default), episode, summary or instruction' },
);

function memoryOf(runtime: AgentRuntime): MemoryService {
  if (!runtime.memory) throw toolAgentNotRunning(runtime.id);
  return runtime.memory;
}

export function memoryTools(lookup: RuntimeLookup): ToolDefinition[] {
  return [
    builtin(
      {
        name: 'memory_save',
        description:
          'Save something worth remembering beyond this conversation (a fact, a preference, an instruction, what happened). It is searchable later and may be recalled before later turns. Never save passwords, keys or tokens.',
        input: Type.Object({
          text: Type.String({ minLength: 1, maxLength: MAX_MEMORY_CHARS }),
          kind: Type.Optional(Kind),
        }),
        async run(runtime, { text, kind }, context) {
          const memory = await memoryOf(runtime).save(
            runtime.agent,
            { text, ...(kind ? { kind } : {}), source: 'agent', loop: context.loop, turnId: context.turnId ?? null },
            { quota: true },
          );
          return json({ id: memory.id, kind: memory.kind, saved: true });
        },
      },
      lookup,
    ),
    builtin(
      {
        name: 'memory_search',
        description: 'Search your long-term memory by meaning and words; best matches first, with their ids.',
        input: Type.Object({
          query: Type.String({ minLength: 1, maxLength: 2_000 }),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
        }),
        async run(runtime, { query, limit }, context) {
          const result = await memoryOf(runtime).search(runtime.agent, query, {
            limit: limit ?? 8,
            touch: true,
            signal: context.signal,
            ...(context.turnId ? { turnId: context.turnId } : {}),
            loop: context.loop,
          });
          return json({
            mode: result.mode,
            ...(result.note ? { note: result.note } : {}),
            memories: result.hits.map((h) => ({
              id: h.id,
              text: h.memory.text,
              kind: h.memory.kind,
              pinned: h.memory.pinned,
              created_at: new Date(h.memory.created_at).toISOString(),
            })),
          });
        },
      },
      lookup,
    ),
    builtin(
      {
        name: 'memory_forget',
        description: 'Forget one of your memories by id (it leaves every search and recall).',
        input: Type.Object({ id: Type.Integer({ minimum: 1 }) }),
        run(runtime, { id }) {
          memoryOf(runtime).forget(runtime.agent, id, 'agent');
          return `forgot memory ${id}`;
        },
      },
      lookup,
    ),
  ];
}
