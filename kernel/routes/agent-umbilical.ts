/** The per-agent replay window: `GET /agents/{id}/umbilical/events` (see kernel/agents/umbilical.ts). */
import { Type } from 'typebox';
import { UmbilicalPage } from '../http-api/agents-api.js';
import { AgentIdParams, errorResponses } from '@agt/contracts';
import { UMBILICAL_DEFAULT_LIMIT, UMBILICAL_MAX_LIMIT } from '../agents/umbilical.js';
import type { KernelRoutes } from './plugin.js';

export const agentUmbilicalRoutes: KernelRoutes<'registry'> = async (app, { services }) => {
  app.get(
    '/umbilical/events',
    {
      schema: {
        tags: ['Events'],
        summary: "Replay the agent's recent events (opt-in: umbilical.log.enabled; in memory, bounded)",
        description:
          '`since_seq`: only events with a greater seq. `last_seq` is the highest seq returned, or the `since_seq` passed when nothing is new. `since_seq < oldest_seq - 1` means events were evicted since (re-snapshot). Payloads over 4 KB of JSON are replaced by `{_truncated: true, preview}` with `truncated: true`.',
        params: AgentIdParams,
        querystring: Type.Object({
          since_seq: Type.Optional(Type.Integer({ minimum: 0 })),
          limit: Type.Optional(
            Type.Integer({ minimum: 1, maximum: UMBILICAL_MAX_LIMIT, default: UMBILICAL_DEFAULT_LIMIT }),
          ),
        }),
        response: { 200: UmbilicalPage, ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      const agent = services.registry.resolve(request.params.id);
      return {
        agentId: agent.id,
        ...services.registry.umbilical.read(
          agent.id,
          request.query.since_seq,
          request.query.limit ?? UMBILICAL_DEFAULT_LIMIT,
        ),
      };
    },
  );
};
