/**
 * Table routes (`/agents/{id}/tables`): list every table with its row count; read `local_*` tables and
 * `agt_audit` a page at a time; drop `local_*` tables. The inbox and outbox are read through their own
 * routes. Names are validated in kernel/agents/stores/local-tables.ts before any SQL sees them.
 *
 * None of them blocks the event loop on the agent's data: `local_*` tables are counted, read and dropped
 * in the agent's SQL child, daemon tables walked in short slices, all under the agent's
 * `limits.sql_timeout_ms` (see local-tables.ts). A count past the limit is `row_count: null`.
 */
import { Type } from 'typebox';
import { AgentIdParams, AgentSuccess, errorResponses } from '@agt/contracts';
import type { LoadedAgent } from '../agents/loaded-agent.js';
import { SQL_DEFAULT_TIMEOUT_MS } from '../runtime/sql-sandbox/sql-runner.js';
import { limitOf } from '../runtime/types.js';
import type { KernelRoutes } from './plugin.js';
import { agentLoadingOrUnloading } from '../runtime/errors.js';

const TAGS = ['Agents'];
const TableParams = Type.Object({
  id: Type.String({ minLength: 1 }),
  table: Type.String({ minLength: 1, maxLength: 128 }),
});

export const agentTableRoutes: KernelRoutes<'registry' | 'runtime'> = async (app, { services }) => {
  const registry = services.registry;
  /** The agent's SQL child and its time limit. */
  const sandbox = (agent: LoadedAgent) => {
    const runtime = services.runtime.byId(agent.id);
    if (!runtime) throw agentLoadingOrUnloading(agent.name);
    return { local: runtime.sql, timeoutMs: limitOf(agent.config, 'sql_timeout_ms', SQL_DEFAULT_TIMEOUT_MS) };
  };

  app.get(
    '/tables',
    {
      schema: {
        tags: TAGS,
        summary:
          "Tables of the agent file with row counts (`row_count` null when counting passed the agent's `limits.sql_timeout_ms`)",
        params: AgentIdParams,
        response: {
          200: Type.Object({
            agentId: Type.String(),
            tables: Type.Array(
              Type.Object({
                name: Type.String(),
                row_count: Type.Union([Type.Integer(), Type.Null()], {
                  description: "null when counting did not finish within the agent's SQL time limit",
                }),
              }),
            ),
          }),
          ...errorResponses(404, 409, 503),
        },
      },
    },
    async (request) => {
      const agent = registry.resolve(request.params.id);
      const { local, timeoutMs } = sandbox(agent);
      return { agentId: agent.id, tables: await agent.file.tables.list(local, timeoutMs) };
    },
  );

  app.get(
    '/tables/:table',
    {
      schema: {
        tags: TAGS,
        summary:
          "Rows of a `local_*` table or `agt_audit` (400 `Invalid table name` otherwise; BLOBs as base64; at most 1 MB of JSON, `truncated` beyond; 504 past the agent's `limits.sql_timeout_ms`)",
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
            truncated: Type.Boolean({
              description:
                'true when the page stopped at 1 MB of JSON before `limit` rows; go on at offset + rows.length',
            }),
          }),
          ...errorResponses(404, 409, 503, 504),
        },
      },
    },
    async (request) => {
      const agent = registry.resolve(request.params.id);
      const { local, timeoutMs } = sandbox(agent);
      const page = await agent.file.tables.read(
        request.params.table,
        request.query.limit ?? 100,
        request.query.offset ?? 0,
        local,
        timeoutMs,
      );
      return { agentId: agent.id, ...page };
    },
  );

  app.delete(
    '/tables/:table',
    {
      schema: {
        tags: TAGS,
        summary:
          "Drop a `local_*` table (`success` false when it does not exist; 400 for any other name; 504 past the agent's `limits.sql_timeout_ms`, nothing dropped)",
        params: TableParams,
        response: { 200: AgentSuccess, ...errorResponses(404, 409, 503, 504) },
      },
    },
    async (request) => {
      const agent = registry.resolve(request.params.id);
      const { local, timeoutMs } = sandbox(agent);
      return { agentId: agent.id, success: await agent.file.tables.drop(request.params.table, local, timeoutMs) };
    },
  );
};
