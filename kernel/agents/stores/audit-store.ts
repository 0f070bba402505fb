/**
 * `agt_audit`: append-only records kept for the owner (archived loop streams under `loop:<name>`, inbox
 * snapshots, config history). Readable through the tables route; the agent's tools never write here.
 */
import { parseJson, toJson, type Sql } from '../sql.js';

export interface AuditRow {
  id: number;
  kind: string;
  subject: string | null;
  data: unknown;
  created_at: number;
}

export class AuditStore {
  constructor(private readonly sql: Sql) {}

  /** Appends one record; returns its id. */
  append(kind: string, subject: string | null, data: unknown, createdAt = Date.now()): number {
    return this.sql.run(
      'INSERT INTO agt_audit (kind, subject, data, created_at) VALUES (?, ?, ?, ?)',
      kind,
      subject,
      toJson(data),
      createdAt,
    ).lastId;
  }

  /** Records in id order, optionally filtered by kind and subject. */
  list(options: { kind?: string; subject?: string; limit?: number; offset?: number } = {}): AuditRow[] {
    return this.sql
      .all<AuditRow>(
        'SELECT id, kind, subject, data, created_at FROM agt_audit WHERE (? IS NULL OR kind = ?) AND (? IS NULL OR subject = ?) ORDER BY id LIMIT ? OFFSET ?',
        options.kind ?? null,
        options.kind ?? null,
        options.subject ?? null,
        options.subject ?? null,
        options.limit ?? -1,
        options.offset ?? 0,
      )
      .map((row) => ({ ...row, data: parseJson(row.data) }));
  }

  count(): number {
    return this.sql.one<{ n: number }>('SELECT count(*) AS n FROM agt_audit')!.n;
  }
}
