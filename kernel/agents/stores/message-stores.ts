/**
 * `agt_inbox` and `agt_outbox`: messages that reached the agent (channels, mesh, api; never chat) and
 * messages it sends. Status strings are free-form so channel adapters can add their own; the defaults
 * are `unread` (inbox) and `queued` (outbox).
 */
import { parseJson, toJson, type Sql } from '../sql.js';

export interface InboxMessage {
  id: number;
  /** Where it came from: `channel:<type>`, `mesh`, `api`. */
  source: string;
  sender: string | null;
  text: string;
  data: unknown;
  status: string;
  created_at: number;
  updated_at: number;
}

export interface OutboxMessage {
  id: number;
  /** Where it goes: a channel name or `mesh`. */
  channel: string;
  recipient: string | null;
  text: string;
  data: unknown;
  status: string;
  error: string | null;
  attempts: number;
  created_at: number;
  updated_at: number;
}

const decode = <T extends { data: unknown }>(row: T): T => ({ ...row, data: parseJson(row.data) });

export class InboxStore {
  constructor(private readonly sql: Sql) {}

  /** Commits a message (status `unread` unless given). */
  insert(input: { source: string; sender?: string | null; text: string; data?: unknown; status?: string }): InboxMessage {
    const now = Date.now();
    const { lastId } = this.sql.run(
      'INSERT INTO agt_inbox (source, sender, text, data, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      input.source,
      input.sender ?? null,
      input.text,
      toJson(input.data),
      input.status ?? 'unread',
      now,
      now,
    );
    return this.get(lastId)!;
  }

  get(id: number): InboxMessage | undefined {
    const row = this.sql.one<InboxMessage>('SELECT * FROM agt_inbox WHERE id = ?', id);
    return row && decode(row);
  }

  /** Messages in id order, optionally only one status. */
  list(options: { status?: string; limit?: number; offset?: number } = {}): InboxMessage[] {
    const rows = options.status === undefined
      ? this.sql.all<InboxMessage>('SELECT * FROM agt_inbox ORDER BY id LIMIT ? OFFSET ?', options.limit ?? -1, options.offset ?? 0)
      : this.sql.all<InboxMessage>('SELECT * FROM agt_inbox WHERE status = ? ORDER BY id LIMIT ? OFFSET ?', options.status, options.limit ?? -1, options.offset ?? 0);
    return rows.map(decode);
  }

  /** Sets the status; false when no such message. */
  setStatus(id: number, status: string): boolean {
    return this.sql.run('UPDATE agt_inbox SET status = ?, updated_at = ? WHERE id = ?', status, Date.now(), id).changes > 0;
  }

  /** Deletes every message; returns how many. */
  clear(): number {
    return this.sql.run('DELETE FROM agt_inbox').changes;
  }

  count(): number {
    return this.sql.one<{ n: number }>('SELECT count(*) AS n FROM agt_inbox')!.n;
  }
}

export class OutboxStore {
  constructor(private readonly sql: Sql) {}

  /** Commits a message (status `queued` unless given). */
  insert(input: { channel: string; recipient?: string | null; text: string; data?: unknown; status?: string }): OutboxMessage {
    const now = Date.now();
    const { lastId } = this.sql.run(
      'INSERT INTO agt_outbox (channel, recipient, text, data, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      input.channel,
      input.recipient ?? null,
      input.text,
      toJson(input.data),
      input.status ?? 'queued',
      now,
      now,
    );
    return this.get(lastId)!;
  }

  get(id: number): OutboxMessage | undefined {
    const row = this.sql.one<OutboxMessage>('SELECT * FROM agt_outbox WHERE id = ?', id);
    return row && decode(row);
  }

  list(options: { status?: string; limit?: number; offset?: number } = {}): OutboxMessage[] {
    const rows = options.status === undefined
      ? this.sql.all<OutboxMessage>('SELECT * FROM agt_outbox ORDER BY id LIMIT ? OFFSET ?', options.limit ?? -1, options.offset ?? 0)
      : this.sql.all<OutboxMessage>('SELECT * FROM agt_outbox WHERE status = ? ORDER BY id LIMIT ? OFFSET ?', options.status, options.limit ?? -1, options.offset ?? 0);
    return rows.map(decode);
  }

  /** Sets the status (and error text; `attempts` grows when `attempted`); false when no such message. */
  setStatus(id: number, status: string, options: { error?: string | null; attempted?: boolean } = {}): boolean {
    return (
      this.sql.run(
        'UPDATE agt_outbox SET status = ?, error = ?, attempts = attempts + ?, updated_at = ? WHERE id = ?',
        status,
        options.error ?? null,
        options.attempted ? 1 : 0,
        Date.now(),
        id,
      ).changes > 0
    );
  }

  clear(): number {
    return this.sql.run('DELETE FROM agt_outbox').changes;
  }
}
