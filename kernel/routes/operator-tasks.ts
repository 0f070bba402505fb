/**
 * `GET /tasks`: what waits for the owner across every loaded agent (pending approvals, asks and suspend
 * prompts), oldest first, so an operator (`agt approvals`) need not ask agent by agent. Each item names
 * the agent and the route that answers it.
 */
import { Type, type Static } from 'typebox';
import { PendingTask } from '../http-api/agents-api.js';
import { errorResponses } from '@agt/contracts';
import type { KernelRoutes } from './plugin.js';

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
        const base = { agentId: agent.id, agentName: agent.name };
        if (!wanted || wanted === 'approval' || wanted === 'budget') {
          for (const task of hil.listTasks('pending_approval', 500)) {
            // Budget tasks (docs/costs.md) are answered by the same resolve route, `amount` raising the limit.
            if (wanted && task.kind !== wanted) continue;
            items.push({
              kind: task.kind,
              id: task.id,
              ...base,
              loop: task.loop,
              turnId: task.turnId,
              createdAt: task.createdAt,
              tool: task.tool,
              args: task.args,
            });
          }
        }
        if (!wanted || wanted === 'ask') {
          for (const ask of hil.listAsks()) {
            items.push({
              kind: 'ask',
              id: ask.requestId,
              ...base,
              loop: ask.loop,
              turnId: ask.turnId,
              createdAt: ask.createdAt,
              question: ask.question,
              ...(ask.schema ? { schema: ask.schema } : {}),
            });
          }
        }
        if (!wanted || wanted === 'suspend') {
          for (const prompt of hil.listSuspends()) {
            items.push({
              kind: 'suspend',
              id: prompt.requestId,
              ...base,
              loop: prompt.loop,
              turnId: prompt.turnId,
              createdAt: prompt.createdAt,
              reason: prompt.reason,
            });
          }
        }
      }
      items.sort((a, b) => a.createdAt - b.createdAt);
      return { tasks: items };
    },
  );
};
