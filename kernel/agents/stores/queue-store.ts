/**
 * `agt_queue`: work the daemon accepted with a `turnId` (a chat, a `POST trigger` dispatch) and whose turn
 * has not been announced as ended yet. A row is committed before the 202 that promises its turn id,
 * becomes `running` when its turn starts (a chat absorbed into another turn names that turn in
 * `absorbed_by`), keeps the event that ends its turn id in `ended` (committed before that event is
 * emitted; when one event ends several turn ids, the first row that takes it holds the event and the
 * others `{"ref": <that row's turn id>}`: an event ending 1,000 absorbed chats names all 1,000, and a
 * copy in every row would be 1,000 × 40 KB), and is deleted once the event's frame was written to the event streams. What is left after
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

/** The turn ids of a JSON array parameter: one statement for a whole batch (a burst's absorbed chats). */
const IDS = '(SELECT value FROM json_each(?))';

/** What `ended` holds: the event, or the turn id of the row that holds it (one event, several turn ids). */
type StoredEnd = TurnEnd | { ref: string };

const decode = (row: QueuedTurn): QueuedTurn => ({
  ...row,
  payload: (parseJson(row.payload) ?? {}) as Record<string, unknown>,
  ended: row.ended === null || row.ended === undefined ? null : ((parseJson(row.ended) ?? null) as TurnEnd | null),
});

/** The referenced row's event for a row holding `{ref}` (marked in one transaction, removed in one). */
function resolveEnds(rows: QueuedTurn[]): QueuedTurn[] {
  const byTurn = new Map(rows.map((row) => [row.turn_id, row]));
  for (const row of rows) {
    const ref = (row.ended as StoredEnd | null) && (row.ended as { ref?: unknown }).ref;
    if (typeof ref === 'string') row.ended = byTurn.get(ref)?.ended ?? null;
  }
  return rows;
}

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
    if (turnIds.length === 0) return;
    this.sql.run(
      `UPDATE agt_queue SET status = 'running', absorbed_by = ?, started_at = ? WHERE turn_id IN ${IDS}`,
      headTurnId,
      at,
      JSON.stringify(turnIds),
    );
  }

  /**
   * Commits the event that ends these turn ids, before it is emitted (one transaction): the first row
   * that takes it holds it, the others refer to that row. Returns how many rows took it: turn ids that
   * were never accepted through the queue (internal wakes) have none.
   */
  markEnded(turnIds: readonly string[], end: TurnEnd): number {
    if (turnIds.length === 0) return 0;
    const json = JSON.stringify(end);
    if (turnIds.length === 1)
      return this.sql.run('UPDATE agt_queue SET ended = ? WHERE turn_id = ?', json, turnIds[0]!).changes;
    return this.sql.transaction(() => {
      for (let i = 0; i < turnIds.length; i++) {
        if (this.sql.run('UPDATE agt_queue SET ended = ? WHERE turn_id = ?', json, turnIds[i]!).changes === 0) continue;
        const rest = turnIds.slice(i + 1);
        if (rest.length === 0) return 1;
        const ref = JSON.stringify({ ref: turnIds[i]! } satisfies StoredEnd);
        return (
          1 + this.sql.run(`UPDATE agt_queue SET ended = ? WHERE turn_id IN ${IDS}`, ref, JSON.stringify(rest)).changes
        );
      }
      return 0;
    });
  }

  /** Removes ended turn ids (once the event that ends them was streamed). Returns how many rows went. */
  remove(turnIds: readonly string[]): number {
    if (turnIds.length === 0) return 0;
    // One statement: a discarded queue of 1000 is one commit, not 1000.
    if (turnIds.length === 1) return this.sql.run('DELETE FROM agt_queue WHERE turn_id = ?', turnIds[0]!).changes;
    return this.sql.run(`DELETE FROM agt_queue WHERE turn_id IN ${IDS}`, JSON.stringify(turnIds)).changes;
  }

  get(turnId: string): QueuedTurn | undefined {
    const row = this.sql.one<QueuedTurn>('SELECT * FROM agt_queue WHERE turn_id = ?', turnId);
    if (!row) return undefined;
    const decoded = decode(row);
    const ref = (decoded.ended as { ref?: unknown } | null)?.ref;
    if (typeof ref === 'string') decoded.ended = (ref === turnId ? undefined : this.get(ref))?.ended ?? null;
    return decoded;
  }

  /** Every row in acceptance order (an end held by another row read from it). */
  list(): QueuedTurn[] {
    return resolveEnds(this.sql.all<QueuedTurn>('SELECT * FROM agt_queue ORDER BY id').map(decode));
  }

  count(): number {
    return this.sql.one<{ n: number }>('SELECT count(*) AS n FROM agt_queue')!.n;
  }
}
