/** Route schemas of the compute extension: validation, reply types and the OpenAPI document. */
import { Type } from 'typebox';

export const TAG = 'Compute';

export const ContainerInfo = Type.Object(
  {
    name: Type.String(),
    id: Type.String({ description: "The engine's container id" }),
    tier: Type.Union([Type.Literal('shared'), Type.Literal('isolated')]),
    agentId: Type.Union([Type.String(), Type.Null()], {
      description: 'The agent of an isolated container; null for the shared one',
    }),
    state: Type.String({ description: "The engine's state: created, running, exited, ..." }),
    running: Type.Boolean(),
    image: Type.String(),
    network: Type.Boolean({
      description: 'Whether it has a network (only isolated containers of agents granted `security.compute_network`)',
    }),
    created_at: Type.Integer({ description: 'Epoch milliseconds' }),
  },
  { additionalProperties: false },
);

export const ComputeStatus = Type.Object(
  {
    engine: Type.Object(
      {
        reachable: Type.Boolean(),
        version: Type.Union([Type.String(), Type.Null()]),
        host: Type.String({ description: 'The engine address in use' }),
      },
      { additionalProperties: false },
    ),
    image: Type.Object(
      {
        name: Type.String(),
        present: Type.Boolean({ description: 'false until `POST /compute/setup` built it' }),
        busybox: Type.Union([Type.String(), Type.Null()], {
          description: 'The static busybox setup would build from; null when none is found',
        }),
      },
      { additionalProperties: false },
    ),
    missing: Type.Array(Type.String(), {
      description:
        'What stands between this daemon and running commands: `engine` (unreachable), `image` (not built), `busybox` (none to build it from)',
    }),
    limits: Type.Object(
      {
        memoryMb: Type.Integer(),
        cpus: Type.Number(),
        pids: Type.Integer(),
        defaultTimeoutMs: Type.Integer(),
        maxTimeoutMs: Type.Integer(),
      },
      { additionalProperties: false },
    ),
    containers: Type.Array(ContainerInfo),
  },
  { additionalProperties: false },
);

export const SetupResult = Type.Object(
  {
    image: Type.String(),
    built: Type.Boolean({
      description: 'false when the image was there already (pass `rebuild: true` to build it again)',
    }),
    busybox: Type.Union([Type.String(), Type.Null()], { description: 'The busybox it was built from' }),
  },
  { additionalProperties: false },
);

export const SetupBody = Type.Object(
  {
    rebuild: Type.Optional(
      Type.Boolean({
        description: 'Build again although the image exists (containers are recreated on their next exec)',
      }),
    ),
  },
  { additionalProperties: false },
);

export const ContainerParams = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
);

export const DestroyResult = Type.Object({ success: Type.Boolean() }, { additionalProperties: false });

export const ExecLogQuery = Type.Object(
  {
    agentId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 128, description: "One agent's execs (by id); default: every agent's" }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  },
  { additionalProperties: false },
);

export const ExecLogEntry = Type.Object(
  {
    id: Type.Integer(),
    agentId: Type.String(),
    origin: Type.Union([Type.Literal('tool'), Type.Literal('command')]),
    target: Type.Union([Type.String(), Type.Null()]),
    command: Type.String({ description: 'Cut at 2,000 characters' }),
    exit_code: Type.Union([Type.Integer(), Type.Null()]),
    timed_out: Type.Boolean(),
    error: Type.Union([Type.String(), Type.Null()]),
    started_at: Type.Integer(),
    duration_ms: Type.Integer(),
    stdout_bytes: Type.Integer(),
    stderr_bytes: Type.Integer(),
  },
  { additionalProperties: false },
);

export const ExecLogList = Type.Object({ entries: Type.Array(ExecLogEntry) }, { additionalProperties: false });
