/**
 * `POST /agents/{id}/outbox`: the owner queues a message in an agent's outbox, sent as the agent would
 * with `msg_send` (same row, `outbox.queued` event, `on_outbox` trigger and outbound transport: a
 * channel's adapter, or the mesh signing it with the agent's key). For `agt send`. An agent whose
 * `messaging.mode` is `listen_only` does not send (403).
 */
import { Type } from 'typebox';
import { AgtError, AgentIdParams, errorResponses } from '@agt/contracts';
import type { KernelRoutes } from './plugin.js';

export const agentOutboxRoutes: KernelRoutes<'runtime'> = async (app, { services }) => {
  app.post(
    '/outbox',
    {
      schema: {
        tags: ['Chat'],
        summary: "Queue a message in the agent's outbox, as its msg_send tool does",
        description:
          '`channel` is a channel adapter type or `mesh`; `recipient` its address (for the mesh a DID or a handle); `data` extra transport fields (`{parent_id}` replies to an inbox message). 202 with the outbox row id: `GET /agents/{id}/outbox` shows whether it was delivered. 403 when `messaging.mode` is `listen_only`.',
        params: AgentIdParams,
        body: Type.Object(
          {
            text: Type.String({ minLength: 1, maxLength: 100_000 }),
            channel: Type.String({ minLength: 1, maxLength: 100 }),
            recipient: Type.Optional(Type.String({ maxLength: 500 })),
            data: Type.Optional(Type.Unknown()),
          },
          { additionalProperties: false },
        ),
        response: {
          202: Type.Object({ agentId: Type.String(), messageId: Type.Integer() }),
          ...errorResponses(403, 404, 409),
        },
      },
    },
    async (request, reply) => {
      const runtime = services.runtime.forRequest(request.params.id);
      if (runtime.agent.config.messaging?.mode === 'listen_only')
        throw new AgtError('forbidden', 'messaging.mode is listen_only: this agent does not send');
      const { text, channel, recipient, data } = request.body;
      const row = runtime.agent.file.outbox.insert({ channel, recipient: recipient ?? null, text, data });
      runtime.emit('outbox.queued', { messageId: row.id, channel: row.channel }, {});
      runtime.fire('on_outbox', { messageId: row.id, channel: row.channel, recipient: row.recipient, text: row.text });
      runtime.sendOutbound(row);
      return reply.status(202).send({ agentId: runtime.agent.id, messageId: row.id });
    },
  );
};
