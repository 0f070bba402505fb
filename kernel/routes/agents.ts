/**
 * The Agents route group, core routes: list, load, describe, status, stop/unload, config and tools. The
 * per-agent resource routes live beside this file (agent-*.ts).
 */
import { Type } from 'typebox';
import { AgentConfigSchema } from '../agents/config-schema.js';
import { type AgentConfig, AgentIdParams, errorResponses, AgtError } from '@agt/contracts';
import { mergePatch } from '../json-merge-patch.js';
import { AgentRef, AgentStatus, AgentSummary, AgentTools } from '../http-api/agents-api.js';
import type { LoadedAgent } from '../agents/loaded-agent.js';
import { toolEntries } from '../agents/tool-list.js';
import type { KernelServices } from '../services.js';
import { agentStatus } from '../agents/agent-status.js';
import type { KernelRoutes } from './plugin.js';
import { requireReadyIdentity } from '../identity/index.js';
import { remoteAgents } from '../extensions/kernel-points.js';
import type { RemoteAgent } from '@agt/contracts';

/** An agent another daemon of the fleet runs, as `GET /agents` lists it. */
const remoteSummary = (agent: RemoteAgent) => ({
  id: agent.id,
  filePath: null,
  name: agent.name,
  ...(agent.handle ? { handle: agent.handle } : {}),
  autostart: false,
  runtimeState: 'remote',
  displayState: 'remote',
  daemon: agent.daemon,
});

const TAGS = ['Agents'];
const Success = Type.Object({ success: Type.Boolean() });
const JSON_TYPE = 'application/json; charset=utf-8';

/** An AgentSummary with the agent's states (one object literal: see agent-status.ts on spreads). */
export function summaryOf(services: Pick<KernelServices, 'runtime'>, agent: LoadedAgent) {
  const body: {
    id: string;
    filePath: string | null;
    name: string;
    handle?: string;
    autostart: boolean;
    runtimeState: string;
    displayState: string;
  } = {
    id: agent.id,
    filePath: agent.filePath,
    name: agent.name,
    autostart: agent.config.autostart ?? false,
    runtimeState: services.runtime.status(agent).runtimeState,
    displayState: agent.displayState,
  };
  if (agent.handle) body.handle = agent.handle;
  return body;
}

/** AgentStatus (also used by the start route). */
export const statusOf = (services: Pick<KernelServices, 'runtime' | 'storage'>, agent: LoadedAgent) =>
  agentStatus(services.runtime, agent, services.storage);

/**
 * The load answer: the file's config, what the owner's ceiling capped in it, and what the extensions'
 * config checks refuse (both empty when the file stays within the owner's settings).
 */
export const refOf = (services: Pick<KernelServices, 'registry'>, agent: LoadedAgent) => ({
  id: agent.id,
  filePath: agent.filePath,
  config: agent.fileConfig,
  capped: [...agent.capped],
  refused: services.registry.configProblems(agent),
});

/**
 * Loads a file as a new agent: a fresh id (registry.ts) and, where its key can be re-sealed here, a fresh
 * key pair with this owner's attestations; a key sealed out of reach (another installation's envelope, a
 * locked password) stays the file's own, which was never the claimed agent's either.
 */
async function loadAsNew(
  services: Pick<KernelServices, 'registry' | 'identity' | 'agentIdentity'>,
  filePath: string,
  requireReview?: boolean,
): Promise<LoadedAgent> {
  requireReadyIdentity(services, 'loading an agent file as a new agent');
  const agent = await services.registry.load(filePath, { requireReview, asNew: true });
  try {
    services.agentIdentity.regenerate(agent);
  } catch (error) {
    if (!(error instanceof AgtError && error.code === 'credentials_locked')) throw error;
    services.registry.log(agent, {
      level: 'warn',
      origin: 'kernel',
      event: 'identity_kept',
      message: `loaded as a new agent with the file's own key: ${error.message}`,
    });
  }
  return agent;
}

export const agentRoutes: KernelRoutes<
  'registry' | 'runtime' | 'storage' | 'builtinTools' | 'contributions' | 'identity' | 'agentIdentity'
