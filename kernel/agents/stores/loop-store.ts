/**
 * `agt_loop`: the durable conversation streams, one per cognition loop (`main` and inner loops). Rows are
 * generic (role, kind, JSON content) so the runtime decides what a message looks like; usage columns
 * feed the usage rollup.
 */
import { parseJson, type Sql } from '../sql.js';

export type LoopRole = 'user' | 'assistant' | 'tool' | 'system';
/** `model_invoke` rows (a model call recorded without a message) are excluded from the usage rollup. */
export type LoopKind = 'message' | 'tool_call' | 'tool_result' | 'notice' | 'summary' | 'model_invoke' | (string & {});

/** Token usage of the model call that produced a row. `input` includes cache read and cache write. */
export interface RowUsage {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

export interface LoopRowInput {
  /** Absent means `main`. */
  loop?: string;
  role: LoopRole;
  kind?: LoopKind;
  /** Any JSON value; stored as JSON text. */
  content: unknown;
  turnId?: string | null;
  model?: string | null;
  provider?: string | null;
  usage?: RowUsage | null;
  cost?: number | null;
  createdAt?: number;
}

export interface LoopRow {
  id: number;
  loop: string;
  role: LoopRole;
  kind: LoopKind;
  content: unknown;
  turn_id: string | null;
  model: string | null;
  provider: string | null;
  usage_input: number | null;
  usage_output: number | null;
  usage_cache_read: number | null;
  usage_cache_write: number | null;
  cost: number | null;
  created_at: number;
}

const COLUMNS =
  'id, loop, role, kind, content, turn_id, model, provider, usage_input, usage_output, usage_cache_read, usage_cache_write, cost, created_at';

const decode = (row: LoopRow): LoopRow => ({ ...row, content: parseJson(row.content) });

/** Freezes a parsed JSON value all the way down (the tail cache shares it between readers). */
function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  for (const inner of Object.values(value)) deepFreeze(inner);
  return Object.freeze(value);
}

/** A stored row as the tail cache keeps it: content parsed once, row and content frozen. */
const decodeFrozen = (row: LoopRow): LoopRow => Object.freeze({ ...row, content: deepFreeze(parseJson(row.content)) });

/** A `tail` cache holds at most this many rows per loop (the runtime asks for 400: MAX_CONTEXT_ROWS). */
const TAIL_CACHE_MAX = 1000;

/** The newest rows of one loop, content parsed and frozen, oldest first. */
interface CachedTail {
  rows: LoopRow[];
  /** How many rows to keep (the largest limit asked for). */
  keep: number;
  /** `rows` are all the loop's rows (the read returned fewer than asked). */
  complete: boolean;
}

export class LoopStore {
  /**
   * Row counts per loop, read once (one GROUP BY) at the first count and kept current by this store's
   * writes: `GET /agents/{id}/status` asks for main's count on every request, and a `count(*)` per
   * request cost ~16% of that route. Every write to `agt_loop` goes through this store; a rollback
   * (whole or savepoint) drops the counts and the next count reads them again.
   */
  private rowCounts: Map<string, number> | undefined;
  /**
   * The newest rows of each loop a turn read, kept current by this store's writes: every turn reads its
   * context (`tail`, up to 400 rows), and reading them in libsql, then parsing every row's JSON again,
   * was the largest share of a turn's CPU with a long history (profiles in docs/performance.md). Each
   * row is parsed once and deep-frozen, row and content: readers share objects that nobody can change
   * (a write to them throws in strict code), so no reader sees another's edits.
   *
   * Stale rows are impossible by construction: every write to `agt_loop` on this connection goes
   * through this store (appends extend a cached tail; compaction, clearing and rollbacks drop it), and a
   * commit by ANY other connection to the file (the agent's SQL child, a tool, a manual edit) changes
   * SQLite's `PRAGMA data_version`, which every cached read checks first and which drops every tail.
   */
  private readonly tails = new Map<string, CachedTail>();
  /** `PRAGMA data_version` when the tails were last known current (see {@link tails}). */
  private dataVersion: number | undefined;

