/** Log routes (`/agents/{id}/logs`, `/logs/after`) and the usage rollup (`/agents/{id}/usage`). */
import { Type } from 'typebox';
import { LogEntry, UsageRollup } from '../http-api/agents-api.js';
import { AgentIdParams, AgentSuccess, errorResponses } from '@agt/contracts';
import type { KernelRoutes } from './plugin.js';
import { agentSpend } from '../spend/views.js';

const TAGS = ['Agents'];
export const LogsReply = Type.Object({ agentId: Type.String(), logs: Type.Array(LogEntry) });

/** Log limits are clamped, not refused (a client asking for too many still gets an answer): default 50, range 1-500. */
export const clampLogLimit = (limit: number | undefined) => Math.min(500, Math.max(1, limit ?? 50));

const filters = {
  limit: Type.Optional(Type.Integer({ description: 'default 50, clamped to 1-500' })),
  origin: Type.Optional(Type.String()),
  event: Type.Optional(Type.String()),
};

export const agentLogRoutes: KernelRoutes<'registry' | 'runtime'> = async (app, { services }) => {
  const registry = services.registry;

  app.get(
    '/logs',
    {
      schema: {
        tags: TAGS,
        summary: 'The newest log rows, oldest first (newest last)',
        params: AgentIdParams,
        querystring: Type.Object(filters),
        response: { 200: LogsReply, ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      const agent = registry.resolve(request.params.id);
      const { limit, origin, event } = request.query;
      return { agentId: agent.id, logs: agent.file.logs.list(clampLogLimit(limit), { origin, event }) };
    },
  );

  app.get(
    '/logs/after',
    {
      schema: {
        tags: TAGS,
        summary: 'Log rows with id greater than `afterId`, oldest first (tailing)',
        params: AgentIdParams,
        querystring: Type.Object({ afterId: Type.Integer(), ...filters }),
        response: { 200: LogsReply, ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      const agent = registry.resolve(request.params.id);
      const { afterId, limit, origin, event } = request.query;
      return { agentId: agent.id, logs: agent.file.logs.after(afterId, clampLogLimit(limit), { origin, event }) };
    },
  );

  app.delete(
    '/logs',
    {
      schema: {
        tags: TAGS,
        summary: 'Delete every log row',
        params: AgentIdParams,
        response: { 200: AgentSuccess, ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      const agent = registry.resolve(request.params.id);
      agent.file.logs.clear();
      return { agentId: agent.id, success: true };
    },
  );

  app.get(
    '/usage',
    {
      schema: {
        tags: TAGS,
        summary:
          'Token usage rolled up from agt_loop, plus the spend ledger (cost_usd, spend) and the budgets now (docs/costs.md)',
        params: AgentIdParams,
        response: { 200: UsageRollup, ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      const agent = registry.resolve(request.params.id);
      return { agentId: agent.id, ...agent.file.usage(), ...agentSpend(services.runtime.governor, agent) };
    },
  );
};
