/** The exec log (`GET /compute/exec-log`): the last execs of each agent, in memory, bounded per agent. */

export interface ExecLogEntry {
  id: number;
  agentId: string;
  /** `tool` (`compute_exec`) or `command` (a system-scope `command` target). */
  origin: 'tool' | 'command';
  /** `host`, or the container's name; null when it never reached one. */
  target: string | null;
  /** The command, cut at 2,000 characters. */
  command: string;
  exit_code: number | null;
  timed_out: boolean;
  /** Why it did not run, when it did not (engine unreachable, image missing, tier refused). */
  error: string | null;
  started_at: number;
  duration_ms: number;
  stdout_bytes: number;
  stderr_bytes: number;
}

const MAX_COMMAND = 2_000;

export class ExecLog {
  private readonly byAgent = new Map<string, ExecLogEntry[]>();
  private next = 1;

  constructor(private readonly perAgent: number) {}

  add(entry: Omit<ExecLogEntry, 'id'>): ExecLogEntry {
    const row = { ...entry, id: this.next++, command: entry.command.slice(0, MAX_COMMAND) };
    const rows = this.byAgent.get(entry.agentId) ?? [];
    rows.push(row);
    if (rows.length > this.perAgent) rows.splice(0, rows.length - this.perAgent);
    this.byAgent.set(entry.agentId, rows);
    return row;
  }

  /** Newest first: one agent's, or everyone's. */
  list(agentId?: string, limit = 100): ExecLogEntry[] {
    const rows = agentId === undefined ? [...this.byAgent.values()].flat() : (this.byAgent.get(agentId) ?? []);
    return [...rows].sort((a, b) => b.id - a.id).slice(0, limit);
  }
}
