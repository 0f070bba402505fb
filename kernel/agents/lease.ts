/**
 * One runtime per file: takes the lease of every loaded agent file and keeps it fresh. A lease whose
 * heartbeat is older than {@link LEASE_STALE_MS}, or whose holder is a process on this host that no
 * longer exists, is taken over; anything else is refused with 409 `agent_file_in_use`.
 *
 * One shared, unref'd interval refreshes every held lease, so 200 loaded agents cost one timer; it
 * runs only while at least one lease is held and is cleared at the last release. Each refresh is a
 * write to the agent's file, so the interval refreshes them in slices of {@link BEAT_SLICE} with the
 * event loop free in between: with 1,000 agents one synchronous pass held every request for its whole
 * length every 10 s (status at 5% of fastify with 1,000 agents loaded).
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from '@agt/contracts';
import type { AgentFile } from './agent-file.js';
import { agentFileLeased } from './errors.js';
import type { LeaseOwner, LeaseRow } from './stores/lease-store.js';

export const LEASE_HEARTBEAT_MS = 10_000;
export const LEASE_STALE_MS = 30_000;
/** Leases refreshed per turn of the event loop by the interval. */
export const BEAT_SLICE = 25;

/** False only when the holder provably is gone: same host, and no process with its pid. */
function holderAlive(holder: LeaseRow): boolean {
  if (holder.host !== hostname()) return true;
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export class LeaseKeeper {
  /** This daemon instance: random per start, plus pid and host for humans reading the 409. */
  readonly me: LeaseOwner = { owner: randomUUID(), pid: process.pid, host: hostname() };
  private readonly held = new Set<AgentFile>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly logger: Logger,
    private readonly onLost: (file: AgentFile) => void = () => {},
  ) {}

  /** Takes the file's lease or throws 409 `agent_file_in_use` naming the holder. */
  acquire(file: AgentFile): void {
    // Already ours (a created file takes its lease before its first sync, see create-agent.ts): no new write.
    if (this.held.has(file)) return;
    const result = file.lease.acquire(this.me, LEASE_STALE_MS, holderAlive);
    if (!result.ok) {
      throw agentFileLeased(file.path, result.holder);
    }
    this.held.add(file);
    this.timer ??= setInterval(() => this.beatInSlices(), LEASE_HEARTBEAT_MS).unref();
  }

  /** Gives the file's lease up (before it closes). Never throws. */
  release(file: AgentFile): void {
    if (!this.held.delete(file)) return;
    try {
      file.lease.release(this.me.owner);
    } catch (error) {
      this.logger.warn({ err: error, filePath: file.path }, 'lease release failed');
    }
    if (this.held.size === 0) this.stop();
  }

  /** Clears the heartbeat timer (shutdown). */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Refreshes every held lease at once (tests; the interval uses beatInSlices). */
  beat(): void {
    for (const file of [...this.held]) this.beatOne(file);
  }

  /** The interval's refresh: {@link BEAT_SLICE} leases, then the rest after other work had its turn. */
  private beatInSlices(files = [...this.held]): void {
    for (const file of files.splice(0, BEAT_SLICE)) if (this.held.has(file)) this.beatOne(file);
    if (files.length > 0) setImmediate(() => this.beatInSlices(files)).unref();
  }

  /** Refreshes one lease. A lease found taken over is dropped and reported to `onLost`. */
  private beatOne(file: AgentFile): void {
    try {
      const kept = file.lease.heartbeat(this.me.owner);
      // The beat read pages back into the connection's cache (~90 KB per agent until its next use):
      // an idle agent keeps none of them.
      file.releaseMemory({ statements: false });
      if (!kept) {
        this.logger.warn({ filePath: file.path }, 'agent file lease was taken over by another daemon');
        this.held.delete(file);
        this.onLost(file);
      }
    } catch (error) {
      // A busy file misses one beat; the stale window is three beats long.
      this.logger.warn({ err: error, filePath: file.path }, 'lease heartbeat failed');
    }
    if (this.held.size === 0) this.stop();
  }
}
