/** Daemon control (tag `Daemon`). */
import { Type } from 'typebox';
import { errorResponses } from '@agt/contracts';
import type { KernelRoutes } from './plugin.js';

export const daemonRoutes: KernelRoutes<'requestShutdown'> = async (app, { services }) => {
  app.post(
    '/shutdown',
    {
      config: { loopbackOnly: true },
      schema: {
        tags: ['Daemon'],
        summary: 'Stop the daemon (loopback only): 202, then close HTTP, unload agents, stop extensions, exit',
        response: { 202: Type.Object({ accepted: Type.Literal(true) }), ...errorResponses(405) },
      },
    },
    async (_request, reply) => {
      // Answer first; the shutdown starts once the reply has been flushed.
      reply.raw.once('finish', () => void services.requestShutdown('api'));
      return reply.status(202).send({ accepted: true as const });
    },
  );
};
