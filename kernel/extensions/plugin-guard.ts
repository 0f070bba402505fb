/**
 * Keeps an extension's fastify plugins from failing the daemon.
 *
 * fastify loads plugins through avvio: a plugin that throws makes `ready()` (and so `listen`) reject,
 * and catching that error afterwards is not enough, because routes the failed plugin had already
 * declared are left half-built (their hooks, the kernel's guards included, are never attached). So
 * every plugin registered inside an extension's scope is wrapped: a throw is caught inside the plugin
 * itself, avvio sees a plugin that loaded, its routes are completed normally, and the extension is
 * marked failed, which the scope's 503 hook then serves.
 *
 * The wrapper is installed as the scope's own `register`; fastify creates child instances with
 * `Object.create(parent)`, so nested plugins at any depth inherit it.
 */
import type { FastifyInstance } from 'fastify';

type PluginFunction = (instance: FastifyInstance, options: unknown, done?: (error?: Error) => void) => unknown;

const isPromiseLike = (value: unknown): value is PromiseLike<unknown> =>
  value !== null &&
  (typeof value === 'object' || typeof value === 'function') &&
  typeof (value as { then?: unknown }).then === 'function';

/** Runs a plugin function (promise or callback style) on `instance`; rejects with its error. */
export async function runPlugin(fn: PluginFunction, instance: FastifyInstance, options: unknown): Promise<void> {
  if (fn.length >= 3) {
    await new Promise<void>((resolve, reject) => {
      const result = fn(instance, options, (error?: Error) => (error ? reject(error) : resolve()));
      if (isPromiseLike(result)) result.then(() => resolve(), reject);
    });
    return;
  }
  await fn(instance, options);
}

/** The same plugin, but a throw goes to `onError` instead of avvio; fastify-plugin metadata is kept. */
function guardPlugin(fn: PluginFunction, onError: (error: unknown) => void): PluginFunction {
  const guarded = async (instance: FastifyInstance, options: unknown) => {
    try {
      await runPlugin(fn, instance, options);
    } catch (error) {
      onError(error);
    }
  };
  // `skip-override`, `fastify.display-name` and `plugin-meta` live on symbol keys.
  for (const key of Object.getOwnPropertySymbols(fn)) {
    (guarded as unknown as Record<symbol, unknown>)[key] = (fn as unknown as Record<symbol, unknown>)[key];
  }
  Object.defineProperty(guarded, 'name', { value: fn.name || 'extensionPlugin' });
  return guarded;
}

/** Accepts what fastify's `register` accepts: a function, an ES module namespace, or a promise of one. */
function guardAny(plugin: unknown, onError: (error: unknown) => void): unknown {
  if (typeof plugin === 'function') return guardPlugin(plugin as PluginFunction, onError);
  if (isPromiseLike(plugin)) return Promise.resolve(plugin).then((loaded) => guardAny(loaded, onError));
  if (
    plugin !== null &&
    typeof plugin === 'object' &&
    typeof (plugin as { default?: unknown }).default === 'function'
  ) {
    return guardPlugin((plugin as { default: PluginFunction }).default, onError);
  }
  return plugin;
}

/** Makes every plugin registered in `scope` (and below it) report its throw to `onError`. */
export function guardPluginErrors(scope: FastifyInstance, onError: (error: unknown) => void): void {
  const register = scope.register;
  const guardedRegister = function (this: FastifyInstance, plugin: unknown, options?: unknown) {
    return (register as unknown as (p: unknown, o?: unknown) => FastifyInstance).call(
      this,
      guardAny(plugin, onError),
      options,
    );
  };
  Object.defineProperty(scope, 'register', { value: guardedRegister, writable: true, configurable: true });
}

/**
 * `register` for the agent-route scope. That scope's own plugin has already loaded when the extension
 * registers (fastify can hand out only one loading scope at a time), so a plugin registered on it is
 * run directly against it, inside a carrier plugin queued in the extension's main scope: its routes and
 * hooks land on the agent scope and its errors are guarded like any other. A `prefix` option cannot be
 * honoured this way and is refused with a clear error.
 */
export function bridgeAgentRegister(agentScope: FastifyInstance, mainScope: FastifyInstance): void {
  const bridged = (plugin: unknown, options?: unknown) => {
    const opts =
      typeof options === 'function' ? (options as (parent: FastifyInstance) => unknown)(agentScope) : (options ?? {});
    if ((opts as { prefix?: unknown })?.prefix) {
      throw new Error('ctx.agentHttp.register does not take a prefix option; give the routes their full paths instead');
    }
    mainScope.register(async function agentRoutes() {
      const loaded = isPromiseLike(plugin) ? await plugin : plugin;
      const fn = typeof loaded === 'function' ? loaded : (loaded as { default?: unknown } | null)?.default;
      if (typeof fn !== 'function') throw new Error('ctx.agentHttp.register needs a plugin function');
      await runPlugin(fn as PluginFunction, agentScope, opts);
    });
    return agentScope;
  };
  Object.defineProperty(agentScope, 'register', { value: bridged, writable: true, configurable: true });
}
