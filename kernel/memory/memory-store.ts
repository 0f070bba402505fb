/**
 * `agt_memory` and its indexes: the agent's long-term memories, in its own file (docs/memory.md).
 *
 * Every write keeps the full-text index (`agt_memory_fts`, FTS5, contentless) and the vector table in
 * step in the same transaction: a memory is in the indexes exactly while it is not forgotten. A
 * forgotten memory keeps its row (and text, for the owner) with `forgotten_at` set, out of every
 * search, until {@link MemoryStore.purgeForgotten} deletes it. A changed text drops its vector: it waits
 * to be embedded again.
 *
 * All of it runs on the daemon's connection, except a large file's two search lists, made on the search worker
 * (search-worker.mjs; bench/memory-search.ts times them); embeddings, the slow part, are fetched outside any
 * transaction.
 */
import { randomUUID } from 'node:crypto';
import type { Sql, SqlValue } from '../agents/sql.js';
import { anyOf, FULL_TEXT_SQL, nearestRows } from './search-sql.mjs';
import { ChangelogStore } from './changelog-store.js';
import { vectorBlob } from './vectors.js';

export const MEMORY_KINDS = ['fact', 'episode', 'summary', 'instruction'] as const;
export type MemoryKind = (typeof MEMORY_KINDS)[number];
export type MemorySource = 'agent' | 'owner' | 'compaction' | 'consolidation';

/** The longest memory text (characters). */
export const MAX_MEMORY_CHARS = 8_000;

export interface Memory {
  id: number;
  text: string;
  kind: MemoryKind;
  source: MemorySource;
  loop: string | null;
  turn_id: string | null;
  /** The conversation row it came from, when it came from one. */
  row_id: number | null;
  pinned: boolean;
  created_at: number;
  updated_at: number;
  used_at: number | null;
  forgotten_at: number | null;
}

export interface NewMemory {
  text: string;
  kind?: MemoryKind;
  source: MemorySource;
  loop?: string | null;
  turnId?: string | null;
  rowId?: number | null;
  pinned?: boolean;
}

export interface MemoryListOptions {
  limit: number;
  /** Only ids below this (paging, newest first). */
  before?: number;
  kind?: MemoryKind;
  pinned?: boolean;
  /** Forgotten ones instead of the live ones. */
  forgotten?: boolean;
}

const COLUMNS = 'id, text, kind, source, loop, turn_id, row_id, pinned, created_at, updated_at, used_at, forgotten_at';
const toMemory = (row: Record<string, unknown>): Memory => ({
  ...(row as unknown as Memory),
  pinned: row.pinned === 1,
});

/**
 * English function words left out of a search: with "any word matches", a shared "the" would match
 * every memory (recall offers full-text matches whatever their score). A query of nothing else keeps them.
 */
const STOP_WORDS = new Set(
  (
    'a an and are as at be been but by can could did do does for from had has have he her hers him his how i if in into is it its me ' +
    'my no not of on or our she so than that the their them then there these they this those to too us was we were what when ' +
    'where which while who whom why will with would you your'
  ).split(' '),
);

/** The words of free text a search looks for (stop words left out, unless there is nothing else), at most `max`. */
export function ftsTerms(text: string, max = 32): string[] {
  const all = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const content = all.filter((word) => !STOP_WORDS.has(word));
  return [...new Set(content.length > 0 ? content : all)].slice(0, max);
}

/**
 * Free text as an FTS5 query: its words, each quoted (no operator, column filter or syntax error can
 * come from the input), any of them matching; BM25 ranks the documents with more and rarer ones first.
 */
export function ftsQuery(text: string, maxTerms = 32): string | null {
  return anyOf(ftsTerms(text, maxTerms));
}

export class MemoryStore {
  /** What consolidation runs changed (kernel/memory/consolidation.ts). */
  readonly changelog: ChangelogStore;
  /**
   * Which copy of the vectors the search worker may hold in memory (search-worker.mjs): a new one for each
   * store (each opening of the file) and each time the vectors are cleared.
   */
  private vectorsKey = randomUUID();
  /** Memories whose vectors were written or dropped since the search worker last heard of them. */
  private readonly changedVectors = new Set<number>();

