/**
 * A thin typed layer over one libsql connection: cached statements, rows without libsql's `_metadata`
 * key, BLOBs always as Buffer (libsql gives Buffer from `get` but ArrayBuffer from `all`), booleans bound
 * as 0/1, and nestable transactions (savepoints inside an outer `BEGIN IMMEDIATE`).
 */
import type Database from 'libsql';

export type SqlValue = string | number | bigint | boolean | null | undefined | Uint8Array;
export type Row = Record<string, unknown>;

function bindable(value: SqlValue): unknown {
  if (value === undefined) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value;
}

/**
 * The parameters as one array: libsql reads a single object argument (a lone BLOB or null) as named
 * parameters, and its native side then aborts the process on a statement with positional ones.
 */
const bound = (params: SqlValue[]): unknown[] => params.map(bindable);

/** Copies a libsql row: drops `_metadata`, turns ArrayBuffer BLOBs into Buffers. */
export function cleanRow(raw: unknown): Row {
  const out: Row = {};
  for (const [key, value] of Object.entries(raw as Row)) {
    if (key === '_metadata') continue;
    out[key] = value instanceof ArrayBuffer ? Buffer.from(value) : value;
  }
  return out;
}

export class Sql {
  private readonly statements = new Map<string, Database.Statement>();
  private depth = 0;
  private readonly rollbackListeners: Array<() => void> = [];

  constructor(readonly db: Database.Database) {}

  private prepare(source: string): Database.Statement {
    let statement = this.statements.get(source);
    if (!statement) {
      statement = this.db.prepare(source);
      this.statements.set(source, statement);
    }
    return statement;
  }

  /** First row or undefined. */
  one<T = Row>(source: string, ...params: SqlValue[]): T | undefined {
    const raw = this.prepare(source).get(bound(params));
    return raw === undefined || raw === null ? undefined : (cleanRow(raw) as T);
  }

  all<T = Row>(source: string, ...params: SqlValue[]): T[] {
    return this.prepare(source)
      .all(bound(params))
      .map((raw) => cleanRow(raw) as T);
  }

  /** Runs a write; returns the changed row count and the last inserted rowid. */
  run(source: string, ...params: SqlValue[]): { changes: number; lastId: number } {
    const result = this.prepare(source).run(bound(params));
    return { changes: result.changes, lastId: Number(result.lastInsertRowid) };
  }

  /** Column names of a statement (works on empty results). */
  columns(source: string): string[] {
    return this.prepare(source)
      .columns()
      .map((column) => column.name);
  }

  /** Raw multi-statement SQL without parameters (DDL). */
  exec(source: string): void {
    this.db.exec(source);
  }

  /**
   * Runs `fn` atomically. The outermost call takes the write lock up front (`BEGIN IMMEDIATE`, so a
   * concurrent writer waits on the busy timeout instead of failing mid-way); nested calls use savepoints,
   * so an inner failure that the caller catches rolls back only the inner part.
   */
  transaction<T>(fn: () => T): T {
    const name = `agt_sp_${this.depth}`;
    this.db.exec(this.depth === 0 ? 'BEGIN IMMEDIATE' : `SAVEPOINT ${name}`);
    this.depth++;
    try {
      const result = fn();
      // libsql is synchronous: an async callback would commit before its awaits ran.
      if (result instanceof Promise) throw new TypeError('transaction callbacks must be synchronous');
      this.depth--;
      this.db.exec(this.depth === 0 ? 'COMMIT' : `RELEASE ${name}`);
      return result;
    } catch (error) {
      this.depth--;
      try {
        this.db.exec(this.depth === 0 ? 'ROLLBACK' : `ROLLBACK TO ${name}; RELEASE ${name}`);
      } finally {
        for (const listener of this.rollbackListeners) listener();
      }
      throw error;
    }
  }

  /** Calls `listener` after every rollback (whole transaction or savepoint): stores drop what they cached. */
  onRollback(listener: () => void): void {
    this.rollbackListeners.push(listener);
  }

  /** Forgets cached statements (before close: they pin the connection, see agent-file.ts). */
  dropStatements(): void {
    this.statements.clear();
  }
}

/** Parses JSON text stored by this module; a value that is not JSON comes back as the raw string. */
export function parseJson(text: unknown): unknown {
  if (typeof text !== 'string') return text ?? null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** JSON text for a column, or null for undefined/null. */
export function toJson(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}
