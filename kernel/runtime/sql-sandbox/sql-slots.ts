/**
 * The daemon-wide bound on agent SQL processes: every agent's SQL child
 * (sql-runner.ts) holds one slot from the moment it is forked until its process has exited, so at most
 * `max` children exist at once across all agents, whatever they do (8 agents running SQL at once used
 * to mean 8 children, ~60 MB each, all busy).
 *
 * - One pool per daemon process ({@link daemonSqlSlots}; a daemon is one process): `max` is the owner's
 *   setting `sqlMaxProcesses`, read at each request (a change applies to the next call), default
 *   {@link SQL_DEFAULT_MAX_PROCESSES}: max(2, the machine's cores).
 * - A call that needs a child when every slot is taken waits in one FIFO queue across agents. The wait
 *   counts against that call's own `limits.sql_timeout_ms` (sql-runner.ts): a call that waits past it
 *   fails with the usual `timeout` and never starts a child.
 * - Idle children hold their slot (the next call of that agent needs no start-up) until someone waits:
 *   then the idlest one is asked to leave at once, and a child that finishes a call while others wait
 *   leaves too (its agent's next call queues behind them), so one busy agent cannot keep the slots.
 *
 * `running`, `peak` and `waiting` and the `change` event exist so tests (and a curious owner through a
 * debugger) can watch the bound hold without sampling the process table.
 */
import { EventEmitter } from 'node:events';
import { availableParallelism } from 'node:os';

export const SQL_DEFAULT_MAX_PROCESSES = Math.max(2, availableParallelism());

/**
 * What the pool needs of the child a slot was taken for: whether it is busy, already leaving, or idle
 * (since when, performance.now()), and a way to ask it to leave.
 */
export interface SlotOccupant {
  state(): 'busy' | 'leaving' | number;
  /** Ends the child; its slot returns when the process has exited. */
  evict(): void;
}

/** One granted slot: released exactly once, when the child it was taken for has exited (or never started). */
export interface SqlSlot {
  /** Names the child holding the slot (until then the slot is busy). */
  occupy(occupant: SlotOccupant): void;
  release(): void;
}

/** A queued request: `granted` resolves with the slot; `cancel()` leaves the queue (nothing is granted after it). */
export interface SlotRequest {
  granted: Promise<SqlSlot>;
  cancel(): void;
}

interface Held {
  occupant?: SlotOccupant;
  evicted: boolean;
}

export class SqlSlots extends EventEmitter {
  private readonly held = new Set<Held>();
  private readonly waiters: Array<(slot: SqlSlot) => void> = [];
  /** The most slots ever held at once. */
  peak = 0;

  /** `maxOf`: the current bound (undefined: the default); read at every request and release. */
  constructor(private maxOf: () => number | undefined = () => undefined) {
    super();
  }

  /** Where the bound comes from from now on (the daemon: its settings). */
  configure(maxOf: () => number | undefined): void {
    this.maxOf = maxOf;
    this.dispatch();
  }

  get max(): number {
    const value = this.maxOf();
    return value !== undefined && Number.isInteger(value) && value >= 1 ? value : SQL_DEFAULT_MAX_PROCESSES;
  }

  /** Slots held now: children forked and not yet exited. */
  get running(): number {
    return this.held.size;
  }

  /** Calls waiting for a slot. */
  get waiting(): number {
    return this.waiters.length;
  }

  /** True when some call waits: a child that finishes a call should give its slot back. */
  get contended(): boolean {
    return this.waiters.length > 0;
  }

  request(): SlotRequest {
    let grant!: (slot: SqlSlot) => void;
    const granted = new Promise<SqlSlot>((resolve) => {
      grant = resolve;
    });
    this.waiters.push(grant);
    this.changed();
    this.dispatch();
    return {
      granted,
      cancel: () => {
        const at = this.waiters.indexOf(grant);
        if (at < 0) return;
        this.waiters.splice(at, 1);
        this.changed();
      },
    };
  }

  /** Grants free slots in arrival order; asks idle children to leave for the waiters still unserved. */
  private dispatch(): void {
    while (this.waiters.length > 0 && this.held.size < this.max) this.waiters.shift()!(this.take());
    let leaving = 0;
    const idle: Array<{ held: Held; since: number }> = [];
    for (const held of this.held) {
      const state = held.evicted ? 'leaving' : (held.occupant?.state() ?? 'busy');
      if (state === 'leaving') leaving++;
      else if (typeof state === 'number') idle.push({ held, since: state });
    }
    const wanted = this.waiters.length - leaving;
    if (wanted <= 0) return;
    idle.sort((a, b) => a.since - b.since);
    for (const { held } of idle.slice(0, wanted)) {
      held.evicted = true;
      held.occupant!.evict();
    }
  }

  private take(): SqlSlot {
    const held: Held = { evicted: false };
    this.held.add(held);
    this.peak = Math.max(this.peak, this.held.size);
    this.changed();
    let released = false;
    return {
      occupy: (occupant) => {
        held.occupant = occupant;
      },
      release: () => {
        if (released) return;
        released = true;
        this.held.delete(held);
        this.changed();
        this.dispatch();
      },
    };
  }

  private changed(): void {
    this.emit('change', { running: this.held.size, waiting: this.waiters.length });
  }
}

/** The daemon's pool: every agent's SqlSandbox takes its slots here unless given another (tests). */
export const daemonSqlSlots = new SqlSlots();
