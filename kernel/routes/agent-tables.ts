/**
 * Table routes (`/agents/{id}/tables`): list every table with its row count; read `local_*` tables and
 * `agt_audit` a page at a time; drop `local_*` tables. The inbox and outbox are read through their own
 * routes. Names are validated in kernel/agents/stores/local-tables.ts before any SQL sees them.
 */
import { Type } from 'typebox';
import { AgentSuccess, errorResponses } from '../../contracts/http.js';
import type { KernelRoutes } from './plugin.js';

const TAGS = ['Agents'];
const TableParams = Type.Object({ id: Type.String({ minLength: 1 }), table: Type.String({ minLength: 1, maxLength: 128 }) });

export const agentTableRoutes: KernelRoutes = async (app, { services }) => {
  const registry = services.registry;

  app.get(
    '/tables',
    {
      schema: {
        tags: TAGS,
        summary: 'Tables of the agent file with row counts',
        params: Type.Object({ id: Type.String({ minLength: 1 }) }),
        response: {
          200: Type.Object({ agentId: Type.String(), tables: Type.Array(Type.Object({ name: Type.String(), row_count: Type.Integer() })) }),
          ...errorResponses(404, 409),
        },
      },
    },
    async (request) => {
      const agent = registry.resolve(request.params.id);
      return { agentId: agent.id, tables: agent.file.tables.list() };
    },
  );

  app.get(
    '/tables/:table',
    {
      schema: {
        tags: TAGS,
        summary: 'Rows of a `local_*` table or `agt_audit` (400 `Invalid table name` otherwise; BLOBs as base64)',
        params: TableParams,
        querystring: Type.Object({
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
          // Bounded so a huge value is a 400, not a float that SQLite refuses.
          offset: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 })),
        }),
        response: {
          200: Type.Object({
            agentId: Type.String(),
            columns: Type.Array(Type.String()),
            rows: Type.Array(Type.Object({}, { additionalProperties: true })),
          }),
          ...errorResponses(404, 409),
        },
      },
    },
    async (request) => {
      const agent = registry.resolve(request.params.id);
      const page = agent.file.tables.read(request.params.table, request.query.limit ?? 100, request.query.offset ?? 0);
      return { agentId: agent.id, ...page };
    },
  );

  app.delete(
    '/tables/:table',
    {
      schema: {
        tags: TAGS,
        summary: 'Drop a `local_*` table (`success` false when it does not exist; 400 for any other name)',
        params: TableParams,
        response: { 200: AgentSuccess, ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      const agent = registry.resolve(request.params.id);
      return { agentId: agent.id, success: agent.file.tables.drop(request.params.table) };
    },
  );
};
