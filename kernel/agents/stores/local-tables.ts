/**
 * The agent's own `local_*` tables, and the table listing. Table names that reach SQL are checked against
 * a strict pattern AND against `sqlite_master` before they are quoted into a statement; nothing else is
 * ever interpolated.
 */
import type { Sql } from '../sql.js';
import { tableNotDroppable, tableNotFound, tableNotReadable } from './errors.js';

/** Names the owner may read through the tables route. */
export const LOCAL_TABLE_PATTERN = /^local_[A-Za-z0-9_]{1,64}$/;
/** Daemon tables that are readable too (the inbox and outbox have their own routes). */
export const READABLE_DAEMON_TABLES: ReadonlySet<string> = new Set(['agt_audit']);

export const isLocalTable = (name: string) => LOCAL_TABLE_PATTERN.test(name);

/** An identifier quoted for SQLite (doubles inner quotes). Only for names read from `sqlite_master`. */
export const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

export interface TableInfo {
  name: string;
  row_count: number;
}

export interface TablePage {
  columns: string[];
  rows: Record<string, unknown>[];
}

/** JSON-safe cell: BLOBs become base64 text. */
const jsonCell = (value: unknown) => (Buffer.isBuffer(value) ? value.toString('base64') : value);

export class LocalTables {
  constructor(private readonly sql: Sql) {}

  private exists(name: string): boolean {
    return this.sql.one("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = ?", name) !== undefined;
  }

  /** Every table of the file except SQLite's own, sorted, with row counts. */
  list(): TableInfo[] {
    const names = this.sql
      .all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")
      .map((row) => row.name);
    return names.map((name) => ({ name, row_count: this.sql.one<{ n: number }>(`SELECT count(*) AS n FROM ${quoteIdent(name)}`)!.n }));
  }

  /** Names of the agent's `local_*` tables. */
  localNames(): string[] {
    return this.list().map((table) => table.name).filter(isLocalTable);
  }

  /**
   * One page of a readable table (`local_*` or `agt_audit`). `bad_request` for any other name,
   * `not_found` for a valid name that does not exist.
   */
  read(name: string, limit: number, offset: number): TablePage {
    if (!isLocalTable(name) && !READABLE_DAEMON_TABLES.has(name)) {
      throw tableNotReadable(name);
    }
    if (!this.exists(name)) throw tableNotFound(name);
    const order = READABLE_DAEMON_TABLES.has(name) ? ' ORDER BY id' : '';
    const source = `SELECT * FROM ${quoteIdent(name)}${order} LIMIT ? OFFSET ?`;
    const rows = this.sql.all(source, limit, offset).map((row) =>
      Object.fromEntries(Object.entries(row).map(([key, value]) => [key, jsonCell(value)])),
    );
    return { columns: this.sql.columns(source), rows };
  }

  /** Drops a `local_*` table; `bad_request` for any other name; false when it does not exist. */
  drop(name: string): boolean {
    if (!isLocalTable(name)) {
      throw tableNotDroppable(name);
    }
    if (!this.exists(name)) return false;
    this.sql.exec(`DROP TABLE ${quoteIdent(name)}`);
    return true;
  }
}
