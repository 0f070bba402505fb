/**
 * The review gate (docs/agent-files.md#review-gate): `GET /agents/review` describes a file (loaded or not) and says
 * whether it is reviewed on this machine; `POST /agents/review/accept` marks it reviewed. Marks live in the data
 * directory (see kernel/agents/review-marks.ts).
 */
import { isAbsolute } from 'node:path';
import { Type } from 'typebox';
import { type AgentConfig, errorResponses } from '@agt/contracts';
import { ReviewInfo } from '../http-api/agents-api.js';
import { AgentFile } from '../agents/agent-file.js';
import { canonicalPath, validateStoredConfig } from '../agents/registry.js';
import { capConfig, ceilingFor } from '../agents/ceiling.js';
import { configProblems } from '../agents/config-checks.js';
import { reviewSummary, UNCLAIMED_IDENTITY } from '../agents/review-summary.js';
import type { KernelServices } from '../services.js';
import type { KernelRoutes } from './plugin.js';
import { filePathNotAbsolute } from '../agents/errors.js';
import { readAgentKey, sameKey } from '../agents/agent-key.js';

/** The kernel services this route group uses. */
type Uses = 'agentIdentity' | 'builtinTools' | 'contributions' | 'logger' | 'registry' | 'settings';

const TAGS = ['Agents'];
const FilePath = Type.String({ minLength: 1, description: 'absolute path of the .agt file' });

/** Reads what the review needs from the loaded agent, or from the file opened read-only for the moment. */
async function reviewInfo(services: Pick<KernelServices, Uses>, filePath: string, accept: boolean) {
  if (!isAbsolute(filePath)) throw filePathNotAbsolute(filePath);
  const registry = services.registry;
  const canonical = canonicalPath(filePath);
  const loaded = registry.byPath(canonical);
  const describe = async (file: AgentFile, config: Readonly<AgentConfig>) => {
    // A file claiming the id of an agent known here with another key is not that agent: never reviewed
    // as it, and no mark is made under that id (it would be the other agent's).
    const known = registry.known.get(config.id);
    const conflict = known !== undefined && !sameKey(known, readAgentKey(file));
    if (accept && conflict) registry.known.check(config.id, readAgentKey(file), canonical);
    if (accept) registry.reviews.accept(config, canonical);
    const identity = services.agentIdentity.reviewIdentity(file, config) ?? UNCLAIMED_IDENTITY;
    // The same cap the loaded agent applies (ceiling.ts), and the extensions' config checks.
    const { capped } = capConfig(config as AgentConfig, ceilingFor(services.settings.current(), config.id));
    const refused = configProblems(services.contributions.points, config, config.id, services.logger);
    return {
      agentId: config.id,
      filePath: canonical,
      reviewed: !conflict && registry.reviews.isReviewed(config),
      summary: { ...reviewSummary(config, identity, services.builtinTools), capped, refused },
      schemaObjects: file.schemaObjects(),
    };
  };
  if (loaded) return describe(loaded.file, loaded.fileConfig);
  // Read-only: reviewing must not migrate, lease or otherwise touch a file nobody loaded yet.
  await registry.readFirst(canonical);
  const file = AgentFile.open(canonical, { readonly: true });
  try {
    return await describe(file, validateStoredConfig(file.config.get(), canonical));
  } finally {
    await file.close();
  }
}

export const agentReviewRoutes: KernelRoutes<Uses> = async (app, { services }) => {
  app.get(
    '/review',
    {
      schema: {
        tags: TAGS,
        summary: 'What an agent file can do, and whether it is reviewed on this machine',
        description:
          '`reviewed` is false for a file that claims the id of an agent this daemon knows with another key.',
        querystring: Type.Object({ filePath: FilePath }),
        response: { 200: ReviewInfo, ...errorResponses(404, 422) },
      },
    },
    async (request) => reviewInfo(services, request.query.filePath, false),
  );

  app.post(
    '/review/accept',
    {
      schema: {
        tags: TAGS,
        summary: 'Mark an agent file reviewed on this machine (for its current security-relevant config)',
        description:
          '409 `agent_id_conflict` when the file claims the id of an agent this daemon knows with another key (load it `asNew`).',
        body: Type.Object({ filePath: FilePath }),
        response: { 200: ReviewInfo, ...errorResponses(404, 409, 422) },
      },
    },
    async (request) => reviewInfo(services, request.body.filePath, true),
  );
};
