/**
 * The agent's own `local_*` tables, and the table listing. Table names that reach SQL are checked against
 * a strict pattern AND against `sqlite_master` before they are quoted into a statement; nothing else is
 * ever interpolated.
 *
 * No amount of agent data blocks the daemon's event loop here:
 * - What touches the rows of a `local_*` table (its count, a page, DROP) runs in the agent's SQL child
 *   ({@link LocalSql}: the runtime's `SqlSandbox`, kernel/runtime/sql-sandbox/sql-runner.ts) under the
 *   agent's `limits.sql_timeout_ms`, through the child's policy like the agent's own statements, and
 *   like them it waits for one of the daemon's SQL processes (`sqlMaxProcesses`) inside that limit. A
 *   count past the limit is `row_count: null`; a page past it fails with `timeout`.
 * - The daemon's tables (`agt_*`) are out of the child's reach. The agent cannot fill them at will, but
 *   `agt_logs`, `agt_loop` and `agt_audit` grow with what it does, so they are walked on the daemon's
 *   connection in rowid order a slice at a time (each slice sized to about {@link SLICE_MS} of SQLite
 *   work, then the event loop runs), under the same time limit: counts stay exact, and an `offset` is
 *   reached by walking, never by one `OFFSET` that skips everything at once (an offset past
 *   `max(rowid) - min(rowid)` is answered empty without walking).
 * - A page stops at {@link PAGE_MAX_BYTES} of JSON (`truncated: true`), so parsing and sending it is short too.
 */
import { isAgtError } from '@agt/contracts';
import type { Sql } from '../sql.js';
import { tableNotDroppable, tableNotFound, tableNotReadable, tableOffsetTimedOut } from './errors.js';

/** Names the owner may read through the tables route. */
export const LOCAL_TABLE_PATTERN = /^local_[A-Za-z0-9_]{1,64}$/;
/** Daemon tables that are readable too (the inbox and outbox have their own routes). */
export const READABLE_DAEMON_TABLES: ReadonlySet<string> = new Set(['agt_audit']);

export const isLocalTable = (name: string) => LOCAL_TABLE_PATTERN.test(name);

/** Tables agent SQL can create and fill (the child's policy: any name starting `local_`), counted in the child. */
const isAgentTable = (name: string) => name.startsWith('local_');

/** An identifier quoted for SQLite (doubles inner quotes). Only for names read from `sqlite_master`. */
export const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** At most this much JSON per page (the rest is `truncated`); the SQL child's largest per-call cap. */
export const PAGE_MAX_BYTES = 1024 * 1024;
/** SQLite work per slice of a daemon-table walk, in ms, before the event loop runs again. */
const SLICE_MS = 2;
const FIRST_SLICE_ROWS = 1_000;
const MIN_SLICE_ROWS = 50;
const MAX_SLICE_ROWS = 100_000;
/** Rows per slice of a daemon-table page (each slice is one synchronous read). */
const PAGE_SLICE_ROWS = 50;
/** The rowid column a daemon-table page reads beside `*` (removed from the rows). */
const ROWID = 'agt:rowid';

export interface TableInfo {
  name: string;
  /** Null when counting did not finish within the agent's SQL time limit (or a foreign WITHOUT ROWID table). */
  row_count: number | null;
}

export interface TablePage {
  columns: string[];
  rows: Record<string, unknown>[];
  /**
   * True when the page stopped at {@link PAGE_MAX_BYTES} of JSON before `limit` rows (go on at offset + rows.length).
   */
  truncated: boolean;
}

/**
 * Where statements on `local_*` tables run: the agent's SQL child (the runtime's `SqlSandbox`), off the
 * event loop, killed at `timeoutMs` (an AgtError `timeout`).
 */
export interface LocalSql {
  query(call: {
    sql: string;
    params?: Array<string | number | null>;
    timeoutMs?: number;
    maxRows?: number;
    maxBytes?: number;
  }): Promise<{
    columns: string[];
    rows: Record<string, unknown>[];
    truncated: boolean;
  }>;
  execute(call: { sql: string; timeoutMs?: number }): Promise<unknown>;
}

/** JSON-safe cell: BLOBs become base64 text. */
const jsonCell = (value: unknown) => (Buffer.isBuffer(value) ? value.toString('base64') : value);

const isTimeout = (error: unknown) => isAgtError(error) && error.code === 'timeout';

