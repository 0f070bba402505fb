/**
 * `agt_turn_records`: what an extension keeps beside a turn of the agent (the mesh keeps the A2A task a turn
 * is), one JSON record per kind and turn id, so it outlives a restart in the file that holds the turn. Each
 * kind keeps at most {@link TURN_RECORDS_MAX_PER_KIND} records (the oldest go first) and a record is at most
 * {@link TURN_RECORD_MAX_BYTES}: an extension cannot grow the file without bound.
 */
import type { Sql } from '../sql.js';

export const TURN_RECORDS_MAX_PER_KIND = 10_000;
export const TURN_RECORD_MAX_BYTES = 256 * 1024;

export interface TurnRecordRow {
  seq: number;
  turnId: string;
  record: string;
  createdAt: number;
  updatedAt: number;
}

interface Row {
  seq: number;
  turn_id: string;
  record: string;
  created_at: number;
  updated_at: number;
}

const fromRow = (row: Row): TurnRecordRow => ({
  seq: row.seq,
  turnId: row.turn_id,
  record: row.record,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export class TurnRecordsStore {
  constructor(
    private readonly sql: Sql,
    /** Tests shorten the bound. */
    readonly maxPerKind = TURN_RECORDS_MAX_PER_KIND,
  ) {}

  /** Writes the record of `turnId` (its first write's place in the order is kept), then trims the kind. */
  put(kind: string, turnId: string, record: string, now: number): void {
    this.sql.transaction(() => {
      this.sql.run(
        `INSERT INTO agt_turn_records (kind, turn_id, record, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (kind, turn_id) DO UPDATE SET record = excluded.record, updated_at = excluded.updated_at`,
        kind,
        turnId,
        record,
        now,
        now,
      );
      this.sql.run(
        `DELETE FROM agt_turn_records WHERE kind = ? AND seq <= (
           SELECT seq FROM agt_turn_records WHERE kind = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)`,
        kind,
        kind,
        this.maxPerKind,
      );
    });
  }

  get(kind: string, turnId: string): TurnRecordRow | undefined {
    const row = this.sql.one<Row>(
      'SELECT seq, turn_id, record, created_at, updated_at FROM agt_turn_records WHERE kind = ? AND turn_id = ?',
      kind,
      turnId,
    );
    return row ? fromRow(row) : undefined;
  }

  /** Newest first; `before`: only records written first before the record of that sequence number. */
  list(kind: string, limit: number, before?: number): TurnRecordRow[] {
    const rows =
      before === undefined
        ? this.sql.all<Row>(
            'SELECT seq, turn_id, record, created_at, updated_at FROM agt_turn_records WHERE kind = ? ORDER BY seq DESC LIMIT ?',
            kind,
            limit,
          )
        : this.sql.all<Row>(
            'SELECT seq, turn_id, record, created_at, updated_at FROM agt_turn_records WHERE kind = ? AND seq < ? ORDER BY seq DESC LIMIT ?',
            kind,
            before,
            limit,
          );
    return rows.map(fromRow);
  }
}