  constructor(private readonly sql: Sql) {
    sql.onRollback(() => {
      this.rowCounts = undefined;
      this.tails.clear();
    });
  }

  /** Drops the tails when another connection committed since the last check (one PRAGMA, no I/O). */
  private checkOtherWriters(): void {
    const version = Number(this.sql.one<{ data_version: number }>('PRAGMA data_version')?.data_version);
    if (version !== this.dataVersion) {
      this.tails.clear();
      this.dataVersion = version;
    }
  }

  private loadedCounts(): Map<string, number> {
    if (this.rowCounts === undefined) {
      const rows = this.sql.all<{ loop: string; n: number }>('SELECT loop, count(*) AS n FROM agt_loop GROUP BY loop');
      this.rowCounts = new Map(rows.map((row) => [row.loop, Number(row.n)]));
    }
    return this.rowCounts;
  }

  /** Adds `delta` to a loop's cached count (nothing to do before the counts were first read). */
  private adjust(loop: string, delta: number): void {
    const counts = this.rowCounts;
    if (counts === undefined || delta === 0) return;
    const next = (counts.get(loop) ?? 0) + delta;
    if (next > 0) counts.set(loop, next);
    else counts.delete(loop);
  }

  /**
   * Commits one row and returns it (built from what was written, not read back: the values are the
   * columns' own types, and `content` goes through the same JSON text). Emit any event announcing it
   * only after this returns.
   */
  append(input: LoopRowInput): LoopRow {
    const usage = input.usage ?? null;
    const row: Omit<LoopRow, 'id' | 'content'> = {
      loop: input.loop ?? 'main',
      role: input.role,
      kind: input.kind ?? 'message',
      turn_id: input.turnId ?? null,
      model: input.model ?? null,
      provider: input.provider ?? null,
      usage_input: usage ? usage.input : null,
      usage_output: usage ? usage.output : null,
      usage_cache_read: usage ? (usage.cacheRead ?? 0) : null,
      usage_cache_write: usage ? (usage.cacheWrite ?? 0) : null,
      cost: input.cost ?? null,
      created_at: input.createdAt ?? Date.now(),
    };
    const content = JSON.stringify(input.content ?? null);
    const { lastId } = this.sql.run(
      `INSERT INTO agt_loop (loop, role, kind, content, turn_id, model, provider, usage_input, usage_output, usage_cache_read, usage_cache_write, cost, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      row.loop,
      row.role,
      row.kind,
      content,
      row.turn_id,
      row.model,
      row.provider,
      row.usage_input,
      row.usage_output,
      row.usage_cache_read,
      row.usage_cache_write,
      row.cost,
      row.created_at,
    );
    this.adjust(row.loop, 1);
    const stored: LoopRow = Object.freeze({ id: lastId, ...row, content: deepFreeze(parseJson(content)) });
    const cached = this.tails.get(row.loop);
    if (cached) {
      cached.rows.push(stored);
      if (cached.rows.length > cached.keep) {
        cached.rows.shift();
        cached.complete = false;
      }
    }
    return { ...stored };
  }

  /**
   * Compaction: the summary row that replaces the rows through `id` (deleted just before, in the same
   * transaction), written under that id so row ids keep their order.
   */
  insertSummary(input: {
    id: number;
    loop: string;
    content: unknown;
    model?: string | null;
    provider?: string | null;
    usage?: RowUsage | null;
    cost?: number | null;
    createdAt: number;
  }): void {
    const usage = input.usage ?? null;
    this.sql.run(
      `INSERT INTO agt_loop (id, loop, role, kind, content, turn_id, model, provider, usage_input, usage_output, usage_cache_read, usage_cache_write, cost, created_at)
       VALUES (?, ?, 'system', 'summary', ?, NULL, ?, ?, ?, ?, ?, ?, ?, ?)`,
      input.id,
      input.loop,
      JSON.stringify(input.content ?? null),
      input.model ?? null,
      input.provider ?? null,
      usage ? usage.input : null,
      usage ? usage.output : null,
      usage ? (usage.cacheRead ?? 0) : null,
      usage ? (usage.cacheWrite ?? 0) : null,
      input.cost ?? null,
      input.createdAt,
    );
    this.adjust(input.loop, 1);
    // Written under an older id: the cached tail is read again.
    this.tails.delete(input.loop);
  }

  get(id: number): LoopRow | undefined {
    const row = this.sql.one<LoopRow>(`SELECT ${COLUMNS} FROM agt_loop WHERE id = ?`, id);
    return row && decode(row);
  }

  /** Rows of one loop in id order, `offset` counted from the oldest row. */
  list(loop = 'main', options: { limit?: number; offset?: number } = {}): LoopRow[] {
    return this.sql
      .all<LoopRow>(
        `SELECT ${COLUMNS} FROM agt_loop WHERE loop = ? ORDER BY id LIMIT ? OFFSET ?`,
        loop,
        options.limit ?? -1,
        options.offset ?? 0,
      )
      .map(decode);
  }

  /**
   * The newest `limit` rows of one loop, oldest first (from the tail cache once read). The array is the
   * caller's own; the rows and their `content` are frozen and shared with the cache (copy to change).
   */
  tail(loop = 'main', limit = 50): LoopRow[] {
    const cacheable = limit > 0 && limit <= TAIL_CACHE_MAX;
    if (!cacheable)
      return this.sql
        .all<LoopRow>(`SELECT ${COLUMNS} FROM agt_loop WHERE loop = ? ORDER BY id DESC LIMIT ?`, loop, limit)
        .reverse()
        .map(decode);
    this.checkOtherWriters();
    const cached = this.tails.get(loop);
    if (cached && (cached.complete || cached.rows.length >= limit)) return cached.rows.slice(-limit);
    const rows = this.sql
      .all<LoopRow>(`SELECT ${COLUMNS} FROM agt_loop WHERE loop = ? ORDER BY id DESC LIMIT ?`, loop, limit)
      .reverse()
      .map(decodeFrozen);
    this.tails.set(loop, { rows, keep: Math.max(limit, cached?.keep ?? 0), complete: rows.length < limit });
    return rows.slice();
  }

  /** Rows of one loop with id greater than `afterId`, oldest first. */
  after(loop: string, afterId: number, limit = -1): LoopRow[] {
    return this.sql
      .all<LoopRow>(
        `SELECT ${COLUMNS} FROM agt_loop WHERE loop = ? AND id > ? ORDER BY id LIMIT ?`,
        loop,
        afterId,
        limit,
      )
      .map(decode);
  }

  /** The rows one turn wrote to one loop, oldest first (restart recovery). */
  ofTurn(loop: string, turnId: string): LoopRow[] {
    return this.sql
      .all<LoopRow>(`SELECT ${COLUMNS} FROM agt_loop WHERE loop = ? AND turn_id = ? ORDER BY id`, loop, turnId)
      .map(decode);
  }

  /** Persisted rows of one loop (kept in memory, see {@link rowCounts}). */
  count(loop = 'main'): number {
    return this.loadedCounts().get(loop) ?? 0;
  }

  /** Row counts per loop name (loops without rows are absent). */
  counts(): Map<string, number> {
    return new Map(this.loadedCounts());
  }

  /** Deletes one loop's stream (never all loops); returns the number of rows removed. */
  clear(loop = 'main'): number {
    const removed = this.sql.run('DELETE FROM agt_loop WHERE loop = ?', loop).changes;
    this.adjust(loop, -removed);
    this.tails.delete(loop);
    return removed;
  }

  /** Deletes the rows of one loop with id <= `maxId` (compaction); returns the number removed. */
  deleteThrough(loop: string, maxId: number): number {
    const removed = this.sql.run('DELETE FROM agt_loop WHERE loop = ? AND id <= ?', loop, maxId).changes;
    this.adjust(loop, -removed);
    this.tails.delete(loop);
    return removed;
  }
}
