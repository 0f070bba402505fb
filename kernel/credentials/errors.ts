/**
 * The coded errors of sealed credentials, one factory per meaning (the model is fastify's `lib/errors.js`).
 * Codes, messages and details are API: clients and tests read them.
 */
import { AgtError } from '@agt/contracts';
import type { IdentityStatus } from '../identity/types.js';
import type { LockReason } from './envelope.js';

const LOCK_REASONS: Record<LockReason, string> = {
  password: 'the agent is password-protected: POST /agents/{id}/credentials/unlock with its password',
  owner_locked: 'the file comes from another installation and only the owner can open it: unlock the owner identity',
  foreign: 'the credentials were sealed for another owner and another runtime',
  damaged: 'the credentials envelope of this file is damaged',
};

/** 409 `credentials_locked`: the agent's data key is out of reach now, for `reason`. */
export const credentialsLocked = (agentId: string, reason: LockReason) =>
  new AgtError('credentials_locked', `credentials of agent ${agentId} are locked: ${LOCK_REASONS[reason]}`, {
    details: { agentId, reason },
  });

/** 409 `conflict`: unlock or lock was asked of an agent without a password. */
export const notPasswordProtected = (agentId: string) =>
  new AgtError('conflict', `agent ${agentId} is not password-protected`, { details: { agentId } });

/** 409 `identity_not_ready`: only the owner's wrap opens this file, and the owner identity is locked. */
export const ownerWrapNeeded = (agentId: string, identity: IdentityStatus) =>
  new AgtError(
    'identity_not_ready',
    'this agent file comes from another installation: unlock the owner identity first',
    {
      details: { agentId, identity },
    },
  );

/** 403 `wrong_password`: the password does not open the agent's envelope. */
export const wrongAgentPassword = (agentId: string) =>
  new AgtError('wrong_password', 'wrong password', { details: { agentId } });

/** 404 `not_found`: the agent was unloaded while its password was being checked. */
export const unloadedDuringUnlock = (agentId: string) => new AgtError('not_found', `agent ${agentId} was unloaded`);
