/**
 * `/agents/{id}/providers`: the providers an agent declares itself (its `providers` config), with
 * whether its sealed key `provider:<providerId>` is set; a check and the models list using that key.
 * 404 for an agent that is not loaded or a provider it does not declare. Keys never appear.
 */
import { notFound } from '@agt/contracts';
import type { ExtensionHttp } from '@agt/contracts';
import { errorResponses } from '@agt/contracts';
import type { AgentView, AgentsService } from '@agt/contracts';
import { checkProvider, listModels } from './admin.js';
import { unknownProviderType } from './errors.js';
import type { ClientRuntime } from './model-client.js';
import { credentialName, type ProviderRegistry } from './registry.js';
import { AgentParams, AgentProviderList, AgentProviderParams, CheckResult, ModelList, TAG } from './schemas.js';

export function registerAgentProviderRoutes(
  http: ExtensionHttp,
  agents: AgentsService,
  registry: ProviderRegistry,
  runtime: ClientRuntime,
): void {
  const agentOf = (id: string): AgentView => {
    const agent = agents.find(id);
    if (!agent) throw notFound(`agent ${id} is not loaded`);
    return agent;
  };

  const targetOf = async (agentId: string, providerId: string) => {
    const agent = agentOf(agentId);
    const declared = (agent.config.providers ?? []).find((p) => p.id === providerId);
    if (!declared) throw notFound(`agent ${agent.id} declares no provider ${providerId}`);
    const key = await agents.readCredential(agent.id, credentialName(declared.id));
    const target = registry.agentTarget(agent.id, declared, key);
    if (!target) throw unknownProviderType(providerId, declared.type);
    return target;
  };

  http.get('', {
    schema: {
      tags: [TAG],
      summary: "List an agent's own providers",
      description: 'Providers declared in the agent config; each key is the sealed credential `provider:<providerId>`.',
      params: AgentParams,
      response: { 200: AgentProviderList, ...errorResponses(404) },
    },
    handler: async (request) => {
      const agent = agentOf(request.params.id);
      const providers = await Promise.all(
        (agent.config.providers ?? []).map(async (p) => ({
          id: p.id,
          type: p.type,
          name: p.name,
          baseUrl: p.baseUrl,
          preset: p.preset ?? null,
          defaultModel: p.defaultModel ?? null,
          requestDelayMs: p.requestDelayMs ?? 0,
          credential: credentialName(p.id),
          keyPresent: Boolean(await agents.readCredential(agent.id, credentialName(p.id))),
        })),
      );
      return { agentId: agent.id, providers };
    },
  });

  http.post('/:providerId/check', {
    schema: {
      tags: [TAG],
      summary: "Check one of an agent's providers with a real call",
      params: AgentProviderParams,
      response: { 200: CheckResult, ...errorResponses(404) },
    },
    handler: async (request) => checkProvider(await targetOf(request.params.id, request.params.providerId), runtime),
  });

  http.get('/:providerId/models', {
    schema: {
      tags: [TAG],
      summary: "List the models of one of an agent's providers",
      params: AgentProviderParams,
      response: { 200: ModelList, ...errorResponses(404, 502, 503, 504) },
    },
    handler: async (request) => {
      const target = await targetOf(request.params.id, request.params.providerId);
      return { provider: target.id, models: await listModels(target, runtime) };
    },
  });
}
