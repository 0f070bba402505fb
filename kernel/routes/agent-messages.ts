/**
 * Inbox and outbox routes. Clearing the inbox first snapshots the messages into `agt_audit` (kind
 * `inbox_snapshot`, subject `inbox:<id>`) when the agent's `context.audit` asks for it: `true`, an
 * object with `inbox: true` or `enabled: true`, or an array naming `inbox`.
 */
import { Type } from 'typebox';
import { type AgentConfig, AgentIdParams, errorResponses } from '@agt/contracts';
import { InboxMessage, OutboxMessage } from '../http-api/agents-api.js';
import type { KernelRoutes } from './plugin.js';

const TAGS = ['Chat'];
const StatusQuery = Type.Object({
  status: Type.Optional(Type.String({ minLength: 1, description: 'only messages with this status' })),
});

/** Whether the agent's audit config requires inbox snapshots before a clear. */
export function auditsInbox(config: Readonly<AgentConfig>): boolean {
  const audit = (config.context as { audit?: unknown } | undefined)?.audit;
  if (audit === true) return true;
  if (Array.isArray(audit)) return audit.includes('inbox');
  if (audit && typeof audit === 'object') {
    const flags = audit as Record<string, unknown>;
    return flags.inbox === true || (flags.enabled === true && flags.inbox !== false);
  }
  return false;
}

export const agentMessageRoutes: KernelRoutes<'registry'> = async (app, { services }) => {
  const registry = services.registry;

  app.get(
    '/inbox',
    {
      schema: {
        tags: TAGS,
        summary: 'Inbox messages, oldest first (optionally one status)',
        params: AgentIdParams,
        querystring: StatusQuery,
        response: {
          200: Type.Object({ agentId: Type.String(), messages: Type.Array(InboxMessage) }),
          ...errorResponses(404, 409),
        },
      },
    },
    async (request) => {
      const agent = registry.resolve(request.params.id);
      return { agentId: agent.id, messages: agent.file.inbox.list({ status: request.query.status }) };
    },
  );

  app.delete(
    '/inbox',
    {
      schema: {
        tags: TAGS,
        summary: 'Clear the inbox (audit snapshots are kept first when context.audit requires them)',
        params: AgentIdParams,
        response: {
          200: Type.Object({
            agentId: Type.String(),
            success: Type.Literal(true),
            cleared: Type.Integer(),
            audited: Type.Integer(),
          }),
          ...errorResponses(404, 409),
        },
      },
    },
    async (request) => {
      const agent = registry.resolve(request.params.id);
      const audit = auditsInbox(agent.config);
      const { cleared, audited } = agent.file.transaction((file) => {
        let snapshots = 0;
        if (audit) {
          for (const message of file.inbox.list()) {
            file.audit.append('inbox_snapshot', `inbox:${message.id}`, message);
            snapshots++;
          }
        }
        return { cleared: file.inbox.clear(), audited: snapshots };
      });
      return { agentId: agent.id, success: true as const, cleared, audited };
    },
  );

  app.get(
    '/outbox',
    {
      schema: {
        tags: TAGS,
        summary: 'Outbox messages, oldest first (optionally one status)',
        params: AgentIdParams,
        querystring: StatusQuery,
        response: {
          200: Type.Object({ agentId: Type.String(), messages: Type.Array(OutboxMessage) }),
          ...errorResponses(404, 409),
        },
      },
    },
    async (request) => {
      const agent = registry.resolve(request.params.id);
      return { agentId: agent.id, messages: agent.file.outbox.list({ status: request.query.status }) };
    },
  );
};
