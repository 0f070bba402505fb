/** `POST /agents/autostart`: scan folders and start the agents marked autostart (kernel/agents/autostart.ts). */
import { Type } from 'typebox';
import { errorResponses } from '../../contracts/http.js';
import { autostart, SKIP_REASONS } from '../agents/autostart.js';
import type { KernelModule } from '../kernel.js';

const Entry = { filePath: Type.String(), name: Type.String() };

export const autostartModule: KernelModule = {
  name: 'autostart',
  register(app, kernel) {
    app.post('/agents/autostart', {
      schema: {
        tags: ['Agents'],
        summary: 'Load and start the reviewed, autostart, not password-protected agents under the given folders',
        body: Type.Object(
          {
            trackedDirs: Type.Array(Type.String({ minLength: 1 }), { maxItems: 100 }),
            maxDepth: Type.Optional(Type.Integer({ minimum: 0, maximum: 10, default: 2 })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            scanned: Type.Integer(),
            started: Type.Array(Type.Object({ agentId: Type.String(), ...Entry, startupTriggered: Type.Boolean() })),
            skipped: Type.Array(
              Type.Object({
                ...Entry,
                reason: Type.Union(SKIP_REASONS.map((reason) => Type.Literal(reason)) as [ReturnType<typeof Type.Literal<(typeof SKIP_REASONS)[number]>>]),
                agentId: Type.Optional(Type.String()),
              }),
            ),
            failed: Type.Array(Type.Object({ ...Entry, error: Type.String() })),
          }),
          ...errorResponses(),
        },
      },
    }, async (request) => autostart(kernel, request.body.trackedDirs, request.body.maxDepth ?? 2));
  },
};
