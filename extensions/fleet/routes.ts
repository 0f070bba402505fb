/**
 * `/fleet`: this daemon's view of the fleet (docs/fleet.md). `GET /fleet` says who this daemon is, whether
 * NATS is reachable and the agents it holds; `GET /fleet/agents` lists every agent placed in the fleet and the
 * daemon that runs it; `GET /fleet/daemons` lists its daemons (daemon-list.ts). Names only: no server credential is ever shown.
 */
import { AgtError, errorResponses, type ExtensionHttp } from '@agt/contracts';
import { Type } from 'typebox';
import { fleetNotConfigured } from './errors.js';
import { drainDaemon, moveAgent } from './move.js';
import { DaemonList } from './daemon-list.js';
import type { Fleet } from './fleet.js';

export const TAG = 'Fleet';

const Placement = Type.Object({
  agentId: Type.String(),
  name: Type.String(),
  handle: Type.Union([Type.String(), Type.Null()]),
  daemon: Type.String({ description: 'the daemon of the fleet that runs it' }),
  since: Type.Integer({ description: 'when it was placed there (epoch ms)' }),
});

const Replication = Type.Object(
  {
    enabled: Type.Boolean({ description: 'agent files are replicated to the replica stream (option `replicate`)' }),
    bucket: Type.Optional(Type.String({ description: "the object store's bucket (copies larger than a message)" })),
    stream: Type.Optional(Type.String({ description: 'the replica stream (bases and changed pages)' })),
    lagMs: Type.Optional(
      Type.Integer({ description: 'how long the oldest change not yet replicated has waited (0: all replicated)' }),
    ),
    agents: Type.Optional(
      Type.Array(
        Type.Object({
          agentId: Type.String(),
          turnId: Type.Union([Type.String(), Type.Null()], { description: 'the last turn id its stored copy holds' }),
          storedAt: Type.Union([Type.Integer(), Type.Null()], {
            description: 'when its last copy was stored (epoch ms)',
          }),
          bytes: Type.Integer({ description: 'the size of its last copy' }),
          lagMs: Type.Integer({ description: 'how long its oldest change not yet replicated has waited' }),
        }),
      ),
    ),
    uploads: Type.Optional(Type.Integer({ description: 'copies stored since the daemon started' })),
    deltas: Type.Optional(Type.Integer({ description: 'of those, stored as the pages changed since the copy before' })),
    bases: Type.Optional(Type.Integer({ description: 'of those, stored whole' })),
    unchanged: Type.Optional(Type.Integer({ description: 'copies equal to the stored one, not sent' })),
    bytes: Type.Optional(Type.Integer({ description: 'bytes sent since the daemon started' })),
    snapshotMs: Type.Optional(Type.Integer({ description: 'time spent copying files, summed' })),
    uploadMs: Type.Optional(Type.Integer({ description: 'time spent storing copies, summed' })),
    failures: Type.Optional(Type.Integer({ description: 'attempts that failed (retried)' })),
  },
  { description: "the replication of this daemon's agent files (docs/fleet.md, Replication)" },
);

export const FleetStatus = Type.Object({
  configured: Type.Boolean({ description: 'settings `fleet` are set (false: the daemon runs alone)' }),
  fleet: Type.Union([Type.String(), Type.Null()], { description: "the fleet's name (settings `fleet.name`)" }),
  daemon: Type.Union([Type.String(), Type.Null()], {
    description: "this daemon's name in it (settings `fleet.daemonName`)",
  }),
  did: Type.Union([Type.String(), Type.Null()], {
    description:
      "this daemon's runtime key, which signs the requests it forwards (list it in the others' settings `fleet.daemonDids`)",
  }),
  connected: Type.Boolean({ description: 'NATS reachable now' }),
  problem: Type.Union([Type.String(), Type.Null()], { description: 'the last connection problem, if any' }),
  ttlSeconds: Type.Integer({ description: "how long a placement outlives its daemon's last heartbeat" }),
  draining: Type.Boolean({
    description:
      'drained (`POST /fleet/drain`): it refuses new agents (409 `daemon_draining`) until `POST /fleet/undrain`',
  }),
  drainTo: Type.Array(Type.String(), { description: 'while draining: the daemons the drain named' }),
  agents: Type.Array(Placement, { description: 'the agents this daemon runs' }),
  replication: Replication,
});

const ALONE = {
  configured: false,
  fleet: null,
  daemon: null,
  did: null,
  connected: false,
  problem: null,
  ttlSeconds: 0,
  draining: false,
  drainTo: [],
  agents: [],
  replication: { enabled: false },
};

