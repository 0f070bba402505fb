/**
 * `agt_lease`: one runtime per file. The daemon that loads an agent writes itself into the single lease
 * row and refreshes `heartbeat_at`; another daemon refuses the file while that heartbeat is fresh and the
 * holder is not provably dead. Taken inside `BEGIN IMMEDIATE`, so two daemons racing for a file
 * serialize on SQLite's write lock.
 */
import type { Sql } from '../sql.js';

export interface LeaseOwner {
  /** The daemon instance (random per start). */
  owner: string;
  pid: number;
  host: string;
}

export interface LeaseRow extends LeaseOwner {
  acquired_at: number;
  heartbeat_at: number;
}

export type LeaseResult = { ok: true } | { ok: false; holder: LeaseRow };

export class LeaseStore {
  /** Rows the heartbeats changed on this connection: what `AgentFile.writeMark` leaves out. */
  heartbeatChanges = 0;

  constructor(private readonly sql: Sql) {}

  read(): LeaseRow | undefined {
    return this.sql.one<LeaseRow>('SELECT owner, pid, host, acquired_at, heartbeat_at FROM agt_lease WHERE id = 1');
  }

  /**
   * Takes the lease unless another live holder has it. A holder is live when its heartbeat is younger
   * than `staleMs` and `isAlive(holder)` does not say otherwise (same host, process gone).
   */
  acquire(me: LeaseOwner, staleMs: number, isAlive: (holder: LeaseRow) => boolean, now = Date.now()): LeaseResult {
    return this.sql.transaction(() => {
      const holder = this.read();
      if (holder && holder.owner !== me.owner && now - holder.heartbeat_at < staleMs && isAlive(holder)) {
        return { ok: false, holder } as const;
      }
      this.sql.run(
        'INSERT INTO agt_lease (id, owner, pid, host, acquired_at, heartbeat_at) VALUES (1, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET owner = excluded.owner, pid = excluded.pid, host = excluded.host, acquired_at = excluded.acquired_at, heartbeat_at = excluded.heartbeat_at',
        me.owner,
        me.pid,
        me.host,
        now,
        now,
      );
      return { ok: true } as const;
    });
  }

  /** Refreshes the heartbeat; false when the lease is no longer ours (taken over after going stale). */
  heartbeat(owner: string, now = Date.now()): boolean {
    const { changes } = this.sql.run('UPDATE agt_lease SET heartbeat_at = ? WHERE id = 1 AND owner = ?', now, owner);
    this.heartbeatChanges += changes;
    return changes > 0;
  }

  /** Gives the lease up if we hold it. */
  release(owner: string): void {
    this.sql.run('DELETE FROM agt_lease WHERE id = 1 AND owner = ?', owner);
  }
}
