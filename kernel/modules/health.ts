/** Health, the OpenAPI document and daemon control (spec 4: Health and daemon). */
import { Type } from 'typebox';
import { ErrorBody, errorResponses } from '../../contracts/http.js';
import type { KernelModule } from '../kernel.js';

const HealthResponse = Type.Object({
  status: Type.Literal('ok'),
  version: Type.String(),
  uptimeMs: Type.Integer(),
});

export const healthModule: KernelModule = {
  name: 'health',
  register(app, kernel) {
    app.get(
      '/health',
      {
        config: { public: true },
        schema: {
          tags: ['Health'],
          summary: 'Liveness; no token needed (HEAD answers without a body)',
          security: [],
          response: { 200: HealthResponse, 403: ErrorBody },
        },
      },
      async () => ({ status: 'ok' as const, version: kernel.version, uptimeMs: Date.now() - kernel.startedAt }),
    );

    app.get(
      '/openapi.json',
      {
        schema: {
          tags: ['Health'],
          summary: 'This OpenAPI 3.1 document',
          response: { 200: Type.Object({}, { additionalProperties: true }), ...errorResponses() },
        },
      },
      async () => app.swagger(),
    );

    app.post(
      '/daemon/shutdown',
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
        reply.raw.once('finish', () => void kernel.requestShutdown('api'));
        return reply.status(202).send({ accepted: true as const });
      },
    );
  },
};
