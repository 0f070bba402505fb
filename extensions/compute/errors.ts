/** The compute extension's coded errors (the kernel maps each code to its status). */
import { AgtError } from '@agt/contracts';

/** 503 `unavailable`: the engine does not answer. */
export const engineUnreachable = (address: string, reason: string) =>
  new AgtError(
    'unavailable',
    `the Docker engine at ${address} is not reachable (${reason}); start it or set DOCKER_HOST`,
    { details: { engine: address } },
  );

/** 502 `upstream_error`: the engine answered with an error. */
export const engineFailed = (what: string, status: number | undefined, reason: string) =>
  new AgtError('upstream_error', `the Docker engine could not ${what}: ${reason}`, {
    details: { engineStatus: status ?? null },
  });

/** 503 `unavailable`: the base image is not built yet. */
export const imageMissing = (image: string) =>
  new AgtError('unavailable', `the compute image ${image} is not built yet: POST /compute/setup builds it`, {
    details: { image },
  });

/** 503 `unavailable`: setup found no static busybox to build the image from. */
export const busyboxMissing = (tried: readonly string[]) =>
  new AgtError(
    'unavailable',
    `no statically linked busybox found (looked at ${tried.join(', ')}): install Debian's busybox-static or set the compute option "busybox"`,
    {
      details: { missing: 'busybox' },
    },
  );

/** 404 `not_found`: no container of this daemon by that name. */
export const containerNotFound = (name: string) => new AgtError('not_found', `no compute container named ${name}`);

/** 403 `forbidden`: the host tier needs the owner's consent for this agent. */
export const hostTierNotAllowed = (agentId: string) =>
  new AgtError(
    'forbidden',
    `the host tier is not allowed for agent ${agentId}: the owner lists it in the setting computeHostAgents`,
  );

/** 403 `forbidden`: an agent may not move to a weaker tier than its own. */
export const tierNotAllowed = (agentId: string, asked: string, own: string) =>
  new AgtError('forbidden', `agent ${agentId} runs in the ${own} tier and may not run in ${asked}`);

/** 404 `not_found`: the agent is not loaded. */
export const agentNotLoaded = (agentId: string) => new AgtError('not_found', `agent ${agentId} is not loaded`);
