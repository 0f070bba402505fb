/**
 * Agent files copied elsewhere while the agent runs (the shipped `fleet` extension replicates them to a
 * JetStream object store, docs/fleet.md "Replication"; a third party may copy them anywhere): the kernel
 * makes a consistent copy on request ({@link AgentSnapshots}, `ctx.agents.snapshots`), says which turn ids an
 * event ends ({@link turnIdsEndedBy}) and waits for a replica before it answers a chat ({@link agentReplication}). Restoring a copy elsewhere is `POST /agents/restore` (verify, place,
 * load, start), which a replicating extension runs through `ctx.requests`.
 */
import type { UmbilicalEvent } from './events.js';

export type { AgentPageImage, AgentSnapshot, AgentSnapshots } from './agent-snapshots.js';
import { createExtensionPoint } from './extension.js';

/**
 * Keeps replicas of agent files (the `fleet` extension).
 *
 * @beta
 */
export interface AgentReplication {
  /**
   * Resolve once a copy of the agent's file holding everything committed about turn `turnId` before this
   * call is stored (a copy made after this call does; so does one made after the turn's last change, which
   * a provider following the bus asked for already). The kernel calls it before it
   * tells a client about turn `turnId`: after a chat (`POST /agents/{id}/chat`) or a dispatch
   * (`POST /agents/{id}/trigger`) is committed to the file and before its 202, or, for a chat that waits for
   * its turn (`?wait=`), once the wait is over (the turn ended, its end committed, or the wait ran out) and
   * before the 200 or 202. So a daemon that restores the replica after a crash runs or ends every turn a
   * client was promised, and keeps every end a client was shown. The kernel waits at most
   * {@link REPLICA_WAIT_MS} (then answers anyway and logs it); a rejection is logged, never sent to the
   * client. Work accepted other ways, with no client to answer (the trigger evaluator's timers and events,
   * inbox deliveries, loop sends), is not waited for: replicate it when its `turn.started` comes.
   */
  replicated(agentId: string, turnId: string): Promise<void>;
}

/**
 * The most the kernel waits for {@link AgentReplication.replicated} before it answers a chat.
 *
 * @beta
 */
export const REPLICA_WAIT_MS = 5_000;

/**
 * One provider (a second is a load error naming both). Without one a chat is answered once it is committed.
 *
 * @beta
 */
export const agentReplication = createExtensionPoint<AgentReplication>('agt.agent-replication');

/**
 * The turn ids `event` ends: `turn.completed` and `agent.error` with a turn (its id and the chats it
 * absorbed), `chat.discarded` (its `turn_ids`); empty for any other event. Every accepted turn id ends
 * in exactly one such event.
 *
 * @beta
 */
export function turnIdsEndedBy(event: Pick<UmbilicalEvent, 'event_type' | 'payload'>): string[] {
  const p = event.payload as { turn_id?: unknown; absorbed_turn_ids?: unknown; turn_ids?: unknown };
  if (event.event_type === 'turn.completed' || event.event_type === 'agent.error') {
    if (typeof p.turn_id !== 'string') return [];
    return [p.turn_id, ...(Array.isArray(p.absorbed_turn_ids) ? (p.absorbed_turn_ids as string[]) : [])];
  }
  if (event.event_type === 'chat.discarded') return Array.isArray(p.turn_ids) ? (p.turn_ids as string[]) : [];
  return [];
}
