/**
 * How this daemon's containers are told apart from everything else on the engine: labels carry a key
 * derived from the daemon's data directory (two daemons on one engine never touch each other's
 * containers, and a restarted daemon finds its own), and names start with `agt-<key>-`.
 */
import { createHash } from 'node:crypto';

export const LABEL_DAEMON = 'dev.agt.compute.daemon';
export const LABEL_TIER = 'dev.agt.compute.tier';
export const LABEL_AGENT = 'dev.agt.compute.agent';
/** On the base image: which daemon built it. */
export const LABEL_IMAGE = 'dev.agt.compute.image';

export type ContainerTier = 'shared' | 'isolated';

const digest = (value: string, length: number) => createHash('sha256').update(value).digest('hex').slice(0, length);

/** The daemon's key: 12 hex digits of its data directory's path. */
export const daemonKeyOf = (dataDir: string) => digest(dataDir, 12);

/** The shared container's name. */
export const sharedName = (daemonKey: string) => `agt-${daemonKey}-shared`;

/** An isolated container's name: agent ids may hold characters container names may not, so a digest stands in. */
export const isolatedName = (daemonKey: string, agentId: string) => `agt-${daemonKey}-agent-${digest(agentId, 16)}`;

/** The agent's work dir below `/work` (a digest, for the same reason). */
export const workDirOf = (agentId: string) => `/work/${digest(agentId, 16)}`;

/** The volume holding a container's work dirs; it outlives the container. */
export const volumeOf = (containerName: string) => `${containerName}-work`;
