/** The `fleet` extension's manifest `config`: timing only (who and where the fleet is lives in settings `fleet`). */
import { type Static, Type } from 'typebox';

export const FleetOptions = Type.Object(
  {
    ttlSeconds: Type.Integer({
      minimum: 2,
      maximum: 600,
      default: 15,
      description:
        "how long an agent's placement outlives its daemon's last heartbeat: another daemon may run the agent after that; the holder stops it earlier (docs/fleet.md)",
    }),
    cutOffSeconds: Type.Number({
      minimum: 0,
      maximum: 600,
      default: 0,
      description:
        "how long a daemon runs its agents without an answer from NATS before it stops them all, promised in its placements; once NATS says a daemon's connection is gone, the others take its agents over this long (and 1 s) later instead of after the TTL (docs/fleet.md, Failover). Keep it above the longest stall of a daemon's event loop (the bench uses 3); 0: off, only the TTL",
    }),
    adopt: Type.Boolean({
      default: true,
      description:
        "adopt the agents of a daemon that stopped renewing its placements (it died or was cut off), loading each from the path it ran from: needs the agents' files on a shared file system",
    }),
    replicate: Type.Boolean({
      default: false,
      description:
        "replicate each agent's file to the fleet's JetStream object store after every accepted chat and every turn, so another daemon takes a dead daemon's agents over, and a planned move or drain works, without a shared file system (docs/fleet.md)",
    }),
    replicas: Type.Integer({
      minimum: 1,
      maximum: 5,
      default: 1,
      description:
        "copies JetStream keeps of the placement bucket, the event stream and the replicas' object store when they are made: 3 on a 3-node NATS cluster, so losing one node changes nothing (1 on a single server)",
    }),
    requestTimeoutMs: Type.Integer({
      minimum: 1000,
      maximum: 600_000,
      default: 120_000,
      description: 'how long a request forwarded to the daemon that runs an agent may take (a chat waits for its turn)',
    }),
  },
  { additionalProperties: false },
);

export type FleetOptions = Static<typeof FleetOptions>;
