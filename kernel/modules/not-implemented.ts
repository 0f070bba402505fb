/**
 * Routes the spec lists that this build does not serve yet. Registered last, and only where no module
 * registered the route, they answer 501 `not_implemented` (never a fake 200), so clients and the
 * OpenAPI document see the whole surface and exactly what is missing.
 */
import type { HTTPMethods } from 'fastify';
import { notImplemented } from '../../contracts/errors.js';
import { errorResponses } from '../../contracts/http.js';
import type { KernelModule } from '../kernel.js';

const SPEC_ROUTES: Array<[HTTPMethods, string, string]> = [
  ['POST', '/agents/create', 'Agents'],
  ['POST', '/agents/autostart', 'Agents'],
  ['POST', '/agents/:id/start', 'Agents'],
  ['GET', '/agents/:id/loops', 'Loops'],
  ['POST', '/agents/:id/loops', 'Loops'],
  ['GET', '/agents/:id/loops/:name', 'Loops'],
  ['PATCH', '/agents/:id/loops/:name', 'Loops'],
  ['DELETE', '/agents/:id/loops/:name', 'Loops'],
  ['GET', '/agents/:id/loop', 'Loops'],
  ['GET', '/agents/:id/context', 'Loops'],
  ['POST', '/agents/:id/compact', 'Loops'],
  ['GET', '/agents/:id/chat', 'Chat'],
  ['POST', '/agents/:id/chat', 'Chat'],
  ['DELETE', '/agents/:id/chat', 'Chat'],
  ['POST', '/agents/:id/trigger', 'Chat'],
  ['POST', '/agents/:id/abort', 'Agents'],
  ['POST', '/agents/:id/interrupt', 'Agents'],
  ['POST', '/agents/:id/state', 'Agents'],
  ['GET', '/agents/:id/timers', 'Timers'],
  ['POST', '/agents/:id/timers', 'Timers'],
  ['PUT', '/agents/:id/timers/:timerId', 'Timers'],
  ['DELETE', '/agents/:id/timers/:timerId', 'Timers'],
];

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
