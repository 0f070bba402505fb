/**
 * The read side of the Loops route group: the durable loop page (`GET /agents/{id}/loop`), the loop
 * list with live status and one loop. Create/patch/delete live in loops-write.ts, context usage in
 * context.ts and compaction in compact.ts.
 */
import { Type, type Static } from 'typebox';
import { LOOP_NAME_PATTERN } from '../agents/config-schema.js';
import { type AgentConfig, AgentIdParams, errorResponses } from '@agt/contracts';
import { effectiveTools } from '../runtime/tools/effective.js';
import type { KernelServices } from '../services.js';
import type { KernelRoutes } from './plugin.js';
import type { LoadedAgent } from '../agents/loaded-agent.js';
import { noSuchLoop } from '../runtime/errors.js';

/** The kernel services this route group uses. */
type Uses = 'builtinTools' | 'registry' | 'runtime';

const TAGS = ['Loops'];
const LoopName = Type.String({ pattern: LOOP_NAME_PATTERN });

const LoopRowSchema = Type.Object(
  {
    id: Type.Integer(),
    loop: Type.String(),
    role: Type.String(),
    kind: Type.String(),
    content: Type.Unknown(),
    turn_id: Type.Union([Type.String(), Type.Null()]),
    model: Type.Union([Type.String(), Type.Null()]),
    provider: Type.Union([Type.String(), Type.Null()]),
    usage_input: Type.Union([Type.Integer(), Type.Null()]),
    usage_output: Type.Union([Type.Integer(), Type.Null()]),
    usage_cache_read: Type.Union([Type.Integer(), Type.Null()]),
    usage_cache_write: Type.Union([Type.Integer(), Type.Null()]),
    cost: Type.Union([Type.Number(), Type.Null()]),
    created_at: Type.Integer(),
  },
  { additionalProperties: false },
);

/** A page of a loop's rows (`GET /agents/{id}/loop`). */
export const LoopPage = Type.Object({
  agentId: Type.String(),
  loop: Type.String(),
  total: Type.Integer(),
  offset: Type.Integer(),
  rows: Type.Array(LoopRowSchema),
});

export const LoopItem = Type.Object(
  {
    name: Type.String(),
    goal: Type.Union([Type.String(), Type.Null()]),
    enabled: Type.Boolean(),
    autostart: Type.Optional(Type.Boolean()),
    autonomous: Type.Optional(Type.Boolean()),
    model: Type.Optional(Type.Unknown()),
    compact_threshold: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
    tools: Type.Optional(Type.Array(Type.String())),
    entryCount: Type.Integer({ description: 'rows in this loop’s agt_loop stream' }),
    effectiveTools: Type.Union([Type.Array(Type.String()), Type.Null()], {
      description: 'null for main: every enabled tool',
    }),
    state: Type.String({ description: 'executor state; `idle` when the loop has not run since load' }),
    running: Type.Boolean(),
    compacting: Type.Boolean({ description: 'a compaction holds the loop busy' }),
  },
  { additionalProperties: false },
);

const clamp = (value: number | undefined, fallback: number, min: number, max: number) =>
  Math.min(max, Math.max(min, value ?? fallback));

/** The loop's declaration and live status; 404 when the agent declares no such loop. */
export function describeLoop(services: Pick<KernelServices, Uses>, agent: LoadedAgent, name: string) {
  const config = agent.config as AgentConfig;
  const declared = name === 'main' ? undefined : config.loops?.find((loop) => loop.name === name);
  if (name !== 'main' && !declared) throw noSuchLoop(agent.name, name);
  const executor = services.runtime.byId(agent.id)?.existingLoop(name);
  const tools =
    name === 'main'
      ? null
      : effectiveTools(config, services.builtinTools, name)
          .filter((tool) => tool.enabled)
          .map((tool) => tool.def.name);
  return {
    ...(declared ?? { name: 'main', goal: null, enabled: true }),
    goal: declared?.goal ?? null,
    entryCount: agent.file.loop.count(name),
    effectiveTools: tools,
    state: executor?.state ?? 'idle',
    running: executor?.running ?? false,
    compacting: executor?.held ?? false,
  };
}

export const loopRoutes: KernelRoutes<Uses> = async (app, { services }) => {
  app.get(
    '/loop',
    {
      schema: {
        tags: TAGS,
        summary: 'A page of the loop stream (durable conversation history), oldest first',
        description: '`limit` is clamped to 1-500 (default 50); without `offset` the last page is returned.',
        params: AgentIdParams,
        querystring: Type.Object({
          limit: Type.Optional(Type.Integer()),
          offset: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
          loop: Type.Optional(LoopName),
        }),
        response: {
          200: LoopPage,
          ...errorResponses(404),
        },
      },
    },
    async (request) => {
      const agent = services.registry.resolve(request.params.id);
      const loop = request.query.loop ?? 'main';
      describeLoop(services, agent, loop);
      const limit = clamp(request.query.limit, 50, 1, 500);
      const total = agent.file.loop.count(loop);
      const offset = request.query.offset ?? Math.max(0, total - limit);
      const rows = agent.file.loop.list(loop, { limit, offset });
      return { agentId: agent.id, loop, total, offset, rows: rows as Array<Static<typeof LoopRowSchema>> };
    },
  );

  app.get(
    '/loops',
    {
      schema: {
        tags: TAGS,
        summary: 'main plus the inner loops, with declarations and live status',
        params: AgentIdParams,
        response: { 200: Type.Object({ agentId: Type.String(), loops: Type.Array(LoopItem) }), ...errorResponses(404) },
      },
    },
    async (request) => {
      const agent = services.registry.resolve(request.params.id);
      const names = ['main', ...((agent.config as AgentConfig).loops ?? []).map((loop) => loop.name)];
      return { agentId: agent.id, loops: names.map((name) => describeLoop(services, agent, name)) };
    },
  );

  app.get(
    '/loops/:name',
    {
      schema: {
        tags: TAGS,
        summary: 'One loop: its declaration and live status',
        params: Type.Intersect([AgentIdParams, Type.Object({ name: LoopName })]),
        response: { 200: Type.Intersect([Type.Object({ agentId: Type.String() }), LoopItem]), ...errorResponses(404) },
      },
    },
    async (request) => {
      const agent = services.registry.resolve(request.params.id);
      return { agentId: agent.id, ...describeLoop(services, agent, request.params.name) };
    },
  );
};
