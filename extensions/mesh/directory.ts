/**
 * Which loaded agent a mesh URL names (`{handle}`: its handle, its DID, or its id when it has no
 * handle), and the public facts of it the mesh shows.
 */
import type { AgentsService, AgentView } from '@agt/contracts';

export interface MeshAgent {
  view: AgentView;
  /** The name in its mesh URLs: the handle, else the id. */
  handle: string;
  did: string | undefined;
  publicKey: Uint8Array | undefined;
}

export function meshAgent(agents: AgentsService, view: AgentView): MeshAgent {
  const identity = agents.keys.identity(view.id);
  return { view, handle: view.handle ?? view.id, did: identity?.did, publicKey: identity?.publicKey };
}

/** The loaded agent `{handle}` names; undefined when none. */
export function findMeshAgent(agents: AgentsService, handle: string): MeshAgent | undefined {
  const all = agents.list();
  const view = handle.startsWith('did:')
    ? all.find((candidate) => agents.keys.identity(candidate.id)?.did === handle)
    : (all.find((candidate) => candidate.handle === handle) ??
      all.find((candidate) => !candidate.handle && candidate.id === handle));
  return view && meshAgent(agents, view);
}

/** Every loaded agent as the mesh shows it. */
export const meshAgents = (agents: AgentsService): MeshAgent[] => agents.list().map((view) => meshAgent(agents, view));
