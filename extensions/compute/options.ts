/** The compute extension's manifest `config` (docs/compute.md), with its defaults. */
import { Type, type Static } from 'typebox';

export const ComputeOptions = Type.Object(
  {
    dockerHost: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          "the engine: `unix:///path/docker.sock` or `tcp://host:port` (default: the daemon's DOCKER_HOST, else the local socket)",
      }),
    ),
    image: Type.String({
      minLength: 1,
      default: 'agt-compute-base:1',
      description: 'the base image `POST /compute/setup` builds and containers run',
    }),
    busybox: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'a statically linked busybox to build the base image from (default: /bin/busybox, else /usr/bin/busybox)',
      }),
    ),
    memoryMb: Type.Integer({
      minimum: 16,
      maximum: 1_048_576,
      default: 512,
      description: 'memory of each container (no swap beyond it)',
    }),
    cpus: Type.Number({ exclusiveMinimum: 0, maximum: 256, default: 1, description: 'CPUs of each container' }),
    pids: Type.Integer({ minimum: 8, maximum: 1_000_000, default: 256, description: 'processes of each container' }),
    tmpMb: Type.Integer({
      minimum: 1,
      maximum: 65_536,
      default: 64,
      description: 'size of the in-memory /tmp of each container',
    }),
    network: Type.String({
      minLength: 1,
      default: 'bridge',
      description: 'the engine network of isolated containers whose agent is granted `security.compute_network`',
    }),
    defaultTimeoutMs: Type.Integer({
      minimum: 1,
      default: 30_000,
      description: 'time limit of an exec that names none',
    }),
    maxTimeoutMs: Type.Integer({ minimum: 1, default: 600_000, description: 'the most an exec may ask for' }),
    engineTimeoutMs: Type.Integer({
      minimum: 100,
      default: 10_000,
      description: 'time limit of one call to the engine (an exec itself excepted)',
    }),
    execLogSize: Type.Integer({
      minimum: 1,
      maximum: 10_000,
      default: 100,
      description: 'exec log entries kept per agent',
    }),
  },
  { additionalProperties: false },
);

export type ComputeOptions = Static<typeof ComputeOptions>;
