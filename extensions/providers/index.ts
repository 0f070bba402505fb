/**
 * The `providers` extension (decisions D2, D3, D8): model clients for the four provider kinds
 * (`anthropic`, `openai`, `openai-compatible`, `openrouter`) contributed to the kernel, and the
 * `Providers & sign-in` routes under `/providers` and `/agents/{id}/providers`.
 */
import { defineExtension } from '../../contracts/extension.js';
import { registerAgentProviderRoutes } from './agent-routes.js';
import type { CallGuard } from './call-guard.js';
import type { ClientRuntime } from './model-client.js';
import { ProvidersOptions, resolveOptions } from './options.js';
import { ProviderRegistry } from './registry.js';
import { registerProviderRoutes } from './routes.js';
import { TAG } from './schemas.js';
import { SpacingGates } from './spacing.js';

export default defineExtension({
  name: 'providers',
  version: '1.0.0',
  contract: '1.0',
  prefix: '/providers',
  agentRoutes: 'providers',
  routeGroups: [TAG],
  options: ProvidersOptions,
  register(ctx) {
    const stopping = new AbortController();
    const runtime: ClientRuntime = {
      options: resolveOptions(ctx.config),
      gates: new SpacingGates(),
      logger: ctx.logger,
      inflight: new Set<CallGuard>(),
      stopSignal: stopping.signal,
    };
    const registry = new ProviderRegistry(ctx.settings, runtime);
    ctx.contribute.modelClients(registry.clientProvider());
    registerProviderRoutes(ctx.http, registry, runtime);
    if (ctx.agentHttp) registerAgentProviderRoutes(ctx.agentHttp, ctx.agents, registry, runtime);
    const unsubscribe = ctx.settings.onChange(() => registry.settingsChanged());
    return {
      stop() {
        unsubscribe();
        // Ends every running attempt (its HTTP request is aborted) and every backoff or spacing wait.
        stopping.abort();
        for (const guard of runtime.inflight) guard.abort('stopped');
        runtime.inflight.clear();
        runtime.gates.clear();
      },
    };
  },
});
