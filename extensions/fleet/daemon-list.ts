/**
 * `GET /fleet/daemons`: every daemon of the fleet as one list, put together from the three places the fleet
 * keeps what it knows of its daemons: the members bucket (the daemons alive, with what each said of itself in
 * its last heartbeat: its replication lag), the drain marks (kept until undrained, also for a daemon that is
 * down) and the placement records (the agents each runs, as this daemon's watch of the bucket saw them renewed
 * within the TTL). The daemon that answers gives its own figures as they are now.
 */
import { AgtError } from '@agt/contracts';
import { Type } from 'typebox';
import type { DrainMark } from './drain-marks.js';
import { fleetUnreachable } from './errors.js';
import type { MemberRecord } from './members.js';
import type { PlacementRecord } from './placement.js';

const DaemonReplication = Type.Object(
  {
    enabled: Type.Boolean({ description: 'it replicates agent files to the replica stream (option `replicate`)' }),
    lagMs: Type.Optional(
      Type.Integer({ description: 'how long its oldest change not yet replicated had waited (0: all replicated)' }),
    ),
  },
  { description: "as of its last heartbeat (the answering daemon's: now)" },
);

export const FleetDaemon = Type.Object({
  name: Type.String({ description: "the daemon's name in the fleet (its settings `fleet.daemonName`)" }),
  self: Type.Boolean({ description: 'the daemon that answers' }),
  alive: Type.Boolean({
    description:
      'its heartbeat is in the members bucket (put every quarter of the TTL, dropped a TTL after the last one)',
  }),
  heartbeatAt: Type.Union([Type.Integer(), Type.Null()], {
    description: 'when it put its last heartbeat (epoch ms, its own clock); null when not alive',
  }),
  draining: Type.Boolean({ description: 'drained (`POST /fleet/drain`): it takes no new agent until undrained' }),
  drainTo: Type.Array(Type.String(), { description: 'while draining: the daemons the drain named' }),
  drainedSince: Type.Union([Type.Integer(), Type.Null()], { description: 'when it was drained (epoch ms)' }),
  agents: Type.Array(
    Type.Object({
      agentId: Type.String(),
      name: Type.String(),
      handle: Type.Union([Type.String(), Type.Null()]),
      since: Type.Integer({ description: 'when it was placed there (epoch ms)' }),
    }),
    { description: 'the agents it runs (its placements)' },
  ),
  replication: Type.Union([DaemonReplication, Type.Null()], {
    description: 'null when not known: not alive, or a daemon of an earlier version',
  }),
});

export const DaemonList = Type.Object({
  fleet: Type.String({ description: "the fleet's name" }),
  daemons: Type.Array(FleetDaemon, {
    description: 'by name: the daemons alive, and those down that are drained or still hold placements',
  }),
});

export interface DaemonSources {
  /** The answering daemon's name and its replication now. */
  self: { name: string; replication: MemberRecord['replication'] };
  members: Map<string, MemberRecord>;
  marks: Map<string, DrainMark>;
  placements: PlacementRecord[];
}

export function daemonList(fleet: string, sources: DaemonSources) {
  const { self, members, marks, placements } = sources;
  const names = new Set([self.name, ...members.keys(), ...marks.keys(), ...placements.map((p) => p.daemon)]);
  const daemons = [...names].sort().map((name) => {
    const member = members.get(name);
    const mark = marks.get(name);
    const isSelf = name === self.name;
    return {
      name,
      self: isSelf,
      alive: isSelf || member !== undefined,
      heartbeatAt: member?.at ? member.at : null,
      draining: mark !== undefined,
      drainTo: mark?.to ?? [],
      drainedSince: mark && Number.isFinite(mark.since) ? Math.round(mark.since) : null,
      agents: placements
        .filter((placement) => placement.daemon === name)
        .map(({ agentId, name, handle, since }) => ({ agentId, name, handle, since }))
        .sort((a, b) => a.name.localeCompare(b.name)),
      replication: isSelf ? self.replication : (member?.replication ?? null),
    };
  });
  return { fleet, daemons };
}

/** A failed read of a bucket is NATS out of reach (503), never a 500. */
export function unreachable(error: unknown): never {
  if (error instanceof AgtError) throw error;
  throw fleetUnreachable(error instanceof Error ? error.message : String(error));
}
