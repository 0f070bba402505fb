/**
 * Backups, restores, the backup schedule's status and Letta Agent File (.af) export/import
 * (docs/backups.md). Paths are on the daemon's machine and absolute; the owner's token chooses them.
 */
import { readFile, stat } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { Type } from 'typebox';
import { AgtError, AgentIdParams, errorResponses } from '@agt/contracts';
import { agentNotLoaded, ambiguousAgentFiles } from '../agents/errors.js';
import { locateAgentFiles } from '../extensions/kernel-points.js';
import { AF_MAX_BYTES } from '../storage/letta-af.js';
import { agentFileFormatInvalid, pathNotAbsolute, restoreSourceMissing } from '../storage/errors.js';
import type { KernelRoutes } from './plugin.js';

const TAGS = ['Backups'];

const BackupReply = Type.Object({
  agentId: Type.String(),
  path: Type.String({ description: 'the backup file' }),
  bytes: Type.Integer(),
  sha256: Type.String({ description: 'SHA-256 of the backup file as written (sealed bytes when sealed)' }),
  schemaVersion: Type.Integer({ description: 'the agent-file schema version of the copy' }),
  sealed: Type.Boolean(),
});

const RestoreReply = Type.Object({
  agentId: Type.String(),
  name: Type.String(),
  filePath: Type.String(),
  did: Type.Union([Type.String(), Type.Null()]),
  schemaVersion: Type.Integer(),
  sealed: Type.Boolean(),
  asNew: Type.Boolean(),
  started: Type.Boolean(),
});

const Run = Type.Object({
  startedAt: Type.String(),
  finishedAt: Type.Union([Type.String(), Type.Null()]),
  completed: Type.Integer(),
  failed: Type.Integer(),
});
const ScheduleReply = Type.Object({
  enabled: Type.Boolean(),
  every: Type.Union([Type.String(), Type.Null()]),
  keep: Type.Union([Type.Integer(), Type.Null()]),
  dir: Type.Union([Type.String(), Type.Null()]),
  sealed: Type.Boolean(),
  nextRunAt: Type.Union([Type.String(), Type.Null()]),
  running: Type.Boolean(),
  lastRun: Type.Union([Run, Type.Null()]),
  problem: Type.Union([Type.String(), Type.Null()]),
});

const ImportReply = Type.Object({
  agentId: Type.String(),
  name: Type.String(),
  filePath: Type.String(),
  did: Type.String(),
  started: Type.Boolean(),
  imported: Type.Object({
    blocks: Type.Integer(),
    memories: Type.Integer({ description: 'blocks also saved as pinned memories' }),
    messages: Type.Integer(),
    tools: Type.Array(Type.String()),
    toolsNotMapped: Type.Array(Type.String()),
  }),
  skipped: Type.Record(Type.String(), Type.Integer()),
});

