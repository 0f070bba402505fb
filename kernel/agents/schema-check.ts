/**
 * What an agent file carries in its schema besides the daemon's own tables and indexes.
 *
 * The daemon never creates triggers or views, and agent SQL cannot create them or virtual tables (see
 * kernel/runtime/sql-sandbox/sql-policy.mjs). A file that carries one anyway was made elsewhere, and a
 * trigger (or a view read in place of a table) runs SQL of the file's author on the daemon's own
 * connection, on the daemon's writes: such a file is refused at open with 422 `load_failed`,
 * `reason: "unsafe_schema"`. The daemon's own set is what its migrations build (computed once, in
 * memory); `sqlite_*` objects (autoindexes, `sqlite_sequence`) are SQLite's. The one virtual table the
 * daemon creates (the memory's full-text index) is its own only when its definition is exactly the
 * daemon's: a table of that name over another module or with other options is still refused.
 */
import { libsql } from './libsql.js';
import { MIGRATIONS } from './schema.js';
import type { Sql } from './sql.js';

export interface SchemaObject {
  /** `table`, `index`, `view` or `trigger` (a virtual table is a `table` with `virtual: true`). */
  type: string;
  name: string;
  /** The table it belongs to (its own name for a table or view). */
  table: string;
  virtual?: boolean;
}

let daemonObjects: ReadonlyMap<string, string | null> | undefined;

/** `type:name` of every object the daemon's migrations create, with its SQL. */
function ownObjects(): ReadonlyMap<string, string | null> {
  if (daemonObjects) return daemonObjects;
  const db = new (libsql())(':memory:');
  try {
    for (const step of MIGRATIONS) db.exec(step.sql);
    const rows = db.prepare('SELECT type, name, sql FROM sqlite_master').all() as Array<{
      type: string;
      name: string;
      sql: string | null;
    }>;
    daemonObjects = new Map(rows.map((row) => [`${row.type}:${row.name}`, row.sql]));
  } finally {
    db.close();
  }
  return daemonObjects;
}

/** The daemon's own: built by its migrations (a virtual table only with the very same definition). */
function isOwn(
  own: ReadonlyMap<string, string | null>,
  row: { type: string; name: string; sql: string | null },
): boolean {
  const key = `${row.type}:${row.name}`;
  return own.has(key) && (!isVirtual(row) || own.get(key) === row.sql);
}

/** Every schema object of the file's main database that is not the daemon's own nor SQLite's, by name. */
export function foreignSchemaObjects(sql: Sql): SchemaObject[] {
  const own = ownObjects();
  const rows = sql.all<{ type: string; name: string; tbl_name: string; sql: string | null }>(
    'SELECT type, name, tbl_name, sql FROM main.sqlite_master ORDER BY type, name',
  );
  return (
    rows
      // SQLite's own tables and indexes (a trigger or view is never SQLite's, whatever its name).
      .filter(
        (row) => !((row.type === 'table' || row.type === 'index') && row.name.startsWith('sqlite_') && !isVirtual(row)),
      )
      .filter((row) => !isOwn(own, row))
      .map((row) => ({
        type: row.type,
        name: row.name,
        table: row.tbl_name,
        ...(isVirtual(row) ? { virtual: true } : {}),
      }))
  );
}

/** The objects that make a file unsafe to open: triggers, views and virtual tables. */
export function unsafeSchemaObjects(objects: readonly SchemaObject[]): SchemaObject[] {
  return objects.filter((object) => object.type === 'trigger' || object.type === 'view' || object.virtual === true);
}

function isVirtual(row: { type: string; sql: string | null }): boolean {
  return row.type === 'table' && /^\s*CREATE\s+VIRTUAL\s+TABLE\b/i.test(row.sql ?? '');
}
