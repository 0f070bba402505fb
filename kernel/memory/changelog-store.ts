/**
 * `agt_memory_changelog`: what each consolidation run did to the memories, one row per change, and every
 * proposal of the model it refused (docs/memory.md, "Consolidation"). Rows are never rewritten.
 */
import type { Sql } from '../agents/sql.js';

export type ChangeAction = 'merge' | 'update' | 'forget' | 'refused';

export interface ChangelogEntry {
  id: number;
  run_id: string;
  action: ChangeAction;
  /** The memory the change made or changed (the merged memory, the updated one); null for forget and refused. */
  memory_id: number | null;
  /** The memories it came from (merged, updated, forgotten; for a refusal, the ids the model named). */
  from_ids: number[];
  /** The model's reason, or for a refusal why it was refused. */
  reason: string;
  /** The previous text of an updated memory, or the refused proposal as the model wrote it (clipped). */
  detail: string | null;
  created_at: number;
}

export type NewChange = Omit<ChangelogEntry, 'id' | 'created_at'>;

export class ChangelogStore {
  constructor(private readonly sql: Sql) {}

  add(change: NewChange, now: number): void {
    this.sql.run(
      'INSERT INTO agt_memory_changelog (run_id, action, memory_id, from_ids, reason, detail, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      change.run_id,
      change.action,
      change.memory_id,
      JSON.stringify(change.from_ids),
      change.reason,
      change.detail,
      now,
    );
  }

  /** Newest first; `before` pages by id. */
  list(limit: number, before?: number): ChangelogEntry[] {
    const rows =
      before === undefined
        ? this.sql.all('SELECT * FROM agt_memory_changelog ORDER BY id DESC LIMIT ?', limit)
        : this.sql.all('SELECT * FROM agt_memory_changelog WHERE id < ? ORDER BY id DESC LIMIT ?', before, limit);
    return rows.map((row) => ({
      ...(row as unknown as ChangelogEntry),
      from_ids: JSON.parse(row.from_ids as string) as number[],
    }));
  }
}