> = async (app, { services }) => {
  const registry = services.registry;

  app.get(
    '',
    {
      schema: {
        tags: TAGS,
        summary: 'Loaded agents, with their runtime and display states',
        description:
          'In a fleet (docs/fleet.md) also the agents other daemons run, each with its `daemon` and the states `remote`.',
        response: { 200: Type.Array(AgentSummary), ...errorResponses() },
      },
    },
    async () => {
      const local = registry.list().map((agent) => summaryOf(services, agent));
      const remote = await remoteAgents(services.contributions.points, (id) => registry.byId(id) !== undefined);
      return remote.length === 0 ? local : [...local, ...remote.map(remoteSummary)];
    },
  );

  app.post(
    '/load',
    {
      schema: {
        tags: TAGS,
        summary: 'Load an agent file (an already loaded file returns the loaded agent)',
        description:
          '404 when the file does not exist; 409 `agent_id_conflict` (with `agentId`, `knownDid`, `fileDid`) when it claims the id of an agent this daemon knows with another key (docs/agent-identity.md); 422 `load_failed` (with `reason`) when it is not an agent file of a known version or its config is invalid (`secret_in_config`, with `path`, when the config holds a secret value), or when it carries triggers, views or virtual tables (`unsafe_schema`, with `objects`); 403 `AGENT_REVIEW_REQUIRED` when `requireReview` is true and the file is not reviewed here; 409 `agent_file_in_use` when another daemon holds its lease (`reason: leased`, with `holder`) or another process holds its SQLite lock (`reason: locked`). ' +
          '`asNew`: the file becomes a new agent: a fresh id written into it (handle dropped) and a fresh key pair where its key can be re-sealed here; nothing kept or granted under the id it claims reaches it. Needs the owner identity ready (409 `identity_not_ready`); a loaded file is 409 `conflict`.',
        body: Type.Object({
          filePath: Type.String({ minLength: 1, description: 'absolute path of the .agt file' }),
          requireReview: Type.Optional(Type.Boolean()),
          asNew: Type.Optional(
            Type.Boolean({ description: 'load it as a new agent: a fresh id and key, nothing of the id it claims' }),
          ),
        }),
        response: { 200: AgentRef, ...errorResponses(404, 409, 422) },
      },
    },
    async (request) => {
      const { filePath, requireReview, asNew } = request.body;
      return refOf(
        services,
        asNew ? await loadAsNew(services, filePath, requireReview) : await registry.load(filePath, { requireReview }),
      );
    },
  );

  app.get(
    '/:id',
    {
      schema: {
        tags: TAGS,
        summary: 'One loaded agent',
        params: AgentIdParams,
        response: { 200: AgentRef, ...errorResponses(404, 409) },
      },
    },
    async (request) => refOf(services, registry.resolve(request.params.id)),
  );

  app.get(
    '/:id/status',
    {
      schema: {
        tags: TAGS,
        summary: 'Runtime status of one agent',
        params: AgentIdParams,
        response: { 200: AgentStatus, ...errorResponses(404, 409) },
      },
    },
    async (request, reply) => {
      const body = statusOf(services, registry.resolve(request.params.id));
      // A performance trick: JSON.stringify writes the schema serializer's bytes (kernel/agents/agent-status.ts).
      reply.type(JSON_TYPE).serializer(JSON.stringify);
      return body;
    },
  );

  // A planned move (docs/fleet.md, Planned moves) hands accepted work over in the file, as a shutdown keeps it.
  const UnloadQuery = Type.Object({
    keep: Type.Optional(
      Type.Boolean({
        description:
          'Keep accepted work in the file for the next load: queued chats stay queued (no `chat.discarded`) and a turn waiting for the owner is parked',
      }),
    ),
  });
  for (const verb of ['stop', 'unload'] as const) {
    app.post(
      `/:id/${verb}`,
      {
        schema: {
          tags: TAGS,
          summary:
            verb === 'stop' ? 'Stop and unload an agent (a running turn gets 5 s; the file stays)' : 'Alias of stop',
          params: AgentIdParams,
          querystring: UnloadQuery,
          response: { 200: Success, ...errorResponses(404, 409) },
        },
      },
      async (request) => {
        const reason = request.query.keep ? 'handoff' : verb;
        await registry.unload(registry.resolve(request.params.id), { reason });
        return { success: true };
      },
    );
  }

  app.get(
    '/:id/config',
    {
      schema: {
        tags: TAGS,
        summary:
          "The agent config as its file holds it (what applies is capped by the owner's ceiling: `capped` in `GET /agents/{id}`)",
        params: AgentIdParams,
        response: {
          200: Type.Object({ agentId: Type.String(), config: AgentConfigSchema }),
          ...errorResponses(404, 409),
        },
      },
    },
    async (request) => {
      const agent = registry.resolve(request.params.id);
      return { agentId: agent.id, config: agent.fileConfig };
    },
  );

  app.put(
    '/:id/config',
    {
      schema: {
        tags: TAGS,
        summary:
          'Replace the agent config (validated, persisted, applied; a changed `state` does not move the running agent)',
        description:
          "Owner locks bind the agent's own config tool, not this route. The id cannot change. A review mark follows changes made here. " +
          'Secret values are refused with 400 naming their path (keys named like key material, MCP auth headers, MCP env entries named *KEY*/*TOKEN*/*SECRET*/*PASSWORD*): use credentials, `env_keys`, `header_env` or `bearer_token_env_var`.',
        params: AgentIdParams,
        body: AgentConfigSchema,
        response: {
          200: Type.Object({ agentId: Type.String(), success: Type.Literal(true), config: AgentConfigSchema }),
          ...errorResponses(404, 409),
        },
      },
    },
    async (request) => {
      const agent = registry.resolve(request.params.id);
      const config = await registry.updateConfig(agent, request.body);
      return { agentId: agent.id, success: true as const, config };
    },
  );

  app.patch(
    '/:id/config',
    {
      schema: {
        tags: TAGS,
        summary:
          'Change part of the agent config (JSON Merge Patch, RFC 7396): validated, persisted and applied as PUT',
        description:
          'Objects merge key by key, `null` removes a key, arrays and other values replace. The merged config goes through the same checks as PUT (schema, secret values, the id cannot change).',
        params: AgentIdParams,
        body: Type.Object({}, { additionalProperties: true, description: 'a merge patch of AgentConfig' }),
        response: {
          200: Type.Object({ agentId: Type.String(), success: Type.Literal(true), config: AgentConfigSchema }),
          ...errorResponses(404, 409),
        },
      },
    },
    async (request) => {
      const agent = registry.resolve(request.params.id);
      const merged = mergePatch(agent.fileConfig, request.body) as AgentConfig;
      const config = await registry.updateConfig(agent, merged);
      return { agentId: agent.id, success: true as const, config };
    },
  );

  app.get(
    '/:id/tools',
    {
      schema: {
        tags: TAGS,
        summary: 'Tools of the agent, sorted by name (built-in, contributed such as MCP, and declared); read-only',
        params: AgentIdParams,
        response: { 200: AgentTools, ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      const agent = registry.resolve(request.params.id);
      const builtin = services.builtinTools;
      const contributed = await services.contributions.toolsFor(agent.id, new Set(builtin.map((tool) => tool.name)));
      return { agentId: agent.id, tools: toolEntries(agent.config.tools, builtin, contributed) };
    },
  );
};
