/**
 * `POST /agents/{id}/start`: `{id}` is a loaded agent (id, handle or name) or an absolute agent file
 * path (URL-encoded), which is loaded first through the review gate. Starting fires the agent's
 * `on_startup` trigger once; starting an agent that already started is a no-op. Finding an unloaded
 * agent by id, handle or name in tracked folders is the tracked-folders extension's duty (D3) and is
 * not built: such a request answers 404 naming that.
 */
import { isAbsolute } from 'node:path';
import { Type } from 'typebox';
import { AgentStatus } from '../../contracts/agents-api.js';
import { AgtError } from '../../contracts/errors.js';
import { AgentIdParams, errorResponses } from '../../contracts/http.js';
import { startAgent } from '../agents/start-agent.js';
import type { LoadedAgent } from '../agents/loaded-agent.js';
import type { KernelServices } from '../services.js';
import type { KernelRoutes } from './plugin.js';
import { statusOf } from './agents.js';

async function findOrLoad(services: KernelServices, id: string): Promise<{ agent: LoadedAgent; loaded: boolean }> {
  if (isAbsolute(id)) {
    const before = new Set(services.registry.list());
    const agent = await services.registry.load(id, { requireReview: true });
    return { agent, loaded: !before.has(agent) };
  }
  try {
    return { agent: services.registry.resolve(id), loaded: false };
  } catch (error) {
    if (error instanceof AgtError && error.code === 'not_found') {
      throw new AgtError('not_found', `no loaded agent ${id}; pass its absolute file path (finding agents in tracked folders needs the tracked-folders extension)`);
    }
    throw error;
  }
}

export const startAgentRoutes: KernelRoutes = async (app, { services }) => {
  app.post('/start', {
    schema: {
      tags: ['Agents'],
      summary: 'Start an agent (loading it from an absolute file path first when needed)',
      description: 'Reviewed files only (403 `AGENT_REVIEW_REQUIRED`). `loaded` is true when this call loaded the file; `startupTriggered` when the start fired `on_startup` for a target. 409 `ambiguous_agent` with `candidates` when a name matches several agents.',
      params: AgentIdParams,
      response: {
        200: Type.Object({ success: Type.Literal(true), loaded: Type.Boolean(), startupTriggered: Type.Boolean(), agent: Type.Optional(AgentStatus) }),
        ...errorResponses(404, 409, 422),
      },
    },
  }, async (request) => {
    const { agent, loaded } = await findOrLoad(services, request.params.id);
    const startupTriggered = agent.started ? false : (await startAgent(services, agent)).startupTriggered;
    return { success: true as const, loaded, startupTriggered, agent: statusOf(services, agent) };
  });
};
