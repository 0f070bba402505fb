/**
 * The kernel's 503 for extension routes: the one coded error, and the two ways it is served.
 *
 * - An extension that never registers (disabled, failed to import, bad definition, cycle, missing
 *   dependency) gets a stub scope at its prefix: catch-all routes for every method, hidden from
 *   OpenAPI, that always answer 503.
 * - An extension that registers gets an `onRequest` hook at the top of its own scope and the scope's
 *   not-found handler; both answer 503 from the moment it fails (in `register`, in `start`, or at
 *   stop), so routes it registered before failing never run.
 * - A shipped extension the manifest does not list gets the same stub scopes where the shipped table
 *   (`shipped.ts`) places it, unless a listed extension serves that path.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { extensionUnavailable } from './errors.js';
import { SHIPPED_EXTENSIONS } from './shipped.js';

/** The 503 naming the extension and why: `extension mcp is disabled`, `extension x is failed: ...`. */
export const unavailableError = extensionUnavailable;

/** Sends the 503 directly: an error handler the extension set on its scope must not reshape it. */
function sendUnavailable(reply: FastifyReply, name: string, reason: string): FastifyReply {
  const error = unavailableError(name, reason);
  return reply.status(error.statusCode).send(error.toBody());
}

/** Catch-all routes answering 503 on `/` and `/*` of `scope` (hidden from the OpenAPI document). */
export function registerStubRoutes(scope: FastifyInstance, name: string, reason: () => string): void {
  const handler = async (_request: FastifyRequest, reply: FastifyReply) => sendUnavailable(reply, name, reason());
  for (const url of ['/', '/*']) {
    scope.route({ method: scope.supportedMethods, url, schema: { hide: true }, handler, exposeHeadRoute: false });
  }
}

/**
 * Guards a live extension scope: `reason()` returns null while it serves. The hook is added before the
 * extension registers anything, so it applies to all its routes and nested plugins.
 */
export function guardScope(
  scope: FastifyInstance,
  name: string,
  reason: () => string | null,
  options = { notFound: true },
): void {
  scope.addHook('onRequest', async (_request, reply) => {
    const why = reason();
    if (why !== null) return sendUnavailable(reply, name, why);
  });
  if (!options.notFound) return;
  scope.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const why = reason();
    if (why !== null) return sendUnavailable(reply, name, why);
    // The same body as the kernel's own 404.
    reply.status(404).send({ error: `no route ${request.method} ${request.url.split('?')[0]}`, code: 'not_found' });
  });
}

/** Why an unlisted shipped extension's routes answer 503. */
export const NOT_LISTED = 'not listed in the extension manifest';

/**
 * Stub scopes (503 naming the extension) at the prefix and agent segment of every shipped extension
 * whose name is not in `listed`, except on paths a listed extension claimed (`claimed`: prefixes such as
 * `/mcp` and agent segments as `/agents/:id/mcp`).
 */
export function registerUnlistedStubs(
  app: FastifyInstance,
  listed: ReadonlySet<string>,
  claimed: ReadonlySet<string>,
): void {
  for (const shipped of SHIPPED_EXTENSIONS) {
    if (listed.has(shipped.name)) continue;
    const paths = [shipped.prefix, shipped.agentRoutes && `/agents/:id/${shipped.agentRoutes}`];
    for (const prefix of paths) {
      if (!prefix || claimed.has(prefix)) continue;
      app.register(async (scope) => registerStubRoutes(scope, shipped.name, () => NOT_LISTED), { prefix });
    }
  }
}
