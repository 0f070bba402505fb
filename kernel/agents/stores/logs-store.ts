/** `agt_logs`: the agent's log (schema `LogEntry`). Rows are returned oldest first ("newest last"). */
import type { LogLevel } from '@agt/contracts';
import { toJson, type Sql } from '../sql.js';

export interface LogEntry {
  id: number;
  level: LogLevel;
  origin: string | null;
  event: string | null;
  target: string | null;
  message: string;
  /** JSON text or null. */
  data: string | null;
  created_at: number;
}

export interface LogInput {
  level: LogLevel;
  message: string;
  origin?: string | null;
  event?: string | null;
  target?: string | null;
  /** Any value; stored as JSON text. Never pass secrets. */
  data?: unknown;
  createdAt?: number;
}

export interface LogFilter {
  origin?: string;
  event?: string;
}

const COLUMNS = 'id, level, origin, event, target, message, data, created_at';

function where(filter: LogFilter, extra: string[] = []): { clause: string; params: string[] } {
  const parts = [...extra];
  const params: string[] = [];
  if (filter.origin !== undefined) {
    parts.push('origin = ?');
    params.push(filter.origin);
  }
  if (filter.event !== undefined) {
    parts.push('event = ?');
    params.push(filter.event);
  }
  return { clause: parts.length ? `WHERE ${parts.join(' AND ')}` : '', params };
}

export class LogsStore {
  constructor(private readonly sql: Sql) {}

  /** Commits one row and returns it. */
  write(input: LogInput): LogEntry {
    const createdAt = input.createdAt ?? Date.now();
    const data = typeof input.data === 'string' ? JSON.stringify(input.data) : toJson(input.data);
    const { lastId } = this.sql.run(
      'INSERT INTO agt_logs (level, origin, event, target, message, data, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      input.level,
      input.origin ?? null,
      input.event ?? null,
      input.target ?? null,
      input.message,
      data,
      createdAt,
    );
    return {
      id: lastId,
      level: input.level,
      origin: input.origin ?? null,
      event: input.event ?? null,
      target: input.target ?? null,
      message: input.message,
      data,
      created_at: createdAt,
    };
  }

  /** The newest `limit` rows matching the filter, oldest first. */
  list(limit: number, filter: LogFilter = {}): LogEntry[] {
    const { clause, params } = where(filter);
    return this.sql
      .all<LogEntry>(`SELECT ${COLUMNS} FROM agt_logs ${clause} ORDER BY id DESC LIMIT ?`, ...params, limit)
      .reverse();
  }

  /** Up to `limit` rows with id greater than `afterId`, oldest first (for tailing). */
  after(afterId: number, limit: number, filter: LogFilter = {}): LogEntry[] {
    const { clause, params } = where(filter, ['id > ?']);
    return this.sql.all<LogEntry>(
      `SELECT ${COLUMNS} FROM agt_logs ${clause} ORDER BY id LIMIT ?`,
      afterId,
      ...params,
      limit,
    );
  }

  count(): number {
    return this.sql.one<{ n: number }>('SELECT count(*) AS n FROM agt_logs')!.n;
  }

  /** Deletes every row; returns how many. */
  clear(): number {
    return this.sql.run('DELETE FROM agt_logs').changes;
  }
}