  constructor(private readonly sql: Sql) {
    this.changelog = new ChangelogStore(sql);
  }

  /** Live memories that are not pinned, newest first. */
  unpinned(limit: number): Memory[] {
    return this.unpinnedBelow(Number.MAX_SAFE_INTEGER, 0, limit);
  }

  /**
   * What a consolidation run offers the model, at most `max` live unpinned memories: the newest half, and
   * as many older ones again from where the previous run's walk stopped (the cursor in `agt_memory_state`),
   * going towards the oldest and starting again under the newest once past it. So successive runs show
   * every old memory beside the new ones. `cursor` is where the next run goes on from; the run stores it
   * ({@link setConsolidationCursor}) once it has applied its changes, so a failed run is offered again.
   */
  consolidationOffer(max: number): { memories: Memory[]; cursor: number | null } {
    const newest = this.unpinned(Math.ceil(max / 2));
    const floor = newest.at(-1)?.id ?? 0;
    const stored = Number(
      this.sql.one<{ value: string }>("SELECT value FROM agt_memory_state WHERE key = 'consolidation_cursor'")?.value,
    );
    const start = Number.isSafeInteger(stored) && stored > 0 && stored < floor ? stored : floor;
    const walk = this.unpinnedBelow(start, 0, max - newest.length);
    // Past the oldest: on from just under the newest, down to where this walk began.
    if (walk.length < max - newest.length)
      walk.push(...this.unpinnedBelow(floor, start - 1, max - newest.length - walk.length));
    return { memories: [...newest, ...walk], cursor: walk.at(-1)?.id ?? null };
  }

  /** Where the next consolidation run's walk goes on from (null: from the newest again). */
  setConsolidationCursor(cursor: number | null): void {
    if (cursor === null) this.sql.run("DELETE FROM agt_memory_state WHERE key = 'consolidation_cursor'");
    else
      this.sql.run(
        "INSERT INTO agt_memory_state (key, value) VALUES ('consolidation_cursor', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        String(cursor),
      );
  }

  /** Live unpinned memories with `above < id < below`, newest first. */
  private unpinnedBelow(below: number, above: number, limit: number): Memory[] {
    if (limit <= 0) return [];
    return this.sql
      .all(
        `SELECT ${COLUMNS} FROM agt_memory WHERE forgotten_at IS NULL AND pinned = 0 AND id < ? AND id > ? ORDER BY id DESC LIMIT ?`,
        below,
        above,
        limit,
      )
      .map(toMemory);
  }

  add(input: NewMemory, now: number): Memory {
    return this.sql.transaction(() => {
      const { lastId } = this.sql.run(
        'INSERT INTO agt_memory (text, kind, source, loop, turn_id, row_id, pinned, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
        input.text,
        input.kind ?? 'fact',
        input.source,
        input.loop ?? null,
        input.turnId ?? null,
        input.rowId ?? null,
        input.pinned === true,
        now,
        now,
      );
      this.sql.run('INSERT INTO agt_memory_fts (rowid, text) VALUES (?, ?)', lastId, input.text);
      return this.get(lastId)!;
    });
  }

  get(id: number): Memory | undefined {
    const row = this.sql.one(`SELECT ${COLUMNS} FROM agt_memory WHERE id = ?`, id);
    return row ? toMemory(row) : undefined;
  }

  /** Live memories by id, in the order given (missing and forgotten ones left out). */
  many(ids: readonly number[]): Memory[] {
    if (ids.length === 0) return [];
    // `+forgotten_at`: looked up by id; the index on forgotten_at would walk every live memory instead.
    const rows = this.sql.all(
      `SELECT ${COLUMNS} FROM agt_memory WHERE +forgotten_at IS NULL AND id IN (SELECT value FROM json_each(?))`,
      JSON.stringify(ids),
    );
    const byId = new Map(rows.map((row) => [row.id as number, toMemory(row)]));
    return ids.map((id) => byId.get(id)).filter((m): m is Memory => m !== undefined);
  }

