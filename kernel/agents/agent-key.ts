/**
 * What an agent file says its key is: the agent's DID (`agent.did`, public) and a digest of its sealed
 * secret key (`agent.key`, the seed secretboxed in the file's credentials envelope). The DID alone is
 * public (a file can copy another agent's); the sealed key is in the agent's own file only and never in
 * a response, so the two together tell the agent from a file that merely claims its id and DID
 * (docs/agent-identity.md, "An agent is its key"). Both change only when the key is made or regenerated.
 */
import { createHash } from 'node:crypto';
import type { AgentFile } from './agent-file.js';

export const AGENT_DID_KEY = 'agent.did';
export const AGENT_SECRET_KEY = 'agent.key';

export interface AgentKey {
  /** The agent's `did:key`; null for a file without an identity. */
  did: string | null;
  /** sha256 (hex) of the stored sealed secret key; null when the file has none. */
  sealed: string | null;
}

/** The key of an agent file (works on read-only files). */
export function readAgentKey(file: Pick<AgentFile, 'identity'>): AgentKey {
  const did = file.identity.get(AGENT_DID_KEY)?.toString('utf8') ?? null;
  const secret = file.identity.get(AGENT_SECRET_KEY);
  return { did, sealed: secret ? createHash('sha256').update(secret).digest('hex') : null };
}

/** True when both name the same key (two files without an identity have the same, empty, key). */
export const sameKey = (a: AgentKey, b: AgentKey): boolean => a.did === b.did && a.sealed === b.sealed;
