/** Health and the OpenAPI document (tag `Health`). */
import { Type } from 'typebox';
import { ErrorBody, errorResponses } from '@agt/contracts';
import type { KernelRoutes } from './plugin.js';

const HealthResponse = Type.Object({
  status: Type.Literal('ok'),
  version: Type.String(),
  uptimeMs: Type.Integer(),
});

export const healthRoutes: KernelRoutes<'startedAt' | 'version'> = async (app, { services }) => {
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
    async () => ({ status: 'ok' as const, version: services.version, uptimeMs: Date.now() - services.startedAt }),
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
    async () => app.openApiDocument(),
  );
};
