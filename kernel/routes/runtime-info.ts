/**
 * `GET /runtime`: diagnostics of this daemon: version, uptime, pid, memory, the data directory,
 * loaded agents with their states, extensions, and how full the event buffer is. Read-only, never a
 * secret (the token and key files are named by the directory only).
 */
import { Type } from 'typebox';
import { errorResponses } from '@agt/contracts';
import type { KernelRoutes } from './plugin.js';

const RuntimeInfo = Type.Object({
  version: Type.String(),
  node: Type.String({ description: 'the Node.js version running the daemon' }),
  pid: Type.Integer(),
  startedAt: Type.Integer({ description: 'epoch ms' }),
  uptimeMs: Type.Integer(),
  dataDir: Type.String({ description: 'the data directory (settings, daemon-token, key files, pid file)' }),
  memory: Type.Object(
    { rss: Type.Integer(), heapUsed: Type.Integer(), heapTotal: Type.Integer(), external: Type.Integer() },
    { description: 'bytes' },
  ),
  agents: Type.Object({
    loaded: Type.Integer(),
    byRuntimeState: Type.Record(Type.String(), Type.Integer(), {
      description: 'how many loaded agents are in each runtime state',
    }),
  }),
  extensions: Type.Array(
    Type.Object({
      name: Type.String(),
      enabled: Type.Boolean(),
      loaded: Type.Boolean(),
      state: Type.Optional(Type.String()),
      error: Type.Union([Type.String(), Type.Null()]),
      problem: Type.Optional(
        Type.Union([Type.String(), Type.Null()], {
          description: 'what the running extension cannot do now (GET /runtime/extensions)',
        }),
      ),
    }),
  ),
  events: Type.Object({
    epoch: Type.String(),
    latestCursor: Type.Integer(),
    bufferedFrames: Type.Integer(),
    bufferedBytes: Type.Integer(),
    capacity: Type.Integer({ description: 'frames the buffer holds at most' }),
    truncated: Type.Integer({ description: 'frames replaced by a preview because they were too large' }),
  }),
});

export const runtimeInfoRoutes: KernelRoutes<
  'bus' | 'dataDir' | 'extensions' | 'registry' | 'runtime' | 'startedAt' | 'version'
> = async (app, { services }) => {
  app.get(
    '',
    {
      schema: {
        tags: ['Runtime'],
        summary: 'Diagnostics: version, uptime, pid, memory, data directory, agents, extensions, event buffer',
        response: { 200: RuntimeInfo, ...errorResponses() },
      },
    },
    async () => {
      const byRuntimeState: Record<string, number> = {};
      const agents = services.registry.list();
      for (const agent of agents) {
        const state = services.runtime.status(agent).runtimeState;
        byRuntimeState[state] = (byRuntimeState[state] ?? 0) + 1;
      }
      const memory = process.memoryUsage();
      const buffer = services.bus.stats();
      return {
        version: services.version,
        node: process.versions.node,
        pid: process.pid,
        startedAt: services.startedAt,
        uptimeMs: Math.max(0, Date.now() - services.startedAt),
        dataDir: services.dataDir,
        memory: { rss: memory.rss, heapUsed: memory.heapUsed, heapTotal: memory.heapTotal, external: memory.external },
        agents: { loaded: agents.length, byRuntimeState },
        extensions: services.extensions.status().map((row) => ({
          name: row.name,
          enabled: row.enabled,
          loaded: row.loaded,
          ...(row.state ? { state: row.state } : {}),
          error: row.error,
          problem: row.problem ?? null,
        })),
        events: {
          epoch: services.bus.epoch,
          latestCursor: services.bus.latest,
          bufferedFrames: buffer.frames,
          bufferedBytes: buffer.bytes,
          capacity: services.bus.capacity,
          truncated: buffer.truncated,
        },
      };
    },
  );
};
