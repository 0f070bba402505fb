/**
 * The `providers` extension (docs/providers.md): model clients for the four provider kinds
 * (`anthropic`, `openai`, `openai-compatible`, `openrouter`) contributed to the kernel, and the
 * `Providers & sign-in` routes under `/providers` and `/agents/{id}/providers`.
 */
import { defineExtension } from '@agt/contracts';
import { registerAgentProviderRoutes } from './agent-routes.js';
import { ProvidersOptions } from './options.js';
import { ProviderRegistry } from './registry.js';
import { registerProviderRoutes } from './routes.js';
import { createRuntime } from './runtime.js';
import { TAG } from './schemas.js';

export default defineExtension({
  name: 'providers',
  version: '1.0.0',
  contract: '1.0',
  prefix: '/providers',
  agentRoutes: 'providers',
  routeGroups: [TAG],
  options: ProvidersOptions,
  register(ctx) {
    const { runtime, stop } = createRuntime(ctx.config, ctx.logger);
    const registry = new ProviderRegistry(ctx.settings, runtime);
    ctx.contribute.modelClients(registry.clientProvider());
    registerProviderRoutes(ctx.http, registry, runtime);
    if (ctx.agentHttp) registerAgentProviderRoutes(ctx.agentHttp, ctx.agents, registry, runtime);
    const unsubscribe = ctx.settings.onChange(() => registry.settingsChanged());
    return {
      stop() {
        unsubscribe();
        stop();
      },
    };
  },
});
