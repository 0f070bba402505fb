/**
 * `GET /channels` and the agent-scoped `/agents/{id}/adapters` routes. Writing routes edit the
 * agent's `adapters` config through the kernel (validated, persisted, `agent.config.changed`), then
 * wait for the reconcile so the answer shows the adapter's new status.
 */
import type { AgentConfig } from '@agt/contracts';
import type { ExtensionHttp } from '@agt/contracts';
import { errorResponses } from '@agt/contracts';
import type { AgentsService, AgentView } from '@agt/contracts';
import { firstSchemaError } from '@agt/contracts';
import { adapterNotConfigured, agentNotLoaded, invalidAdapterConfig, unknownAdapterType } from './errors.js';
import type { ChannelManager } from './manager.js';
import {
  AdapterInstanceBody,
  AdapterParams,
  AgentAdapters,
  AgentParams,
  ChannelsList,
  OneAdapter,
  Removed,
  TAG,
} from './schemas.js';
import type { AdapterTypeRegistry } from './types-registry.js';

export function registerChannelRoutes(
  http: ExtensionHttp,
  types: AdapterTypeRegistry,
  manager: ChannelManager,
  agents: AgentsService,
): void {
  http.get('/', {
    schema: {
      tags: [TAG],
      summary: 'Adapter types and the agents using them',
      description:
        'The installed adapter types (with the sealed credential names each reads) and, per loaded agent with adapters, their status.',
      response: { 200: ChannelsList },
    },
    handler: async () => ({
      types: types.all().map((kind) => ({
        type: kind.type,
        credentials: kind.credentials.map((key) => `adapter:${kind.type}:${key}`),
        maxTextLength: kind.limits.maxTextLength,
      })),
      agents: agents
        .list()
        .filter((agent) => Object.keys(agent.config.adapters ?? {}).length > 0)
        .map((agent) => ({
          agentId: agent.id,
          name: agent.name,
          adapters: manager.report(agent).map(({ type, enabled, status }) => ({ type, enabled, status })),
        })),
    }),
  });
}

export function registerAgentAdapterRoutes(
  http: ExtensionHttp,
  types: AdapterTypeRegistry,
  manager: ChannelManager,
  agents: AgentsService,
): void {
  const agentOf = (id: string): AgentView => {
    const agent = agents.find(id);
    if (!agent) throw agentNotLoaded(id);
    return agent;
  };

  http.get('', {
    schema: {
      tags: [TAG],
      summary: "An agent's adapters",
      description:
        'Every adapter in the agent config, with its status (`connected`, `connecting`, `disconnected`, `error`), the reason of an error, since when it is connected, restarts and recent errors.',
      params: AgentParams,
      response: { 200: AgentAdapters, ...errorResponses(404) },
    },
    handler: async (request) => {
      const agent = agentOf(request.params.id);
      return { agentId: agent.id, adapters: manager.report(agent) };
    },
  });

  http.put('/:type', {
    schema: {
      tags: [TAG],
      summary: 'Configure an adapter',
      description:
        "Sets `adapters.<type>` in the agent config (AdapterInstanceConfig: `enabled`, `config`, `policy {dm, groups, allow_from}`, `limits {max_attachment_size}`); `config` is validated by the type's schema. The adapter starts, restarts or stops to match, without a daemon restart. Credentials are sealed agent credentials `adapter:<type>:<KEY>`, never config.",
      params: AdapterParams,
      body: AdapterInstanceBody,
      response: { 200: OneAdapter, ...errorResponses(400, 404) },
    },
    handler: async (request) => {
      const agent = agentOf(request.params.id);
      const { type } = request.params;
      const kind = types.get(type);
      if (!kind) throw unknownAdapterType(type, types.list());
      if (kind.configSchema) {
        const problem = firstSchemaError(kind.configSchema, request.body.config ?? {});
        if (problem !== null) throw invalidAdapterConfig(`/config${problem.startsWith('/') ? '' : ' '}${problem}`);
      }
      const next = {
        ...agent.config,
        adapters: { ...(agent.config.adapters ?? {}), [type]: request.body },
      } as AgentConfig;
      await agents.updateConfig(agent.id, next);
      await manager.reconcile(agent.id);
      const updated = agentOf(agent.id);
      return { agentId: agent.id, adapter: manager.reportOne(updated, type, request.body) };
    },
  });

  http.delete('/:type', {
    schema: {
      tags: [TAG],
      summary: 'Remove an adapter',
      description:
        'Removes `adapters.<type>` from the agent config and stops it; `success: false` when there was none. The sealed credentials stay.',
      params: AdapterParams,
      response: { 200: Removed, ...errorResponses(404) },
    },
    handler: async (request) => {
      const agent = agentOf(request.params.id);
      const { type } = request.params;
      const current = agent.config.adapters ?? {};
      if (!Object.hasOwn(current, type)) return { agentId: agent.id, success: false };
      const { [type]: _removed, ...rest } = current;
      await agents.updateConfig(agent.id, { ...agent.config, adapters: rest } as AgentConfig);
      await manager.reconcile(agent.id);
      return { agentId: agent.id, success: true };
    },
  });

  http.post('/:type/restart', {
    schema: {
      tags: [TAG],
      summary: 'Restart an adapter',
      description:
        'Disconnects and connects again (an adapter in `error` tries again, for example after its credential was set). 404 when the adapter is not configured and enabled.',
      params: AdapterParams,
      response: { 200: OneAdapter, ...errorResponses(404) },
    },
    handler: async (request) => {
      const agent = agentOf(request.params.id);
      const { type } = request.params;
      const config = agent.config.adapters?.[type];
      if (!config?.enabled || !(await manager.restart(agent.id, type))) throw adapterNotConfigured(agent.id, type);
      return { agentId: agent.id, adapter: manager.reportOne(agent, type, config) };
    },
  });
}