  /** Newest first. */
  list(options: MemoryListOptions): Memory[] {
    const where = [options.forgotten ? 'forgotten_at IS NOT NULL' : 'forgotten_at IS NULL'];
    const params: Array<string | number> = [];
    if (options.before !== undefined) where.push('id < ?'), params.push(options.before);
    if (options.kind !== undefined) where.push('kind = ?'), params.push(options.kind);
    if (options.pinned !== undefined) where.push('pinned = ?'), params.push(options.pinned ? 1 : 0);
    params.push(options.limit);
    return this.sql
      .all(`SELECT ${COLUMNS} FROM agt_memory WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT ?`, ...params)
      .map(toMemory);
  }

  /** Live memories that are pinned, oldest first. */
  pinned(limit: number): Memory[] {
    return this.sql
      .all(`SELECT ${COLUMNS} FROM agt_memory WHERE forgotten_at IS NULL AND pinned = 1 ORDER BY id LIMIT ?`, limit)
      .map(toMemory);
  }

  /** Whether more than `n` live memories exist (counted only that far). */
  liveMoreThan(n: number): boolean {
    return (
      (this.sql.one<{ n: number }>(
        'SELECT COUNT(*) AS n FROM (SELECT 1 FROM agt_memory WHERE forgotten_at IS NULL LIMIT ?)',
        n + 1,
      )?.n ?? 0) > n
    );
  }

  count(): { live: number; forgotten: number; pinned: number } {
    const row = this.sql.one<{ live: number; forgotten: number; pinned: number }>(
      'SELECT COALESCE(SUM(forgotten_at IS NULL), 0) AS live, COALESCE(SUM(forgotten_at IS NOT NULL), 0) AS forgotten, COALESCE(SUM(forgotten_at IS NULL AND pinned = 1), 0) AS pinned FROM agt_memory',
    );
    return row ?? { live: 0, forgotten: 0, pinned: 0 };
  }

  /**
   * Changes text, kind or pin of a live memory; undefined when there is none. A new text is indexed again and its
   * vector dropped.
   */
  update(id: number, patch: { text?: string; kind?: MemoryKind; pinned?: boolean }, now: number): Memory | undefined {
    return this.sql.transaction(() => {
      const current = this.get(id);
      if (!current || current.forgotten_at !== null) return undefined;
      const text = patch.text ?? current.text;
      this.sql.run(
        'UPDATE agt_memory SET text = ?, kind = ?, pinned = ?, updated_at = ? WHERE id = ?',
        text,
        patch.kind ?? current.kind,
        patch.pinned ?? current.pinned,
        now,
        id,
      );
      if (text !== current.text) {
        this.sql.run('DELETE FROM agt_memory_fts WHERE rowid = ?', id);
        this.sql.run('INSERT INTO agt_memory_fts (rowid, text) VALUES (?, ?)', id, text);
        this.dropVector(id);
      }
      return this.get(id);
    });
  }

  /** Marks a live memory forgotten and takes it out of the indexes; false when there was none. */
  forget(id: number, now: number): boolean {
    return this.sql.transaction(() => {
      const { changes } = this.sql.run(
        'UPDATE agt_memory SET forgotten_at = ?, updated_at = ? WHERE id = ? AND forgotten_at IS NULL',
        now,
        now,
        id,
      );
      if (changes === 0) return false;
      this.unindex(id);
      return true;
    });
  }

  /** Deletes a memory for good (forgotten or not); false when there was none. */
  delete(id: number): boolean {
    return this.sql.transaction(() => {
      const current = this.get(id);
      if (!current) return false;
      if (current.forgotten_at === null) this.unindex(id);
      this.sql.run('DELETE FROM agt_memory WHERE id = ?', id);
      return true;
    });
  }

  /** Deletes memories forgotten before `before`; returns how many. */
  purgeForgotten(before: number): number {
    return this.sql.run('DELETE FROM agt_memory WHERE forgotten_at IS NOT NULL AND forgotten_at < ?', before).changes;
  }

