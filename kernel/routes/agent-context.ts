/**
 * `GET /agents/{id}/context`: how full one loop's context is. The
 * estimate and its categories are described in kernel/runtime/loops/context-usage.ts.
 */
import { Type } from 'typebox';
import { LOOP_NAME_PATTERN } from '../agents/config-schema.js';
import { type AgentConfig, AgentIdParams, errorResponses } from '@agt/contracts';
import { loopInstructions } from '../runtime/executor/loop-setup.js';
import { MAX_CONTEXT_ROWS } from '../runtime/types.js';
import { contextUsage, DEFAULT_CONTEXT_ITEMS, MAX_CONTEXT_ITEMS } from '../runtime/loops/context-usage.js';
import { agentToolDefinitions } from '../runtime/loops/declaration.js';
import type { KernelRoutes } from './plugin.js';
import { noSuchLoop } from '../runtime/errors.js';

const Item = Type.Object({ name: Type.String(), tokens: Type.Integer(), detail: Type.Optional(Type.String()) });
const Category = Type.Object({
  id: Type.String({ description: 'the key, or mcp:<server>' }),
  key: Type.String(),
  label: Type.String(),
  tokens: Type.Integer(),
  count: Type.Optional(Type.Integer()),
  items: Type.Array(Item),
});
const Named = Type.Object({ name: Type.String(), tokens: Type.Integer() });
const Breakdown = Type.Object({
  system_prompt_tokens: Type.Integer(),
  system_prompt_parts: Type.Object({
    base_and_sections: Type.Integer(),
    runtime_blocks: Type.Integer(),
    instructions: Type.Integer(),
  }),
  injected_files: Type.Array(Type.Object({ path: Type.String(), tokens: Type.Integer() })),
  tool_groups: Type.Array(Type.Object({ source: Type.String(), tokens: Type.Integer(), tools: Type.Array(Named) })),
  tools_total_tokens: Type.Integer(),
  dynamic_instructions_tokens: Type.Integer(),
  messages_tokens: Type.Integer(),
  overhead_tokens: Type.Integer(),
});
const ContextUsage = Type.Object({
  agentId: Type.String(),
  loop: Type.String(),
  available: Type.Boolean({
    description: 'false when the loop has no live executor (disabled, never woken, or put to sleep)',
  }),
  compactThreshold: Type.Integer(),
  compactThresholdSource: Type.Union([
    Type.Literal('loop'),
    Type.Literal('agent'),
    Type.Literal('model'),
    Type.Literal('default'),
  ]),
  agentCompactThreshold: Type.Integer(),
  totalTokens: Type.Union([Type.Integer(), Type.Null()]),
  percent: Type.Union([Type.Integer(), Type.Null()]),
  categories: Type.Array(Category),
  note: Type.String(),
  breakdown: Type.Union([Breakdown, Type.Null()]),
  computed_at: Type.Integer(),
});

export const agentContextRoutes: KernelRoutes<'builtinTools' | 'contributions' | 'registry' | 'runtime'> = async (
  app,
  { services },
) => {
  const service = services.runtime;
  app.get(
    '/context',
    {
      schema: {
        tags: ['Loops'],
        summary: 'Context usage of a loop: estimated tokens by category against its compact threshold',
        description:
          'Tokens are estimated as ceil(characters / 4). Categories (system, files, tools, mcp:<server>, dynamic, messages) do not overlap, are ordered biggest first and sum to totalTokens; `items` (default 12, max 200) caps the entries listed per category. compactThreshold: the loop’s `compact_threshold`, else the agent’s `context.compact_threshold`, else the model’s, else 100000.',
        params: AgentIdParams,
        querystring: Type.Object({
          loop: Type.Optional(Type.String({ pattern: LOOP_NAME_PATTERN })),
          items: Type.Optional(Type.Integer({ minimum: 0 })),
        }),
        response: { 200: ContextUsage, ...errorResponses(404) },
      },
    },
    async (request) => {
      const agent = services.registry.resolve(request.params.id);
      const loop = request.query.loop ?? 'main';
      const config = agent.config as AgentConfig;
      const declared = loop === 'main' ? undefined : config.loops?.find((l) => l.name === loop);
      if (loop !== 'main' && !declared) throw noSuchLoop(agent.name, loop);
      const executor = service.byId(agent.id)?.existingLoop(loop);
      const live = executor !== undefined && (loop === 'main' || declared?.enabled === true);
      const system = loopInstructions(agent, loop);
      const goal = declared?.goal ?? '';
      const definitions = live
        ? await agentToolDefinitions(
            services.builtinTools,
            (id, taken) => services.contributions.toolsFor(id, taken),
            agent.id,
          )
        : [];
      const usage = contextUsage({
        config: agent.config as AgentConfig,
        loop,
        live,
        system,
        systemBase: loop === 'main' ? '' : system.slice(0, Math.max(0, system.length - goal.length)),
        definitions,
        rows: live ? agent.file.loop.tail(loop, MAX_CONTEXT_ROWS) : [],
        items: Math.min(MAX_CONTEXT_ITEMS, request.query.items ?? DEFAULT_CONTEXT_ITEMS),
        now: Date.now(),
      });
      return { agentId: agent.id, ...usage };
    },
  );
};
