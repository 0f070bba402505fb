/**
 * `GET /tasks`: what waits for the owner across every loaded agent (pending approvals, asks and suspend
 * prompts), oldest first, so an operator (`agt approvals`) need not ask agent by agent. Each item names
 * the agent and the route that answers it.
 */
import { Type, type Static } from 'typebox';
import { PendingTask } from '../http-api/agents-api.js';
import { errorResponses } from '@agt/contracts';
import type { KernelRoutes } from './plugin.js';
import { pendingOf } from '../runtime/owner-tasks.js';

type Item = Static<typeof PendingTask>;

export const operatorTaskRoutes: KernelRoutes<'registry' | 'runtime'> = async (app, { services }) => {
  app.get(
    '',
    {
      schema: {
        tags: ['Tasks & approvals'],
        summary:
          'Everything waiting for the owner across loaded agents: pending approvals, asks and suspend prompts (oldest first)',
        description:
          'Answer them with POST /agents/{agentId}/tasks/{id}/resolve (approval), /agents/{agentId}/asks/{id}/respond (ask) and /agents/{agentId}/suspend/respond (suspend). `kind` narrows the list.',
        querystring: Type.Object({
          kind: Type.Optional(
            Type.Union([
              Type.Literal('approval'),
              Type.Literal('budget'),
              Type.Literal('ask'),
              Type.Literal('suspend'),
            ]),
          ),
        }),
        response: { 200: Type.Object({ tasks: Type.Array(PendingTask) }), ...errorResponses() },
      },
    },
    async (request) => {
      const wanted = request.query.kind;
      const items: Item[] = [];
      for (const agent of services.registry.list()) {
        const hil = services.runtime.byId(agent.id)?.hil;
        if (!hil) continue;
        // Budget tasks (docs/costs.md) are answered by the same resolve route, `amount` raising the limit.
        for (const task of pendingOf(agent.id, agent.name, hil)) if (!wanted || task.kind === wanted) items.push(task);
      }
      items.sort((a, b) => a.createdAt - b.createdAt);
      return { tasks: items };
    },
  );
};
