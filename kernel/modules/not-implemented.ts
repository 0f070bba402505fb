/**
 * Routes the spec lists that this build does not serve yet. Registered last, and only where no module
 * registered the route, they answer 501 `not_implemented` (never a fake 200), so clients and the
 * OpenAPI document see the whole surface and exactly what is missing.
 */
import type { HTTPMethods } from 'fastify';
import { notImplemented } from '../../contracts/errors.js';
import { errorResponses } from '../../contracts/http.js';
import type { KernelModule } from '../kernel.js';

const SPEC_ROUTES: Array<[HTTPMethods, string, string]> = [];

export const notImplementedModule: KernelModule = {
  name: 'not-implemented',
  register(app) {
    for (const [method, url, tag] of SPEC_ROUTES) {
      if (app.hasRoute({ method, url })) continue;
      app.route({
        method,
        url,
        schema: {
          tags: [tag],
          summary: 'Not implemented in this build (501 not_implemented)',
          response: { 501: errorResponses(501)[501]!, ...errorResponses() },
        },
        handler: async () => {
          throw notImplemented(`${method} ${url.replace(/:(\w+)/g, '{$1}')}`);
        },
      });
    }
  },
};
