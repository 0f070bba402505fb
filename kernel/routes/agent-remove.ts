/**
 * `DELETE /agents/{id}`: unload a loaded agent and delete its file (with SQLite's side files), for
 * `agt rm`. Only a file the registry loaded as an agent can be deleted this way: the path comes from the
 * loaded agent, never from the request.
 */
import { rm } from 'node:fs/promises';
import { Type } from 'typebox';
import { AgtError, AgentIdParams, errorResponses } from '@agt/contracts';
import type { KernelRoutes } from './plugin.js';

/** SQLite's files beside a database (write-ahead log, shared memory, rollback journal). */
const SIDE_FILES = ['-wal', '-shm', '-journal'];

export const agentRemoveRoutes: KernelRoutes<'registry'> = async (app, { services }) => {
  const registry = services.registry;

  app.delete(
    '',
    {
      schema: {
        tags: ['Agents'],
        summary: 'Unload an agent and delete its file',
        description:
          "Stops the agent as `POST /agents/{id}/stop` does, then deletes its `.agt` file (and SQLite's `-wal`, `-shm`, `-journal` beside it). There is no undo. 409 when the agent has no file.",
        params: AgentIdParams,
        response: {
          200: Type.Object({ agentId: Type.String(), filePath: Type.String(), deleted: Type.Literal(true) }),
          ...errorResponses(404, 409),
        },
      },
    },
    async (request) => {
      const agent = registry.resolve(request.params.id);
      const filePath = agent.filePath;
      if (!filePath) throw new AgtError('conflict', `agent ${agent.id} has no file to delete`);
      await registry.unload(agent, { reason: 'delete' });
      for (const path of [filePath, ...SIDE_FILES.map((suffix) => filePath + suffix)]) await rm(path, { force: true });
      return { agentId: agent.id, filePath, deleted: true as const };
    },
  );
};
