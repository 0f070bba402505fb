/**
 * `POST /agents/{id}/start`: `{id}` is a loaded agent (id, handle or name) or an absolute agent file
 * path (URL-encoded), which is loaded first through the review gate. Starting fires the agent's
 * `on_startup` trigger once; starting an agent that already started is a no-op. An id, handle or name
 * no loaded agent matches is looked up through the agent locator extension point (`contracts/points.ts`,
 * offered by the tracked-folders extension): one file is loaded through the review gate, several
 * answer 409 `ambiguous_agent` with `candidates`, none 404; with no locator offered the answer is 503
 * `unavailable` naming tracked-folders.
 */
import { isAbsolute } from 'node:path';
import { Type } from 'typebox';
import { AgentStatus, CappedField, RefusedField } from '../http-api/agents-api.js';
import { AgtError, AgentIdParams, errorResponses } from '@agt/contracts';
import { startAgent } from '../agents/start-agent.js';
import { locateAgentFiles } from '../extensions/kernel-points.js';
import type { LoadedAgent } from '../agents/loaded-agent.js';
import type { KernelServices } from '../services.js';
import type { KernelRoutes } from './plugin.js';
import { statusOf } from './agents.js';
import { agentNotLocated, ambiguousAgentFiles, noAgentLocator } from '../agents/errors.js';

/** The kernel services this route group uses. */
type Uses = 'bus' | 'contributions' | 'launcher' | 'registry' | 'runtime' | 'storage';

/**
 * The name and handle of each candidate file, read without loading it (a file that cannot be read is named by its
 * path).
 */
async function describeCandidates(services: Pick<KernelServices, Uses>, filePaths: string[]) {
  const out: Array<{ name: string; handle: string | null; filePath: string }> = [];
  for (const filePath of filePaths) {
    try {
      const { name, handle } = await services.launcher.summarize(filePath);
      out.push({ name, handle, filePath });
    } catch {
      out.push({ name: filePath, handle: null, filePath });
    }
  }
  return out;
}

async function findOrLoad(
  services: Pick<KernelServices, Uses>,
  id: string,
): Promise<{ agent: LoadedAgent; loaded: boolean }> {
  if (isAbsolute(id)) {
    const before = new Set(services.registry.list());
    const agent = await services.registry.load(id, { requireReview: true });
    return { agent, loaded: !before.has(agent) };
  }
  try {
    return { agent: services.registry.resolve(id), loaded: false };
  } catch (error) {
    if (!(error instanceof AgtError && error.code === 'not_found')) throw error;
  }
  const found = await locateAgentFiles(services.contributions.points, id);
  if (found === null) {
    throw noAgentLocator(id);
  }
  if (found.length === 0) throw agentNotLocated(id);
  if (found.length > 1) throw ambiguousAgentFiles(id, await describeCandidates(services, found));
  // The file may be loaded already (under a name the registry matches in another case): not loaded again.
  const before = new Set(services.registry.list());
  const agent = await services.registry.load(found[0]!, { requireReview: true });
  return { agent, loaded: !before.has(agent) };
}

export const startAgentRoutes: KernelRoutes<Uses> = async (app, { services }) => {
  app.post(
    '/start',
    {
      schema: {
        tags: ['Agents'],
        summary: 'Start an agent (loading it from an absolute file path first when needed)',
        description:
          'Reviewed files only (403 `AGENT_REVIEW_REQUIRED`). `loaded` is true when this call loaded the file; `startupTriggered` when the start fired `on_startup` for a target. 409 `ambiguous_agent` with `candidates` when a name matches several agents.',
        params: AgentIdParams,
        response: {
          200: Type.Object({
            success: Type.Literal(true),
            loaded: Type.Boolean(),
            startupTriggered: Type.Boolean(),
            agent: Type.Optional(AgentStatus),
            capped: Type.Array(CappedField, {
              description:
                "what the owner's ceiling narrows in the file's `security` and `limits` (as in the load answer)",
            }),
            refused: Type.Array(RefusedField, {
              description: "parts of the config the owner's settings refuse (as in the load answer)",
            }),
          }),
          ...errorResponses(404, 409, 422, 503),
        },
      },
    },
    async (request) => {
      const { agent, loaded } = await findOrLoad(services, request.params.id);
      const startupTriggered = agent.started ? false : (await startAgent(services, agent)).startupTriggered;
      return {
        success: true as const,
        loaded,
        startupTriggered,
        agent: statusOf(services, agent),
        capped: [...agent.capped],
        refused: services.registry.configProblems(agent),
      };
    },
  );
};
