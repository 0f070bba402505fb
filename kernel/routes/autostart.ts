/** `POST /agents/autostart`: scan folders and start the agents marked autostart (services/agents/autostart.ts). */
import { Type } from 'typebox';
import { errorResponses } from '@agt/contracts';
import { autostart, SKIP_REASONS, TRUNCATION_REASONS } from '../agents/autostart.js';
import { isPasswordProtected } from '../credentials/index.js';
import type { KernelRoutes } from './plugin.js';

const Entry = { filePath: Type.String(), name: Type.String() };

export const autostartRoutes: KernelRoutes<'runtime' | 'bus' | 'contributions' | 'registry' | 'fileReader'> = async (
  app,
  { services },
) => {
  app.post(
    '/autostart',
    {
      schema: {
        tags: ['Agents'],
        summary: 'Load and start the reviewed, autostart, not password-protected agents under the given folders',
        description:
          'The folder walk is asynchronous and bounded: at most `maxDepth` levels, 10,000 directory entries, 200 `.agt` files, and 5 s for walking and reading the files found; ' +
          'hidden folders, `node_modules`, `/proc`, `/sys`, `/dev`, `/run`, `/boot`, `/snap` and symbolic links are skipped. ' +
          'A walk cut short answers `truncated: true` with `truncatedBy` (`entries`, `agent_files`, `time`).',
        body: Type.Object(
          {
            trackedDirs: Type.Array(Type.String({ minLength: 1 }), { maxItems: 100 }),
            maxDepth: Type.Optional(Type.Integer({ minimum: 0, maximum: 10, default: 2 })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            scanned: Type.Integer({
              description: '`.agt` files read (found before the bounds, read within the time budget)',
            }),
            truncated: Type.Boolean({
              description: 'a bound stopped the folder walk early (10,000 entries, 200 agent files, 5 s)',
            }),
            truncatedBy: Type.Optional(
              Type.Union([
                Type.Literal(TRUNCATION_REASONS[0]),
                Type.Literal(TRUNCATION_REASONS[1]),
                Type.Literal(TRUNCATION_REASONS[2]),
              ]),
            ),
            started: Type.Array(Type.Object({ agentId: Type.String(), ...Entry, startupTriggered: Type.Boolean() })),
            skipped: Type.Array(
              Type.Object({
                ...Entry,
                reason: Type.Union(
                  SKIP_REASONS.map((reason) => Type.Literal(reason)) as [
                    ReturnType<typeof Type.Literal<(typeof SKIP_REASONS)[number]>>,
                  ],
                ),
                agentId: Type.Optional(Type.String()),
              }),
            ),
            failed: Type.Array(Type.Object({ ...Entry, error: Type.String() })),
          }),
          ...errorResponses(),
        },
      },
    },
    async (request) =>
      autostart(
        { ...services, isPasswordProtected, readSummary: (filePath) => services.fileReader.summary(filePath) },
        request.body.trackedDirs,
        request.body.maxDepth ?? 2,
      ),
  );
};
