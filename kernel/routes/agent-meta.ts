/**
 * Meta routes (`/agents/{id}/meta`): the owner's view of `agt_meta`. These routes act as the owner, so
 * protection never refuses them; it binds the agent's own `sys_*_meta` tools (see meta-store.ts).
 */
import { Type } from 'typebox';
import { MetaEntry, MetaProtection } from '../http-api/agents-api.js';
import { AgentIdParams, AgentSuccess, errorResponses } from '@agt/contracts';
import { MetaKey } from '../http-api/names.js';
import type { KernelRoutes } from './plugin.js';
import { metaKeyNotFound } from '../agents/stores/errors.js';

const TAGS = ['Agents'];
const KeyParams = Type.Object({ id: Type.String({ minLength: 1 }), key: MetaKey });

export const agentMetaRoutes: KernelRoutes<'registry'> = async (app, { services }) => {
  const registry = services.registry;

  app.get(
    '/meta',
    {
      schema: {
        tags: TAGS,
        summary: 'Meta entries of the agent, sorted by key',
        params: AgentIdParams,
        response: {
          200: Type.Object({ agentId: Type.String(), entries: Type.Array(MetaEntry) }),
          ...errorResponses(404, 409),
        },
      },
    },
    async (request) => {
      const agent = registry.resolve(request.params.id);
      return { agentId: agent.id, entries: agent.file.meta.list() };
    },
  );

  app.put(
    '/meta/:key',
    {
      schema: {
        tags: TAGS,
        summary: 'Set a meta value (protection absent: unchanged, `none` for a new key)',
        description: 'Protection `increment` needs an integer value (400 otherwise).',
        params: KeyParams,
        body: Type.Object({ value: Type.String(), protection: Type.Optional(MetaProtection) }),
        response: { 200: AgentSuccess, ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      const agent = registry.resolve(request.params.id);
      agent.file.meta.set(request.params.key, request.body.value, {
        actor: 'owner',
        protection: request.body.protection,
      });
      return { agentId: agent.id, success: true };
    },
  );

  app.delete(
    '/meta/:key',
    {
      schema: {
        tags: TAGS,
        summary: 'Delete a meta key (`success` false when there was none)',
        params: KeyParams,
        response: { 200: AgentSuccess, ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      const agent = registry.resolve(request.params.id);
      return { agentId: agent.id, success: agent.file.meta.delete(request.params.key, 'owner') };
    },
  );

  app.patch(
    '/meta/:key/protection',
    {
      schema: {
        tags: TAGS,
        summary: 'Change the protection of an existing meta key (404 when the key does not exist)',
        params: KeyParams,
        body: Type.Object({ protection: MetaProtection }),
        response: { 200: AgentSuccess, ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      const agent = registry.resolve(request.params.id);
      if (!agent.file.meta.setProtection(request.params.key, request.body.protection)) {
        throw metaKeyNotFound(request.params.key);
      }
      return { agentId: agent.id, success: true };
    },
  );
};