export const backupRoutes: KernelRoutes<'registry' | 'storage' | 'contributions'> = async (app, { services }) => {
  const { registry, storage } = services;

  app.post(
    '/agents/:id/backup',
    {
      schema: {
        tags: TAGS,
        summary:
          "A consistent copy of a running agent's file (VACUUM INTO on a connection of its own; the agent's turns go on), integrity-checked",
        description:
          'A tracked agent file that is not loaded is copied too (found by the agent locator, never loaded). `path`: an existing folder (the file is named `<agent id>-<time>.agt` there) or a new file in one; default `<backups.dir or data dir/backups>/<agent id>/`. ' +
          "Never over an existing file (409 `conflict`), never inside the daemon's sandbox folder (403 `backup_path_refused`). `seal`: encrypted to the owner identity (`.agt.sealed`); 409 `identity_not_ready` when there is no owner. " +
          '500 `backup_failed` when the copy fails its integrity check. Announced as `backup.completed` / `backup.failed`.',
        params: AgentIdParams,
        body: Type.Object(
          { path: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })), seal: Type.Optional(Type.Boolean()) },
          { additionalProperties: false },
        ),
        response: { 200: BackupReply, ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      const options = { ...(request.body.path ? { path: request.body.path } : {}), seal: request.body.seal === true };
      try {
        return await storage.backup(registry.resolve(request.params.id), options);
      } catch (error) {
        if (!(error instanceof AgtError && error.code === 'not_found')) throw error;
      }
      // Not loaded: a tracked agent file the locator finds by id, handle or name is copied without loading it.
      const found = (await locateAgentFiles(services.contributions.points, request.params.id)) ?? [];
      if (found.length === 0) throw agentNotLoaded(request.params.id);
      if (found.length > 1)
        throw ambiguousAgentFiles(
          request.params.id,
          found.map((filePath) => ({ name: request.params.id, handle: null, filePath })),
        );
      return storage.backupFile(found[0]!, options);
    },
  );

  app.post(
    '/agents/restore',
    {
      schema: {
        tags: TAGS,
        summary: 'Restore a backup (plain or sealed): verified, placed at `to` (never over a file) and loaded',
        description:
          "`to`: a folder (an existing one, or a path ending in `/`, made when its parent exists) where the file keeps the backup's name, or the new file itself; default the agents folder. 400 when its folder is missing. 404 when `from` does not exist; 422 `backup_invalid` (`reason`: corrupt, integrity, foreign, newer, damaged); 403 `backup_sealed_to_another_owner`; " +
          "409 `identity_not_ready` to unseal while the owner identity is locked (or for `asNew`), `restore_target_loaded` when `to` is a loaded agent's file, `restore_target_exists`, `agent_already_loaded` when the backup's agent is loaded (use `asNew`). " +
          '`asNew`: a new agent id and key pair (DID); else the agent keeps its id and DID.',
        body: Type.Object(
          {
            from: Type.String({ minLength: 1, maxLength: 4096 }),
            to: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
            start: Type.Optional(Type.Boolean()),
            asNew: Type.Optional(Type.Boolean()),
            name: Type.Optional(
              Type.String({
                minLength: 1,
                maxLength: 200,
                description: "with `asNew`: the copy's name (default the backup's)",
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: RestoreReply, ...errorResponses(404, 409, 422) },
      },
    },
    async (request) => storage.restore(request.body),
  );

  app.get(
    '/backups',
    {
      schema: {
        tags: TAGS,
        summary: 'The backup schedule (settings `backups`): next run, last run',
        response: { 200: ScheduleReply, ...errorResponses() },
      },
    },
    async () => storage.scheduler.status(),
  );

  app.post(
    '/backups/run',
    {
      schema: {
        tags: TAGS,
        summary:
          'Run the scheduled backup now (every loaded agent, then every tracked agent file); answers once it ends',
        description:
          "With the schedule's settings `backups` (`dir`, `keep`, `seal`), or without a schedule the defaults (`<data dir>/backups`, 7 kept per agent, not sealed). " +
          'A run already going is joined, not doubled. Each copy is announced as `backup.completed` / `backup.failed`; the run becomes `lastRun` of `GET /backups`.',
        response: { 200: Run, ...errorResponses() },
      },
    },
    async () => storage.scheduler.runNow(),
  );

  app.get(
    '/backups/files',
    {
      schema: {
        tags: TAGS,
        summary: 'The backup files in the backups folder, newest first (what POST /agents/restore takes as `from`)',
        description:
          '`<dir>/<agent id>/<name>.agt[.sealed]` only: one level of agent folders, symbolic links not followed, no other path. `sealed` is read from the file, not its name.',
        response: {
          200: Type.Object({
            dir: Type.String({ description: 'the backups folder: settings `backups.dir`, else `<data dir>/backups`' }),
            files: Type.Array(
              Type.Object({
                path: Type.String(),
                name: Type.String(),
                agentId: Type.String({ description: 'the agent folder it is in' }),
                bytes: Type.Integer(),
                modifiedAt: Type.String(),
                sealed: Type.Boolean(),
              }),
            ),
          }),
          ...errorResponses(),
        },
      },
    },
    async () => storage.backupFiles(),
  );

  app.get(
    '/agents/:id/export',
    {
      schema: {
        tags: TAGS,
        summary: 'The agent as a Letta Agent File (.af) document (what maps: docs/backups.md)',
        params: AgentIdParams,
        querystring: Type.Object({ format: Type.Literal('af') }),
        response: { 200: Type.Object({}, { additionalProperties: true }), ...errorResponses(404, 409) },
      },
    },
    async (request) => storage.exportAf(registry.resolve(request.params.id)),
  );

  app.post(
    '/agents/import',
    {
      schema: {
        tags: TAGS,
        summary:
          "Create an agent from a Letta Agent File (.af) on the daemon's machine (needs an owner identity, as create)",
        body: Type.Object(
          {
            from: Type.String({ minLength: 1, maxLength: 4096, description: 'absolute path of the .af file' }),
            format: Type.Optional(Type.Literal('af')),
            directory: Type.Optional(Type.String({ minLength: 1 })),
            start: Type.Optional(Type.Boolean()),
            name: Type.Optional(
              Type.String({
                minLength: 1,
                maxLength: 200,
                description: "the new agent's name (default the .af file's)",
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: ImportReply, ...errorResponses(404, 409, 413, 422) },
      },
    },
    async (request) => {
      const { from } = request.body;
      if (!isAbsolute(from)) throw pathNotAbsolute('from', from);
      const info = await stat(from).catch(() => null);
      if (!info?.isFile()) throw restoreSourceMissing(from);
      if (info.size > AF_MAX_BYTES) throw agentFileFormatInvalid(`larger than ${AF_MAX_BYTES} bytes`);
      let document: unknown;
      try {
        document = JSON.parse(await readFile(from, 'utf8'));
        // Some published .af files are a JSON string holding the document.
        if (typeof document === 'string') document = JSON.parse(document);
      } catch (error) {
        throw agentFileFormatInvalid(`not JSON (${(error as Error).message})`);
      }
      const { directory, name } = request.body;
      return storage.importAf(document, {
        ...(directory ? { directory } : {}),
        ...(name ? { name } : {}),
        start: request.body.start === true,
      });
    },
  );
};
