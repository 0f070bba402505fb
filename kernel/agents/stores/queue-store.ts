/**
 * `agt_queue`: work the daemon accepted with a `turnId` (a chat, a `POST trigger` dispatch) and whose turn
 * has not been announced as ended yet. A row is committed before the 202 that promises its turn id,
 * becomes `running` when its turn starts (a chat absorbed into another turn names that turn in
 * `absorbed_by`), keeps the event that ends its turn id in `ended` (committed before that event is
 * emitted), and is deleted once the event's frame was written to the event streams. What is left after
 * a crash is what the runtime recovers when the agent loads again: an end not yet streamed is emitted
 * again (the same event), queued rows run, running ones are resumed or announced as ended.
 */
import { parseJson, type Sql } from '../sql.js';

export type QueuedKind = 'chat' | 'trigger' | 'system';
export type QueuedStatus = 'queued' | 'running';

/** The event that ends a turn id, as the runtime emitted it (re-emitted unchanged after a restart). */
export interface TurnEnd {
  type: 'turn.completed' | 'agent.error' | 'chat.discarded';
  payload: Record<string, unknown>;
  loop?: string;
  turnId?: string;
  /** Where it went out on the event streams, each time it was emitted (FrameOrigin of the kernel bus). */
  sentAt?: Array<{ epoch: string; cursor: number }>;
}

export interface QueuedTurn {
  id: number;
  turn_id: string;
  loop: string;
  kind: QueuedKind;
  status: QueuedStatus;
  /** The turn a chat was absorbed into (its user row was written to that turn); null otherwise. */
  absorbed_by: string | null;
  /** chat: `{text}`; trigger: `{trigger, events, count}`; system: `{trigger, target}`. */
  payload: Record<string, unknown>;
  created_at: number;
  started_at: number | null;
  /** The end event, once committed and until it was streamed; null while the turn has not ended. */
  ended: TurnEnd | null;
}

export interface QueuedInput {
  turnId: string;
  loop: string;
  kind: QueuedKind;
  payload: Record<string, unknown>;
  status?: QueuedStatus;
  createdAt?: number;
}

const decode = (row: QueuedTurn): QueuedTurn => ({
  ...row,
  payload: (parseJson(row.payload) ?? {}) as Record<string, unknown>,
  ended: row.ended === null || row.ended === undefined ? null : ((parseJson(row.ended) ?? null) as TurnEnd | null),
});

export class QueueStore {
  constructor(private readonly sql: Sql) {}

  /** Commits an accepted turn (before its 202 is sent). */
  insert(input: QueuedInput): void {
    const at = input.createdAt ?? Date.now();
    const status = input.status ?? 'queued';
    this.sql.run(
      'INSERT INTO agt_queue (turn_id, loop, kind, status, payload, created_at, started_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      input.turnId,
      input.loop,
      input.kind,
      status,
      JSON.stringify(input.payload),
      at,
      status === 'running' ? at : null,
    );
  }

  /** The turn started (its incoming row is written in the same transaction). No-op for unknown ids. */
  markRunning(turnId: string, at = Date.now()): void {
    this.sql.run("UPDATE agt_queue SET status = 'running', started_at = ? WHERE turn_id = ?", at, turnId);
  }

  /** Chats absorbed into `headTurnId` (their user rows are written in the same transaction). */
  markAbsorbed(turnIds: readonly string[], headTurnId: string, at = Date.now()): void {
    this.sql.transaction(() => {
      for (const turnId of turnIds) {
        this.sql.run(
          "UPDATE agt_queue SET status = 'running', absorbed_by = ?, started_at = ? WHERE turn_id = ?",
          headTurnId,
          at,
          turnId,
        );
      }
    });
  }

  /**
   * Commits the event that ends these turn ids, before it is emitted (one transaction). Returns how many
   * rows took it: turn ids that were never accepted through the queue (internal wakes) have none.
   */
  markEnded(turnIds: readonly string[], end: TurnEnd): number {
    if (turnIds.length === 0) return 0;
    const json = JSON.stringify(end);
    return this.sql.transaction(() => {
      let marked = 0;
      for (const turnId of turnIds)
        marked += this.sql.run('UPDATE agt_queue SET ended = ? WHERE turn_id = ?', json, turnId).changes;
      return marked;
    });
  }

  /** Removes ended turn ids (once the event that ends them was streamed). Returns how many rows went. */
  remove(turnIds: readonly string[]): number {
    if (turnIds.length === 0) return 0;
    // One transaction: a discarded queue of 1000 is one commit, not 1000.
    return this.sql.transaction(() => {
      let removed = 0;
      for (const turnId of turnIds) removed += this.sql.run('DELETE FROM agt_queue WHERE turn_id = ?', turnId).changes;
      return removed;
    });
  }

  get(turnId: string): QueuedTurn | undefined {
    const row = this.sql.one<QueuedTurn>('SELECT * FROM agt_queue WHERE turn_id = ?', turnId);
    return row && decode(row);
  }

  /** Every row in acceptance order. */
  list(): QueuedTurn[] {
    return this.sql.all<QueuedTurn>('SELECT * FROM agt_queue ORDER BY id').map(decode);
  }

  count(): number {
    return this.sql.one<{ n: number }>('SELECT count(*) AS n FROM agt_queue')!.n;
  }
}