  /** Sets `used_at` (recalled or found by the agent's search). */
  touch(ids: readonly number[], now: number): void {
    if (ids.length === 0) return;
    this.sql.run(
      'UPDATE agt_memory SET used_at = ? WHERE id IN (SELECT value FROM json_each(?))',
      now,
      JSON.stringify(ids),
    );
  }

  /** Full-text matches, best first (BM25; lower is better in SQLite's sign), at most `limit`. */
  fullText(query: string, limit: number): Array<{ id: number; score: number }> {
    const match = ftsQuery(query);
    if (!match) return [];
    return this.sql.all<{ id: number; score: number }>(FULL_TEXT_SQL, match, limit);
  }

  /** Nearest memories by cosine distance, best first (search-sql.mjs says how). */
  nearest(vector: readonly number[], limit: number): Array<{ id: number; distance: number }> {
    return nearestRows((source, params) => this.sql.all(source, ...(params as SqlValue[])), vectorBlob(vector), limit);
  }

  /**
   * What the search worker needs to bring its in-memory copy of the 1-bit vectors up to date, and forgets
   * it: the worker takes the messages in order, so each change is sent once. A change rolled back is sent
   * all the same; the worker reads those vectors again, so it costs a lookup, never a wrong copy.
   */
  takeVectorChanges(): { key: string; changed: number[] } {
    const changed = [...this.changedVectors];
    this.changedVectors.clear();
    return { key: this.vectorsKey, changed };
  }

  /** After every vector was deleted (vectors.ts `useVectorModel`): the worker's copy is read again whole. */
  vectorsCleared(): void {
    this.vectorsKey = randomUUID();
    this.changedVectors.clear();
  }

  /** Live memories with no vector yet, oldest first (what the embedder works through). */
  unembedded(limit: number): Array<{ id: number; text: string }> {
    return this.sql.all(
      'SELECT m.id, m.text FROM agt_memory AS m LEFT JOIN agt_memory_vectors AS v ON v.memory_id = m.id WHERE m.forgotten_at IS NULL AND v.memory_id IS NULL ORDER BY m.id LIMIT ?',
      limit,
    );
  }

  /** Live memories with a vector and without. */
  embeddedCount(): { embedded: number; pending: number } {
    const live = this.count().live;
    const embedded = this.sql.one<{ n: number }>('SELECT COUNT(*) AS n FROM agt_memory_vectors')?.n ?? 0;
    return { embedded, pending: Math.max(0, live - embedded) };
  }

  /**
   * Stores vectors of memories whose text is still `text` (a memory changed or forgotten while its
   * vector was being fetched is skipped).
   */
  putVectors(items: ReadonlyArray<{ id: number; text: string; vector: readonly number[] }>): number {
    return this.sql.transaction(() => {
      let stored = 0;
      for (const item of items) {
        const current = this.sql.one<{ text: string }>(
          'SELECT text FROM agt_memory WHERE id = ? AND forgotten_at IS NULL',
          item.id,
        );
        if (current?.text !== item.text) continue;
        const blob = vectorBlob(item.vector);
        this.sql.run('INSERT OR REPLACE INTO agt_memory_vectors (memory_id, embedding) VALUES (?, ?)', item.id, blob);
        this.sql.run(
          'INSERT OR REPLACE INTO agt_memory_bits (memory_id, bits) VALUES (?, vector1bit(?))',
          item.id,
          blob,
        );
        this.changedVectors.add(item.id);
        stored++;
      }
      return stored;
    });
  }

  private unindex(id: number): void {
    this.sql.run('DELETE FROM agt_memory_fts WHERE rowid = ?', id);
    this.dropVector(id);
  }

  private dropVector(id: number): void {
    this.changedVectors.add(id);
    this.sql.run('DELETE FROM agt_memory_vectors WHERE memory_id = ?', id);
    this.sql.run('DELETE FROM agt_memory_bits WHERE memory_id = ?', id);
  }
}
