/**
 * Agent cards: who the agent is on the mesh, signed with its own key so a copy relayed by anyone
 * can be checked against the DID it names. The signature covers the canonical JSON of the card without
 * `endpoints` (they depend on the address the caller used) and without `signature`.
 */
import { canonicalJson, formatSignature } from '@agt/contracts';
import type { AgentsService } from '@agt/contracts';
import type { MeshAgent } from './directory.js';
import { apiRoutesOf } from './website-config.js';

export interface AgentCard {
  did: string | null;
  public_key: string | null;
  handle: string;
  name: string;
  description: string;
  api: Array<{ method: string; path: string }>;
  signed_at: string;
  endpoints: { inbox: string; card: string; health: string; website: string };
  signature: string | null;
}

export const endpointsOf = (base: string, handle: string) => {
  const root = `${base}/agents/${encodeURIComponent(handle)}`;
  return { inbox: `${root}/inbox`, card: `${root}/card`, health: `${root}/health`, website: `${root}/` };
};

/** The signed card; `signature` is null when the agent cannot sign now (locked credentials). */
export async function buildCard(agents: AgentsService, agent: MeshAgent, base: string): Promise<AgentCard> {
  const unsigned = {
    did: agent.did ?? null,
    public_key: agent.publicKey ? Buffer.from(agent.publicKey).toString('base64') : null,
    handle: agent.handle,
    name: agent.view.name,
    description: agent.view.config.description ?? '',
    api: apiRoutesOf(agent.view)
      .filter((route) => route.on_card)
      .map((route) => ({ method: route.method, path: route.path })),
    signed_at: new Date().toISOString(),
  };
  let signature: string | null = null;
  if (agent.did) {
    try {
      signature = formatSignature(await agents.keys.sign(agent.view.id, Buffer.from(canonicalJson(unsigned), 'utf8')));
    } catch {
      signature = null;
    }
  }
  return { ...unsigned, endpoints: endpointsOf(base, agent.handle), signature };
}
