/**
 * Agents across several daemons (the shipped `fleet` extension, docs/fleet.md; a third party may offer the
 * same points over another engine): a placement decides which daemon may run an agent, a forwarder answers
 * requests for an agent that another daemon runs, and `ctx.requests` lets the daemon that runs it answer a
 * forwarded request through its own API.
 */
import { createExtensionPoint } from './extension.js';
import type { RelayedAnswer, RelayedRequest } from './relayed-requests.js';

export type { LocalRequests, RelayedAnswer, RelayedRequest } from './relayed-requests.js';

/**
 * The agent the kernel is about to load.
 *
 * @beta
 */
export interface PlacementRequest {
  agentId: string;
  name: string;
  handle: string | null;
  /** The file's real path on this daemon's machine. */
  filePath: string;
}

/**
 * Decides which daemon runs an agent. The kernel asks before every load, before it takes the file's lease
 * (the lease stays underneath: two daemons on one file system never both hold the file either).
 *
 * @beta
 */
export interface AgentPlacement {
  /**
   * Resolves when this daemon may run the agent; it then holds the placement until {@link release}.
   * Rejects (the load fails with this error) when another daemon holds it (409, a code of the provider's
   * own such as `agent_held_elsewhere`) or when the placement cannot be decided now (503 `unavailable`):
   * an agent never runs without a placement. Call `lost` once the placement can no longer be kept (its
   * record expired, another daemon took it, the engine is out of reach for too long): the kernel then
   * unloads the agent at once (reason `placement_lost`, no grace for a running turn), so its turns stop
   * before another daemon may claim it. Must answer within 10 s.
   */
  claim(request: PlacementRequest, lost: () => void): Promise<void>;
  /**
   * The agent unloaded here, or its load failed after the claim: give the placement up. Also called after a
   * claim that failed or timed out (a late success is given back): a provider ignores an agent it does not
   * hold. Errors are logged, never thrown further.
   */
  release(agentId: string): Promise<void> | void;
}

/**
 * One provider (a second is a load error naming both). Without one every load is local, as on a lone daemon.
 *
 * @beta
 */
export const agentPlacement = createExtensionPoint<AgentPlacement>('agt.agent-placement');

/**
 * An agent another daemon runs, as `GET /agents` lists it beside the local ones.
 *
 * @beta
 */
export interface RemoteAgent {
  id: string;
  name: string;
  handle: string | null;
  /** The daemon that runs it (its name in the fleet). */
  daemon: string;
}

/**
 * Answers requests for agents that run on another daemon.
 *
 * @beta
 */
export interface AgentForwarder {
  /**
   * Called for a request under `/agents/{id}` whose `{id}` (an id, handle or name) matches no agent loaded
   * here, after the request passed this daemon's guards. Resolve the answer of the daemon that runs it
   * (sent to the client as it is), or undefined when no other daemon runs it (the kernel then handles the
   * request here: 404, or a local start). Reject with a coded error when the holder cannot be reached (503
   * `unavailable`). Streams (`Accept: text/event-stream`) are not forwarded.
   */
  forward(reference: string, request: RelayedRequest): Promise<RelayedAnswer | undefined>;
  /** The agents other daemons run, for `GET /agents` (empty when none). */
  remoteAgents(): Promise<readonly RemoteAgent[]> | readonly RemoteAgent[];
}

/**
 * One provider (a second is a load error naming both).
 *
 * @beta
 */
export const agentForwarder = createExtensionPoint<AgentForwarder>('agt.agent-forwarder');
