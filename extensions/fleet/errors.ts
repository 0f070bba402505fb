/** The fleet extension's coded errors. */
import { AgtError } from '@agt/contracts';

/** 409 `agent_held_elsewhere`: another daemon of the fleet runs the agent; `daemon` names it. */
export const heldElsewhere = (agentId: string, daemon: string) =>
  new AgtError('agent_held_elsewhere', `agent ${agentId} runs on daemon ${daemon} of the fleet`, {
    status: 409,
    details: { agentId, daemon },
  });

/** 503 `unavailable`: NATS cannot be reached, so no placement can be decided. */
export const fleetUnreachable = (why: string) =>
  new AgtError('unavailable', `the fleet's NATS servers cannot be reached: ${why}`);

/** 503 `unavailable`: the fleet extension is enabled but settings `fleet` are not set. */
export const fleetNotConfigured = () =>
  new AgtError('unavailable', 'the fleet is not configured: set settings `fleet` (docs/fleet.md) and restart');

/** 409 `daemon_draining`: the daemon was drained (`POST /fleet/drain`) and takes no new agent; `to` may. */
export const daemonDraining = (agentId: string, daemon: string, to: readonly string[]) =>
  new AgtError(
    'daemon_draining',
    `daemon ${daemon} is drained and takes no new agent${to.length > 0 ? `: load it on ${to.join(', ')}` : ''}`,
    { status: 409, details: { agentId, daemon, to: [...to] } },
  );

/** 404 `not_found`: a planned move's handoff asked of a daemon that does not run the agent. */
export const notRunHere = (reference: string, daemon: string) =>
  new AgtError('not_found', `daemon ${daemon} does not run agent "${reference}"`);

/** 409 `replication_off`: a move's handoff or takeover asked of a daemon that does not replicate agent files. */
export const replicationOff = (daemon: string) =>
  new AgtError(
    'replication_off',
    `daemon ${daemon} does not replicate agent files (option \`replicate\` of the fleet extension, docs/fleet.md)`,
    { status: 409, details: { daemon } },
  );
