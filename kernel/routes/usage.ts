/** `GET /usage`: the daemon-wide spend of the loaded agents, from their ledgers (docs/costs.md). */
import { Type } from 'typebox';
import { DaemonUsage } from '../http-api/agents-api.js';
import { AgtError, errorResponses } from '@agt/contracts';
import { daemonUsage, type GroupBy } from '../spend/views.js';
import type { KernelRoutes } from './plugin.js';

const Query = Type.Object({
  from: Type.Optional(
    Type.String({ description: 'ISO date or time (default: the start of this month, owner time zone)' }),
  ),
  to: Type.Optional(Type.String({ description: 'ISO date or time, exclusive (default: now + 1 ms)' })),
  groupBy: Type.Optional(Type.Union([Type.Literal('agent'), Type.Literal('model'), Type.Literal('day')])),
});

function instant(text: string, name: string): number {
  const at = Date.parse(text);
  if (!Number.isFinite(at))
    throw new AgtError('bad_request', `${name} is not an ISO date or time: ${text.slice(0, 100)}`);
  return at;
}

export const usageRoutes: KernelRoutes<'registry' | 'runtime'> = async (app, { services }) => {
  app.get(
    '',
    {
      schema: {
        tags: ['Usage'],
        summary:
          'Tokens, calls and cost_usd of every loaded agent in [from, to), optionally grouped by agent, model or day',
        querystring: Query,
        response: { 200: DaemonUsage, ...errorResponses(400) },
      },
    },
    async (request) => {
      const governor = services.runtime.governor;
      const now = governor.periods();
      const from = request.query.from === undefined ? now.monthStart : instant(request.query.from, 'from');
      const to = request.query.to === undefined ? services.runtime.clock.now() + 1 : instant(request.query.to, 'to');
      if (to < from) throw new AgtError('bad_request', 'to is before from');
      return daemonUsage(governor, services.registry.list(), from, to, request.query.groupBy as GroupBy | undefined);
    },
  );
};
