/**
 * `/tracked-folders`: the folders and what they hold. Adding or removing a folder writes settings
 * `trackedFolders` (the extension follows the settings, so `PATCH /settings` works the same); listing
 * agents reads files without loading or leasing them.
 */
import { isAbsolute } from 'node:path';
import { errorResponses } from '@agt/contracts';
import type { ExtensionContext, ExtensionHttp } from '@agt/contracts';
import { folderAlreadyTracked, folderNotAbsolute, folderNotDirectory } from './errors.js';
import { realDirectory, trackedSettings } from './folders.js';
import { isInside, levelsBelow } from './scan.js';
import { AddFolderBody, FolderInfo, FolderList, FolderQuery, RemoveResult, TAG, TrackedAgentList } from './schemas.js';
import type { Tracker } from './tracker.js';

type Ctx = Pick<ExtensionContext, 'settings' | 'agents'>;

/**
 * The tracked folder (as configured) that already reaches `real`: the same folder, or one it lies within `maxDepth`
 * levels of.
 */
async function coveringFolder(folders: readonly string[], real: string, maxDepth: number): Promise<string | null> {
  for (const folder of folders) {
    const folderReal = await realDirectory(folder);
    if (
      folder === real ||
      (folderReal !== null && isInside(folderReal, real) && levelsBelow(folderReal, real) <= maxDepth)
    )
      return folder;
  }
  return null;
}

export function registerRoutes(http: ExtensionHttp, ctx: Ctx, tracker: Tracker): void {
  const tags = [TAG];

  http.get(
    '',
    {
      schema: {
        tags,
        summary: 'The tracked folders, whether each exists and how many agent files it holds',
        response: { 200: FolderList, ...errorResponses() },
      },
    },
    async () => {
      // A folder made or removed since it was last walked is walked (or dropped) first.
      await tracker.recheck();
      return { folders: tracker.listFolders(), maxScanDepth: tracker.maxScanDepth };
    },
  );

  http.post(
    '',
    {
      schema: {
        tags,
        summary:
          'Track a folder: its agent files can then be started by id, handle or name, autostart at boot and are watched',
        description:
          'Writes settings `trackedFolders`. 400 when the path is not absolute or not a directory; 409 `conflict` with `coveredBy` when it is tracked already or inside a tracked folder within its `maxScanDepth` levels. Adding a folder does not autostart its agents (that happens at boot, or with `POST /agents/autostart`).',
        body: AddFolderBody,
        response: { 201: FolderInfo, ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      const { path } = request.body;
      if (!isAbsolute(path)) throw folderNotAbsolute(path);
      const real = await realDirectory(path);
      if (real === null) throw folderNotDirectory(path);
      const { folders, maxScanDepth } = trackedSettings(ctx.settings.current());
      const covered = await coveringFolder(folders, real, maxScanDepth);
      if (covered !== null) throw folderAlreadyTracked(path, covered);
      ctx.settings.update({ trackedFolders: [...(ctx.settings.current().trackedFolders ?? []), path] });
      await tracker.reconcile();
      const info = tracker.listFolders().find((folder) => folder.path === path);
      return reply.status(201).send(info ?? { path, exists: true, agentCount: 0, truncated: false });
    },
  );

  http.delete(
    '',
    {
      schema: {
        tags,
        summary: 'Stop tracking a folder (its agents stay loaded; nothing is deleted)',
        querystring: FolderQuery,
        response: { 200: RemoveResult, ...errorResponses() },
      },
    },
    async (request) => {
      const { path } = request.query;
      const current = ctx.settings.current().trackedFolders ?? [];
      const kept = current.filter((folder) => folder !== path);
      if (kept.length === current.length) return { success: false };
      ctx.settings.update({ trackedFolders: kept });
      await tracker.reconcile();
      return { success: true };
    },
  );

  http.get(
    '/agents',
    {
      schema: {
        tags,
        summary: 'The agent files of the tracked folders, read without loading or leasing them',
        description: 'Files that cannot be read as agent files are left out.',
        response: { 200: TrackedAgentList, ...errorResponses() },
      },
    },
    async () => {
      await tracker.settled();
      const loaded = new Map(
        ctx.agents
          .list()
          .filter((agent) => agent.filePath !== null)
          .map((agent) => [agent.filePath!, agent]),
      );
      const agents = tracker.index.all().flatMap(({ filePath, summary }) => {
        if (summary === null) return [];
        const live = loaded.get(filePath);
        return [
          {
            filePath,
            id: live?.id ?? summary.id,
            name: live?.name ?? summary.name,
            handle: live ? (live.handle ?? null) : summary.handle,
            loaded: live !== undefined,
            reviewed: summary.reviewed,
            autostart: live ? live.config.autostart === true : summary.autostart,
            passwordProtected: summary.passwordProtected,
          },
        ];
      });
      return { agents: agents.sort((a, b) => a.filePath.localeCompare(b.filePath)) };
    },
  );
}
