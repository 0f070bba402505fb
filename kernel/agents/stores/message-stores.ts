/**
 * `agt_inbox` and `agt_outbox`: messages that reached the agent (channels, mesh, api; never chat) and
 * messages it sends. Status strings are free-form so channel adapters can add their own; the defaults
 * are `unread` (inbox) and `queued` (outbox).
 */
import type { Static } from 'typebox';
import type { InboxMessage as InboxMessageSchema } from '../../http-api/agents-api.js';
import { parseJson, toJson, type Sql } from '../sql.js';

/**
 * One `agt_inbox` row: the HTTP schema's `InboxMessage` (contracts/agents-api.ts), written once; the store
 * always has `external_id` (null when the origin gave none). Extensions see it as `InboxRow` (camelCase).
 */
export type InboxMessage = Omit<Static<typeof InboxMessageSchema>, 'external_id'> & { external_id: string | null };

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
  /** The receiver's last HTTP status (mesh), null when none answered. */
  status_code: number | null;
  delivered_at: number | null;
  created_at: number;
  updated_at: number;
}

const decode = <T extends { data: unknown }>(row: T): T => ({ ...row, data: parseJson(row.data) });

export class InboxStore {
  constructor(private readonly sql: Sql) {}

  /** Commits a message (status `unread` unless given). */
  insert(input: {
    source: string;
    sender?: string | null;
    text: string;
    data?: unknown;
    status?: string;
    externalId?: string | null;
  }): InboxMessage {
    const now = Date.now();
    const { lastId } = this.sql.run(
      'INSERT INTO agt_inbox (source, sender, text, data, status, external_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      input.source,
      input.sender ?? null,
      input.text,
      toJson(input.data),
      input.status ?? 'unread',
      input.externalId ?? null,
      now,
      now,
    );
    return this.get(lastId)!;
  }

  /** The row that `source` delivered under its own id `externalId`, if any. */
  byExternalId(source: string, externalId: string): InboxMessage | undefined {
    const row = this.sql.one<InboxMessage>(
      'SELECT * FROM agt_inbox WHERE source = ? AND external_id = ?',
      source,
      externalId,
    );
    return row && decode(row);
  }

  get(id: number): InboxMessage | undefined {
    const row = this.sql.one<InboxMessage>('SELECT * FROM agt_inbox WHERE id = ?', id);
    return row && decode(row);
  }

  /** Messages in id order, optionally only one status. */
  list(options: { status?: string; limit?: number; offset?: number } = {}): InboxMessage[] {
    const rows =
      options.status === undefined
        ? this.sql.all<InboxMessage>(
            'SELECT * FROM agt_inbox ORDER BY id LIMIT ? OFFSET ?',
            options.limit ?? -1,
            options.offset ?? 0,
          )
        : this.sql.all<InboxMessage>(
            'SELECT * FROM agt_inbox WHERE status = ? ORDER BY id LIMIT ? OFFSET ?',
            options.status,
            options.limit ?? -1,
            options.offset ?? 0,
          );
    return rows.map(decode);
  }

  /** Sets the status; false when no such message. */
  setStatus(id: number, status: string): boolean {
    return (
      this.sql.run('UPDATE agt_inbox SET status = ?, updated_at = ? WHERE id = ?', status, Date.now(), id).changes > 0
    );
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
  insert(input: {
    channel: string;
    recipient?: string | null;
    text: string;
    data?: unknown;
    status?: string;
  }): OutboxMessage {
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
    const rows =
      options.status === undefined
        ? this.sql.all<OutboxMessage>(
            'SELECT * FROM agt_outbox ORDER BY id LIMIT ? OFFSET ?',
            options.limit ?? -1,
            options.offset ?? 0,
          )
        : this.sql.all<OutboxMessage>(
            'SELECT * FROM agt_outbox WHERE status = ? ORDER BY id LIMIT ? OFFSET ?',
            options.status,
            options.limit ?? -1,
            options.offset ?? 0,
          );
    return rows.map(decode);
  }

  /**
   * Sets the status (and error text; `attempts` grows when `attempted`; `status_code` and `delivered_at`
   * are kept unless given); false when no such message.
   */
  setStatus(
    id: number,
    status: string,
    options: { error?: string | null; attempted?: boolean; statusCode?: number | null; deliveredAt?: number } = {},
  ): boolean {
    return (
      this.sql.run(
        'UPDATE agt_outbox SET status = ?, error = ?, attempts = attempts + ?, status_code = CASE WHEN ? THEN ? ELSE status_code END, delivered_at = coalesce(?, delivered_at), updated_at = ? WHERE id = ?',
        status,
        options.error ?? null,
        options.attempted ? 1 : 0,
        options.statusCode !== undefined ? 1 : 0,
        options.statusCode ?? null,
        options.deliveredAt ?? null,
        Date.now(),
        id,
      ).changes > 0
    );
  }

  clear(): number {
    return this.sql.run('DELETE FROM agt_outbox').changes;
  }
}
