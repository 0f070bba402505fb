/**
 * Taking over an agent from its replica (docs/fleet.md, "Failover"): the newest copy (replica-read.ts) is
 * written into this daemon's data directory, its SHA-256 checked against the one it was stored with,
 * then `POST /agents/restore` (run through this daemon's own API) checks it as a backup (integrity, agent-file
 * marker, a schema version this build reads, the agent's known key), places it at
 * `<data dir>/fleet-agents/<agent key>.agt` and loads it, which claims the placement as any load does. The
 * kernel's restart recovery then runs what the file holds as accepted and not ended: queued turns run under
 * their turn ids, the turn cut short by the crash ends (`agent.error` `daemon_restart`).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { LocalRequests } from '@agt/contracts';
import { placementKey } from './keys.js';
import { fetchReplica } from './replica-read.js';
import type { ReplicaVouches } from './replica-vouches.js';
import type { Replicator } from './replicas.js';

/** A turn's end the dead daemon had not stored in the fleet stream when its replica was made. */
export interface CarriedEnd {
  id: string;
  data: string;
}

export interface RestoredReplica {
  status: number;
  /** The answer's `code` when it failed. */
  code?: string;
  turnId?: string;
  bytes?: number;
  /** Where the agent's file is now, once restored (status 200). */
  filePath?: string;
}

/** Undefined when the store has no copy of the agent. */
export async function restoreReplica(
  replicator: Replicator,
  requests: LocalRequests,
  dataDir: string,
  agentId: string,
  /** Called with the ends the replica carries, once it is verified and before it is loaded. */
  carried: (ends: CarriedEnd[]) => void,
  /** The SHA-256 the copy must have (a planned move's final copy); another copy answers 409 `replica_changed`. */
  wanted?: string,
  /** Vouches for the copy while the kernel restores it (its SHA-256 checked first). */
  vouches?: ReplicaVouches,
): Promise<RestoredReplica | undefined> {
  // Loaded here already: its file here is the live one, never replaced.
  if (replicator.isLoaded(agentId)) return { status: 409, code: 'agent_already_loaded' };
  const name = placementKey(agentId);
  const folder = join(dataDir, 'fleet-agents');
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const download = join(folder, `.${name}-${randomBytes(6).toString('hex')}.download`);
  const target = join(folder, `${name}.agt`);
  try {
    const fetched = await fetchReplica(replicator, agentId, download, wanted);
    if (!fetched) return undefined;
    if (fetched.changed) return { status: 409, code: 'replica_changed' };
    if (fetched.damaged) return { status: 422, code: 'replica_damaged' };
    // Before the load: the ends of turns the dead daemon finished go to the stream before anything the
    // restored agent does (a second daemon publishing them too is dropped by their message ids).
    carried(fetched.ends);
    // An older copy of this agent left here (it ran here before and moved on) is superseded by the replica.
    if (existsSync(target)) for (const suffix of ['', '-wal', '-shm']) rmSync(`${target}${suffix}`, { force: true });
    // Only a copy whose SHA-256 its writer stated, and that has it, is vouched for: one without is checked as any
    // file this daemon did not write.
    const release = fetched.sha256 && vouches ? vouches.hold(fetched.sha256) : () => {};
    let answer: Awaited<ReturnType<LocalRequests['dispatch']>>;
    try {
      answer = await requests.dispatch({
        method: 'POST',
        url: '/agents/restore',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: Buffer.from(JSON.stringify({ from: download, to: target })).toString('base64'),
      });
    } finally {
      release();
    }
    let code: string | undefined;
    if (answer.statusCode !== 200) {
      // Not loaded (another daemon won the claim): the copy is nobody's here.
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${target}${suffix}`, { force: true });
      try {
        code = (JSON.parse(Buffer.from(answer.body, 'base64').toString('utf8')) as { code?: string }).code;
      } catch {
        code = undefined;
      }
    }
    return {
      status: answer.statusCode,
      ...(code ? { code } : {}),
      turnId: fetched.turnId,
      bytes: fetched.bytes,
      ...(answer.statusCode === 200 ? { filePath: target } : {}),
    };
  } finally {
    rmSync(download, { force: true });
  }
}
