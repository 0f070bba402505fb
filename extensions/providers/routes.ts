/**
 * `/providers`: the app providers of the settings, with whether their key is present and how the last
 * check went; a check (a real call) and the models list. Keys never appear: only `apiKeyEnv` and
 * `keyPresent`. Listing never calls a provider (it would be slow and spend quota): status comes from
 * the last `POST /providers/{providerId}/check`.
 */
import { errorResponses } from '@agt/contracts';
import { AgtError, notFound } from '@agt/contracts';
import type { ExtensionHttp } from '@agt/contracts';
import type { AppProviderSettings } from '@agt/contracts';
import { checkProvider, listModels } from './admin.js';
import { timeoutAsUpstream } from './errors.js';
import type { ClientRuntime } from './model-client.js';
import type { ProviderRegistry } from './registry.js';
import { CheckResult, ModelList, ProviderInfo, ProviderList, ProviderParams, TAG } from './schemas.js';

export function describeApp(registry: ProviderRegistry, provider: AppProviderSettings) {
  return {
    id: provider.id,
    type: provider.type,
    name: provider.name,
    baseUrl: provider.baseUrl,
    defaultModel: provider.defaultModel ?? null,
    apiKeyEnv: provider.apiKeyEnv ?? null,
    keyPresent: registry.appKey(provider) !== undefined,
    requestDelayMs: provider.requestDelayMs ?? 0,
    status: registry.status(provider),
    lastCheck: registry.lastCheck(provider),
  };
}

export function registerProviderRoutes(http: ExtensionHttp, registry: ProviderRegistry, runtime: ClientRuntime): void {
  const find = (id: string) => {
    const provider = registry.findApp(id);
    if (!provider) throw notFound(`no app provider ${id} in the settings`);
    return provider;
  };

  http.get('', {
    schema: {
      tags: [TAG],
      summary: 'List the app providers',
      description: 'Providers from the settings, with key presence and the last check. Never calls a provider.',
      response: { 200: ProviderList, ...errorResponses() },
    },
    handler: async () => ({ providers: registry.appProviders().map((p) => describeApp(registry, p)) }),
  });

  http.get('/:providerId', {
    schema: {
      tags: [TAG],
      summary: 'Read one app provider',
      params: ProviderParams,
      response: { 200: ProviderInfo, ...errorResponses(404) },
    },
    handler: async (request) => describeApp(registry, find(request.params.providerId)),
  });

  http.post('/:providerId/check', {
    schema: {
      tags: [TAG],
      summary: 'Check an app provider with a real call',
      description:
        'Lists its models, or sends a 1-token completion to `defaultModel` where there is no models route. ' +
        'Answers 200 either way; `ok` says whether the provider answered.',
      params: ProviderParams,
      response: { 200: CheckResult, ...errorResponses(404) },
    },
    handler: async (request) => {
      const provider = find(request.params.providerId);
      const result = await checkProvider(registry.appTarget(provider), runtime);
      registry.recordCheck(provider, result);
      return result;
    },
  });

  http.get('/:providerId/models', {
    schema: {
      tags: [TAG],
      summary: "List an app provider's models",
      description:
        '`GET {baseUrl}/models` (Chat Completions kinds) or `GET {baseUrl}/v1/models` (Anthropic); 502 when the provider fails.',
      params: ProviderParams,
      response: { 200: ModelList, ...errorResponses(404, 502, 503) },
    },
    handler: async (request) => {
      const provider = find(request.params.providerId);
      try {
        return { provider: provider.id, models: await listModels(registry.appTarget(provider), runtime) };
      } catch (error) {
        // Over HTTP a provider that took too long is an upstream failure (502), not a new code.
        if (error instanceof AgtError && error.code === 'timeout') {
          throw timeoutAsUpstream(error);
        }
        throw error;
      }
    },
  });
}
