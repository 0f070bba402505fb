/** Coded errors of agent identity. */
import { AgtError } from '@agt/contracts';

/** 409 `credentials_locked`: the agent has no key, or the envelope that seals it is locked. */
export const agentKeyUnavailable = (agentId: string) =>
  new AgtError(
    'credentials_locked',
    `the key of agent ${agentId} is out of reach: it has no identity, or its credentials are locked`,
    { details: { agentId } },
  );