export function registerRoutes(http: ExtensionHttp, fleet: () => Fleet | undefined): void {
  const tags = [TAG];
  const need = (): Fleet => {
    const current = fleet();
    if (!current) throw fleetNotConfigured();
    return current;
  };

  http.get(
    '',
    {
      schema: {
        tags,
        summary: "This daemon in the fleet: its names, NATS's state and the agents it runs",
        description: 'Without settings `fleet`: `configured: false` and nothing else (the daemon runs alone).',
        response: { 200: FleetStatus, ...errorResponses() },
      },
    },
    async () => (await fleet()?.status()) ?? ALONE,
  );

  http.get(
    '/agents',
    {
      schema: {
        tags,
        summary: 'Every agent placed in the fleet, with the daemon that runs it',
        description: '503 `unavailable` when settings `fleet` are not set or NATS cannot be reached.',
        response: { 200: Type.Object({ agents: Type.Array(Placement) }), ...errorResponses(503) },
      },
    },
    async () => ({ agents: await need().placements() }),
  );

  http.get(
    '/daemons',
    {
      schema: {
        tags,
        summary: 'Every daemon of the fleet: alive or not, drained or not, the agents it runs, its replication lag',
        description:
          "Alive: its heartbeat is in the members bucket. Its agents: the placements this daemon's watch of the bucket saw renewed within the TTL. A daemon's replication lag is as of its last heartbeat (a quarter of the TTL old at most); the answering daemon's is now. A daemon that is down is listed while it is drained or still holds placements. 503 `unavailable` when settings `fleet` are not set or NATS cannot be reached.",
        response: { 200: DaemonList, ...errorResponses(503) },
      },
    },
    async () => need().daemons(),
  );

  http.post(
    '/move',
    {
      schema: {
        tags,
        summary: 'Move an agent to another daemon of the fleet: stop it where it runs, start it there, nothing lost',
        description:
          "Its running turn gets the usual grace on the way out. When both daemons replicate agent files (option `replicate`), the agent travels as its final copy through the replica stream (`POST /fleet/handoff` on the holder, `POST /fleet/takeover` on the target; `via: replica`) and its file then lives in the target's data directory; otherwise the target loads the same file path (`via: path`: a shared folder). When the target cannot load it, it is loaded back where it was (`restored` in the error). 404 when no daemon runs it; 503 when a daemon does not answer.",
        body: Type.Object({
          agent: Type.String({ minLength: 1, maxLength: 512, description: 'id, handle or name' }),
          daemon: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'the target daemon' }),
        }),
        response: {
          200: Type.Object({
            agentId: Type.String(),
            from: Type.String(),
            to: Type.String(),
            moved: Type.Boolean({ description: 'false: it ran there already' }),
            via: Type.Optional(
              Type.Union([Type.Literal('replica'), Type.Literal('path')], {
                description:
                  '`replica`: its final copy through the replica stream; `path`: the same file (a shared folder)',
              }),
            ),
            filePath: Type.Optional(Type.String({ description: "the agent's file on the target" })),
          }),
          ...errorResponses(404, 409, 422, 503),
        },
      },
    },
    async (request) => moveAgent(need().relay, request.body.agent, request.body.daemon),
  );

  http.post(
    '/drain',
    {
      schema: {
        tags,
        summary: 'Move every agent a daemon runs to other daemons of the fleet, spread evenly (before maintenance)',
        description:
          'First marks the daemon drained: from then on it refuses new agents (409 `daemon_draining`, naming `to`), also after its restart, until `POST /fleet/undrain`. Then each agent moves as with `POST /fleet/move` (through its final copy when the daemons replicate agent files, else the targets must reach its file), one at a time, to the target that runs the fewest agents then; one that cannot move is listed in `failed` and stays where it was.',
        body: Type.Object({
          daemon: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'the daemon to drain' }),
          to: Type.Array(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }), {
            minItems: 1,
            maxItems: 256,
            description: 'the daemons that take its agents',
          }),
        }),
        response: {
          200: Type.Object({
            daemon: Type.String(),
            moved: Type.Array(Type.Object({ agentId: Type.String(), to: Type.String() })),
            failed: Type.Array(Type.Object({ agentId: Type.String(), error: Type.String(), code: Type.String() })),
          }),
          ...errorResponses(503),
        },
      },
    },
    async (request) => {
      const fleet = need();
      if (request.body.to.every((name) => name === request.body.daemon))
        throw new AgtError('bad_request', 'name at least one other daemon to move the agents to');
      await fleet.marks.mark(request.body.daemon, request.body.to);
      return drainDaemon(fleet.relay, await fleet.records(), request.body.daemon, request.body.to);
    },
  );

  http.post(
    '/undrain',
    {
      schema: {
        tags,
        summary: 'Let a drained daemon take new agents again',
        description: '`undrained: false` when the daemon was not drained.',
        body: Type.Object({
          daemon: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'the drained daemon' }),
        }),
        response: {
          200: Type.Object({ daemon: Type.String(), undrained: Type.Boolean() }),
          ...errorResponses(503),
        },
      },
    },
    async (request) => ({
      daemon: request.body.daemon,
      undrained: await need().marks.unmark(request.body.daemon),
    }),
  );
}
