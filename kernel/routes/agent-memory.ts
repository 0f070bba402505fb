/**
 * Memory routes (`/agents/{id}/memory`): the owner's view and control of an agent's long-term memory
 * (docs/memory.md). The owner's writes are not held to the agent's storage quota (as every owner write)
 * but refuse credential values as the agent's do.
 */
import { Type } from 'typebox';
import { AgentIdParams, errorResponses } from '@agt/contracts';
import { MAX_MEMORY_CHARS, type Memory } from '../memory/memory-store.js';
import type { SearchHit } from '../memory/service.js';
import type { ChangelogEntry } from '../memory/changelog-store.js';
import { bodyOptional } from './control.js';
import type { KernelRoutes } from './plugin.js';

const TAGS = ['Memory'];
const Kind = Type.Union([
  Type.Literal('fact'),
  Type.Literal('episode'),
  Type.Literal('summary'),
  Type.Literal('instruction'),
]);
const MemoryView = Type.Object({
  id: Type.Integer(),
  text: Type.String(),
  kind: Kind,
  source: Type.Union([
    Type.Literal('agent'),
    Type.Literal('owner'),
    Type.Literal('compaction'),
    Type.Literal('consolidation'),
  ]),
  loop: Type.Union([Type.String(), Type.Null()]),
  turn_id: Type.Union([Type.String(), Type.Null()]),
  row_id: Type.Union([Type.Integer(), Type.Null()], { description: 'the conversation row it came from' }),
  pinned: Type.Boolean(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  used_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'last recalled or found by the agent',
  }),
  forgotten_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});
const Hit = Type.Object({
  memory: MemoryView,
  score: Type.Number({ description: 'fused score (reciprocal rank fusion with recency); higher is better' }),
  text_rank: Type.Optional(Type.Integer({ description: 'rank in the full-text (BM25) results' })),
  distance: Type.Optional(Type.Number({ description: 'cosine distance of the vector match' })),
});
const Status = Type.Object({
  live: Type.Integer(),
  forgotten: Type.Integer(),
  pinned: Type.Integer(),
  embeddings: Type.Object({
    configured: Type.Boolean({ description: 'settings memory.embeddings is set' }),
    model: Type.Union([Type.String(), Type.Null()], {
      description: '`provider/model/dimensions` the stored vectors were made with',
    }),
    embedded: Type.Integer(),
    pending: Type.Integer({ description: 'live memories without a vector yet (embedded in the background)' }),
  }),
});
/** The answer of `GET /agents/{id}/memory` (exported for the clients' view check, test/http-api-views.ts). */
export const MemoryList = Type.Object({
  agentId: Type.String(),
  status: Status,
  memories: Type.Array(MemoryView),
  hits: Type.Optional(Type.Array(Hit)),
  mode: Type.Optional(Type.Union([Type.Literal('hybrid'), Type.Literal('fulltext')])),
  note: Type.Optional(Type.String()),
});
/** The answer of `POST` and `PATCH` of one memory. */
export const MemoryOne = Type.Object({ agentId: Type.String(), memory: MemoryView });
const IdParams = Type.Object({ id: Type.String({ minLength: 1 }), memoryId: Type.Integer({ minimum: 1 }) });
const Text = Type.String({ minLength: 1, maxLength: MAX_MEMORY_CHARS });

const Change = Type.Object({
  id: Type.Integer(),
  run_id: Type.String({ description: 'the consolidation run that wrote it' }),
  action: Type.Union([Type.Literal('merge'), Type.Literal('update'), Type.Literal('forget'), Type.Literal('refused')]),
  memory_id: Type.Union([Type.Integer(), Type.Null()], {
    description: 'merge: the new memory; update: the updated one',
  }),
  from_ids: Type.Array(Type.Integer(), {
    description: 'the memories merged, updated or forgotten (refused: the ids the model named)',
  }),
  reason: Type.String({ description: "the model's reason, or why the proposal was refused" }),
  detail: Type.Union([Type.String(), Type.Null()], {
    description: 'update: the previous text; refused: the proposal as the model wrote it',
  }),
  created_at: Type.String({ format: 'date-time' }),
});
/** The answer of `GET /agents/{id}/memory/changelog`. */
export const MemoryChangelog = Type.Object({ agentId: Type.String(), changes: Type.Array(Change) });

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const view = (m: Memory) => ({
  ...m,
  created_at: iso(m.created_at)!,
  updated_at: iso(m.updated_at)!,
  used_at: iso(m.used_at),
  forgotten_at: iso(m.forgotten_at),
});
const hitView = (h: SearchHit) => ({
  memory: view(h.memory),
  score: h.score,
  ...(h.text_rank !== undefined ? { text_rank: h.text_rank } : {}),
  ...(h.distance !== undefined ? { distance: h.distance } : {}),
});

const changeView = (c: ChangelogEntry) => ({ ...c, created_at: iso(c.created_at)! });

