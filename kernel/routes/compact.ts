/**
 * `POST /agents/{id}/compact`: summarize a loop's older history on demand (rules in
 * kernel/runtime/loops/compaction.ts). 409 mid-turn, already compacting, nothing to compact or a
 * disabled loop; 502 `upstream_error` when summarization fails (history untouched).
 */
import { Type } from 'typebox';
import { LOOP_NAME_PATTERN } from '../agents/config-schema.js';
import { AgentIdParams, errorResponses } from '@agt/contracts';
import { compactLoop, KEEP_RECENT_TURNS } from '../runtime/loops/compaction.js';
import type { KernelRoutes } from './plugin.js';
import { bodyOptional } from './control.js';

const LoopName = Type.String({ pattern: LOOP_NAME_PATTERN });

export const compactRoutes: KernelRoutes<'runtime'> = async (app, { services }) => {
  const service = services.runtime;
  app.post(
    '/compact',
    {
      preValidation: bodyOptional,
      schema: {
        tags: ['Loops'],
        summary: 'Compact a loop: summarize its older history with the agent’s model into one summary row',
        description: `The newest ${KEEP_RECENT_TURNS} turns stay verbatim; older rows (an earlier summary included) become one \`system\`/\`summary\` row in their place, and \`loop.compacted\` is emitted. The loop is held busy meanwhile: chats and triggers that arrive queue and run after it. \`?loop=\` wins over the body's \`loop\`. 409 mid-turn, already compacting, nothing to compact, or a disabled loop; 502 \`upstream_error\` when summarization fails (history untouched); 503 when no provider serves the model.`,
        params: AgentIdParams,
        querystring: Type.Object({ loop: Type.Optional(LoopName) }),
        body: Type.Object(
          { loop: Type.Optional(LoopName) },
          { description: 'optional: a bodiless POST (no Content-Type) is fine' },
        ),
        response: {
          200: Type.Object({
            agentId: Type.String(),
            loop: Type.String(),
            removed: Type.Integer({ description: 'rows replaced by the summary' }),
            kept: Type.Integer({ description: 'newest rows kept verbatim' }),
            summaryRowId: Type.Integer(),
            summaryChars: Type.Integer(),
          }),
          ...errorResponses(404, 409, 502, 503),
        },
      },
    },
    async (request) => {
      const runtime = service.forRequest(request.params.id);
      const loop = request.query.loop ?? request.body.loop ?? 'main';
      const result = await compactLoop(runtime, loop);
      return { agentId: runtime.id, ...result };
    },
  );
};
