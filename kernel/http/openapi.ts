/**
 * `GET /openapi.json`, made on its first request instead of at start. @fastify/swagger (with `yaml`,
 * its schema resolver and cloner, ~250 KB of the daemon's bundle) was registered at start only to
 * collect the routes as they were added; the document was built on the first request anyway. Here the
 * routes and plugin scopes are collected by two plain hooks from the same moment (before any route),
 * and the plugin itself is imported on the first request (its own chunk in the build) and run over
 * exactly what it would have collected: its `onRoute` for every route in order, its `onRegister` for
 * every scope, its `onReady`. The document is therefore the one the plugin made at start, byte for byte
 * (test/openapi*.test.ts, test/fuzz-openapi.test.ts).
 */
import type { FastifyInstance, RouteOptions } from 'fastify';

declare module 'fastify' {
  interface FastifyInstance {
    /** The OpenAPI 3.1 document of every route (`GET /openapi.json`), built on its first call. */
    openApiDocument(): Promise<unknown>;
  }
}

type Hook = (...args: unknown[]) => unknown;
type SwaggerPlugin = (host: unknown, options: Record<string, unknown>, done: (error?: Error) => void) => void;

/** The stand-in the plugin is registered on: the hooks it adds, the function it decorates. */
interface PluginHost {
  hooks: Record<'onRoute' | 'onRegister' | 'onReady', Hook[]>;
  document?: () => unknown;
}

/**
 * Starts collecting on `app` (call it before any route is added); returns what builds the document,
 * once, with the plugin `options` (those of `app.register(swagger, options)`).
 */
export function collectOpenApi(app: FastifyInstance, options: Record<string, unknown>): () => Promise<unknown> {
  const routes: RouteOptions[] = [];
  const scopes: FastifyInstance[] = [];
  app.addHook('onRoute', (route) => void routes.push(route));
  app.addHook('onRegister', (scope) => void scopes.push(scope));
  let built: Promise<() => unknown> | undefined;
  const document = async () => (await (built ??= build(app, options, routes, scopes)))();
  app.decorate('openApiDocument', document);
  return document;
}

async function build(
  app: FastifyInstance,
  options: Record<string, unknown>,
  routes: RouteOptions[],
  scopes: FastifyInstance[],
): Promise<() => unknown> {
  const { default: swagger } = (await import('@fastify/swagger')) as unknown as { default: SwaggerPlugin };
  const host: PluginHost = { hooks: { onRoute: [], onRegister: [], onReady: [] } };
  const stand = {
    addHook: (name: keyof PluginHost['hooks'], hook: Hook) => void host.hooks[name].push(hook),
    decorate: (_name: string, value: () => unknown) => void (host.document = value),
    getSchemas: () => app.getSchemas(),
  };
  // The plugin keeps a reference to its options and may add defaults to them: a copy each time.
  await new Promise<void>((done, fail) => swagger(stand, { ...options }, (error) => (error ? fail(error) : done())));
  for (const route of routes) for (const hook of host.hooks.onRoute) hook(route);
  for (const scope of scopes) for (const hook of host.hooks.onRegister) await hook(scope);
  for (const hook of host.hooks.onReady) await new Promise<void>((done) => void hook(done));
  if (!host.document) throw new Error('@fastify/swagger did not provide its document function');
  return host.document;
}