export const agentMemoryRoutes: KernelRoutes<'registry' | 'runtime'> = async (app, { services }) => {
  const { registry, runtime } = services;
  const memory = runtime.memory;

  app.get(
    '/memory',
    {
      schema: {
        tags: TAGS,
        summary: "List the agent's memories (newest first), or search them with `q`",
        description:
          'With `q`: hybrid search (full-text BM25 and, with settings memory.embeddings, vectors; fused by reciprocal rank with recency); `mode` says which ran and `note` why it was full-text only. Searching as the owner does not mark memories used.',
        params: AgentIdParams,
        querystring: Type.Object({
          q: Type.Optional(Type.String({ minLength: 1, maxLength: 2_000 })),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
          before: Type.Optional(Type.Integer({ minimum: 1, description: 'list: only ids below this (paging)' })),
          kind: Type.Optional(Kind),
          pinned: Type.Optional(Type.Boolean()),
          forgotten: Type.Optional(Type.Boolean({ description: 'list the forgotten memories instead (kept 30 days)' })),
        }),
        response: { 200: MemoryList, ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      const agent = registry.resolve(request.params.id);
      const { q, limit = 50, before, kind, pinned, forgotten } = request.query;
      const status = memory.status(agent);
      if (q !== undefined) {
        const result = await memory.search(agent, q, { limit });
        return {
          agentId: agent.id,
          status,
          memories: result.hits.map((h) => view(h.memory)),
          hits: result.hits.map(hitView),
          mode: result.mode,
          ...(result.note ? { note: result.note } : {}),
        };
      }
      const list = agent.file.memory.list({
        limit,
        ...(before !== undefined ? { before } : {}),
        ...(kind ? { kind } : {}),
        ...(pinned !== undefined ? { pinned } : {}),
        ...(forgotten ? { forgotten } : {}),
      });
      return { agentId: agent.id, status, memories: list.map(view) };
    },
  );

  app.post(
    '/memory',
    {
      schema: {
        tags: TAGS,
        summary: 'Add a memory (403 key_material_refused when the text holds a credential value)',
        params: AgentIdParams,
        body: Type.Object(
          { text: Text, kind: Type.Optional(Kind), pinned: Type.Optional(Type.Boolean()) },
          { additionalProperties: false },
        ),
        response: { 201: MemoryOne, ...errorResponses(404, 409) },
      },
    },
    async (request, reply) => {
      const agent = registry.resolve(request.params.id);
      const saved = await memory.save(agent, {
        text: request.body.text,
        ...(request.body.kind ? { kind: request.body.kind } : {}),
        pinned: request.body.pinned === true,
        source: 'owner',
      });
      return reply.code(201).send({ agentId: agent.id, memory: view(saved) });
    },
  );

  app.patch(
    '/memory/:memoryId',
    {
      schema: {
        tags: TAGS,
        summary: "Change a memory's text, kind or pin (a new text is embedded again)",
        params: IdParams,
        body: Type.Object(
          { text: Type.Optional(Text), kind: Type.Optional(Kind), pinned: Type.Optional(Type.Boolean()) },
          { additionalProperties: false, minProperties: 1 },
        ),
        response: { 200: MemoryOne, ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      const agent = registry.resolve(request.params.id);
      const secrets = request.body.text === undefined ? [] : await memory.secretsOf(agent);
      return { agentId: agent.id, memory: view(memory.update(agent, request.params.memoryId, request.body, secrets)) };
    },
  );

  app.delete(
    '/memory/:memoryId',
    {
      schema: {
        tags: TAGS,
        summary: 'Forget a memory (kept as forgotten for 30 days), or delete it at once with `purge=true`',
        params: IdParams,
        querystring: Type.Object({ purge: Type.Optional(Type.Boolean()) }),
        response: {
          200: Type.Object({ agentId: Type.String(), success: Type.Boolean() }),
          ...errorResponses(404, 409),
        },
      },
    },
    async (request) => {
      const agent = registry.resolve(request.params.id);
      memory.forget(agent, request.params.memoryId, 'owner', { purge: request.query.purge === true });
      return { agentId: agent.id, success: true };
    },
  );

  app.get(
    '/memory/changelog',
    {
      schema: {
        tags: TAGS,
        summary: 'What memory consolidation changed and refused, newest first',
        params: AgentIdParams,
        querystring: Type.Object({
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
          before: Type.Optional(Type.Integer({ minimum: 1, description: 'only ids below this (paging)' })),
        }),
        response: { 200: MemoryChangelog, ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      const agent = registry.resolve(request.params.id);
      return {
        agentId: agent.id,
        changes: agent.file.memory.changelog.list(request.query.limit ?? 100, request.query.before).map(changeView),
      };
    },
  );

  app.post(
    '/memory/consolidate',
    {
      preValidation: bodyOptional,
      schema: {
        tags: TAGS,
        summary: "Run memory consolidation now, on the agent's model and under its budgets",
        description:
          'Merges duplicates and updates stale memories as the model proposes, after checking every proposal; pinned memories are never touched. Runs whether or not `memory.consolidation.enabled` schedules it. 409 while a run is going, 502 when the model call fails (memories unchanged), 503 when no provider serves the model.',
        params: AgentIdParams,
        body: Type.Object({}, { additionalProperties: false, description: 'optional: a bodiless POST is fine' }),
        response: {
          200: Type.Object({
            agentId: Type.String(),
            run_id: Type.String(),
            offered: Type.Integer({ description: 'memories shown to the model' }),
            changes: Type.Array(Change),
          }),
          ...errorResponses(404, 409, 429, 502, 503),
        },
      },
    },
    async (request) => {
      const agentRuntime = runtime.forRequest(request.params.id);
      const result = await agentRuntime.consolidation.run();
      return {
        agentId: agentRuntime.id,
        run_id: result.run_id,
        offered: result.offered,
        changes: result.changes.map(changeView),
      };
    },
  );
};