/** Lets the event loop run (timers, sockets) before the next slice. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export class LocalTables {
  constructor(private readonly sql: Sql) {}

  private exists(name: string): boolean {
    return this.sql.one("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = ?", name) !== undefined;
  }

  /** Every table of the file except SQLite's own, sorted. */
  names(): string[] {
    return this.sql
      .all<{ name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
      )
      .map((row) => row.name);
  }

  /**
   * Every table with its row count (null when counting passed `timeoutMs`): `local_*` tables counted in
   * the agent's SQL child (`local`), daemon tables walked in slices. A table dropped meanwhile is left out.
   */
  async list(local: LocalSql, timeoutMs: number): Promise<TableInfo[]> {
    const counted = await Promise.all(
      this.names().map(async (name) => ({ name, row_count: await this.count(name, local, timeoutMs) })),
    );
    return counted.filter((table): table is TableInfo => table.row_count !== undefined);
  }

  private async count(name: string, local: LocalSql, timeoutMs: number): Promise<number | null | undefined> {
    if (!isAgentTable(name)) {
      try {
        const walked = await this.walk(name, Number.POSITIVE_INFINITY, Date.now() + timeoutMs);
        return walked ? walked.passed : null;
      } catch {
        // Gone meanwhile, or a table made outside agt that cannot be walked by rowid (WITHOUT ROWID).
        return this.exists(name) ? null : undefined;
      }
    }
    try {
      const { rows } = await local.query({ sql: `SELECT count(*) AS n FROM ${quoteIdent(name)}`, timeoutMs });
      return Number(rows[0]?.n ?? 0);
    } catch (error) {
      if (isTimeout(error)) return null;
      if (!this.exists(name)) return undefined;
      throw error;
    }
  }

  /**
   * Passes up to `rows` rows of a daemon table in rowid order, after rowid `after` (from the first row
   * when undefined), one slice per turn of the event loop. Resolves to the rows passed and the last
   * rowid passed (`end` when the table ended first), or undefined when `deadline` (epoch ms) came first.
   */
  private async walk(
    name: string,
    rows: number,
    deadline: number,
    after?: number,
  ): Promise<{ passed: number; last: number | undefined; end: boolean } | undefined> {
    const inner = `SELECT rowid AS k FROM ${quoteIdent(name)}`;
    const fromStart = `SELECT count(*) AS n, max(k) AS last FROM (${inner} ORDER BY rowid LIMIT ?)`;
    const fromRow = `SELECT count(*) AS n, max(k) AS last FROM (${inner} WHERE rowid > ? ORDER BY rowid LIMIT ?)`;
    let passed = 0;
    let last = after;
    let slice = FIRST_SLICE_ROWS;
    while (passed < rows) {
      if (Date.now() >= deadline) return undefined;
      const want = Math.min(slice, rows - passed);
      const started = performance.now();
      const step =
        last === undefined
          ? this.sql.one<{ n: number; last: number | null }>(fromStart, want)!
          : this.sql.one<{ n: number; last: number | null }>(fromRow, last, want)!;
      const took = performance.now() - started;
      passed += step.n;
      if (step.last !== null) last = step.last;
      if (step.n < want) return { passed, last, end: true };
      slice = Math.min(MAX_SLICE_ROWS, Math.max(MIN_SLICE_ROWS, Math.round((want * SLICE_MS) / Math.max(took, 0.01))));
      await nextTurn();
    }
    return { passed, last, end: false };
  }

  /**
   * One page of a readable table (`local_*` or `agt_audit`). `bad_request` for any other name,
   * `not_found` for a valid name that does not exist, `timeout` when reading it passed `timeoutMs`.
   */
  async read(name: string, limit: number, offset: number, local: LocalSql, timeoutMs: number): Promise<TablePage> {
    if (!isLocalTable(name) && !READABLE_DAEMON_TABLES.has(name)) {
      throw tableNotReadable(name);
    }
    if (!this.exists(name)) throw tableNotFound(name);
    if (READABLE_DAEMON_TABLES.has(name)) return this.daemonPage(name, limit, offset, Date.now() + timeoutMs);
    const page = await local.query({
      sql: `SELECT * FROM ${quoteIdent(name)} LIMIT ? OFFSET ?`,
      params: [limit, offset],
      timeoutMs,
      maxRows: limit,
      maxBytes: PAGE_MAX_BYTES,
    });
    return { columns: page.columns, rows: page.rows, truncated: page.truncated };
  }

  /** A page of a daemon table in rowid order: the offset reached by walking, the rows read in slices. */
  private async daemonPage(name: string, limit: number, offset: number, deadline: number): Promise<TablePage> {
    const table = quoteIdent(name);
    const columns = this.sql.columns(`SELECT * FROM ${table}`);
    const empty = { columns, rows: [], truncated: false };
    let after: number | undefined;
    if (offset > 0) {
      // Rowids are distinct integers: a table holds at most max - min + 1 rows (two b-tree descents).
      const max = this.sql.one<{ k: number | null }>(`SELECT max(rowid) AS k FROM ${table}`)?.k ?? null;
      const min = this.sql.one<{ k: number | null }>(`SELECT min(rowid) AS k FROM ${table}`)?.k ?? null;
      if (max === null || min === null || offset > max - min) return empty;
      const skipped = await this.walk(name, offset, deadline);
      if (!skipped) throw tableOffsetTimedOut(offset, name);
      if (skipped.end) return empty;
      after = skipped.last;
    }
    const fromStart = `SELECT rowid AS "${ROWID}", * FROM ${table} ORDER BY rowid LIMIT ?`;
    const fromRow = `SELECT rowid AS "${ROWID}", * FROM ${table} WHERE rowid > ? ORDER BY rowid LIMIT ?`;
    const rows: Record<string, unknown>[] = [];
    let bytes = 2;
    while (rows.length < limit) {
      const want = Math.min(PAGE_SLICE_ROWS, limit - rows.length);
      const slice = after === undefined ? this.sql.all(fromStart, want) : this.sql.all(fromRow, after, want);
      for (const raw of slice) {
        after = raw[ROWID] as number;
        const row = Object.fromEntries(
          Object.entries(raw)
            .filter(([key]) => key !== ROWID)
            .map(([key, value]) => [key, jsonCell(value)]),
        );
        bytes += Buffer.byteLength(JSON.stringify(row)) + 1;
        if (bytes > PAGE_MAX_BYTES) return { columns, rows, truncated: true };
        rows.push(row);
      }
      if (slice.length < want) break;
      if (rows.length < limit) await nextTurn();
    }
    return { columns, rows, truncated: false };
  }

  /**
   * Drops a `local_*` table in the agent's SQL child; `bad_request` for any other name; false when it
   * does not exist; `timeout` when dropping passed `timeoutMs` (nothing dropped).
   */
  async drop(name: string, local: LocalSql, timeoutMs: number): Promise<boolean> {
    if (!isLocalTable(name)) {
      throw tableNotDroppable(name);
    }
    if (!this.exists(name)) return false;
    await local.execute({ sql: `DROP TABLE IF EXISTS ${quoteIdent(name)}`, timeoutMs });
    return true;
  }
}
