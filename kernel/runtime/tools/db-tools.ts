/**
 * `db_query` / `db_execute`: SQL on the agent's own `local_*` tables only.
 *
 * The guard does not parse SQL. It asks SQLite: the statement is compiled with `EXPLAIN`, and every
 * b-tree it would open (`OpenRead`/`OpenWrite` root pages, mapped back through `sqlite_master`) must
 * belong to a `local_*` table or index (or `sqlite_sequence` for AUTOINCREMENT); virtual tables and
 * other attached databases are refused. Schema changes are limited to `CREATE TABLE`, `CREATE INDEX`,
 * `DROP TABLE|INDEX` and `ALTER TABLE` naming `local_*` objects. One statement per call; no PRAGMA,
 * ATTACH, DETACH, VACUUM or load_extension; no `agt_`/`sqlite_` name in the code. `db_query` takes
 * only statements that read and returns at most 500 rows. Parameters are bound, never interpolated.
 */
import { Type } from 'typebox';
import { AgtError } from '../../../contracts/errors.js';
import type { ToolDefinition } from '../../../contracts/tools.js';
import type { AgentRuntime } from '../agent-runtime.js';
import { builtin, json, type RuntimeLookup } from './define.js';

const MAX_ROWS = 500;
const FORBIDDEN = /(agt_|sqlite_|pragma|\battach\b|\bdetach\b|\bvacuum\b|load_extension|\btemp\b|\btemporary\b)/i;
const LOCAL = /^["`[]?local_[A-Za-z0-9_]+["`\]]?$/;
const DDL = /^(create|drop|alter)\b/i;
const DDL_FORMS = [
  /^create\s+table\s+(?:if\s+not\s+exists\s+)?(\S+?)\s*\(/i,
  /^create\s+(?:unique\s+)?index\s+(?:if\s+not\s+exists\s+)?(\S+)\s+on\s+(\S+?)\s*\(/i,
  /^drop\s+(?:table|index)\s+(?:if\s+exists\s+)?(\S+?)\s*$/i,
  /^alter\s+table\s+(\S+)\s+(?:rename\s+to\s+(\S+?)\s*$|rename\s+(?:column\s+)?\S+\s+to\s+\S+\s*$|add\s+(?:column\s+)?|drop\s+(?:column\s+)?)/i,
];
const Params = Type.Optional(Type.Array(Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]), { maxItems: 100 }));
type Param = string | number | boolean | null;

/** The statement without string literals and comments (words inside them do not count). */
function code(sql: string): string {
  return sql.replace(/'(?:[^']|'')*'/g, "''").replace(/--[^\n]*/g, ' ').replace(/\/\*[\s\S]*?\*\//g, ' ');
}

/** Text-level checks; returns the single statement without a trailing semicolon. */
export function checkLocalSql(sql: string): string {
  const body = code(sql).trim().replace(/;\s*$/, '');
  if (body.includes(';')) throw new AgtError('bad_request', 'one SQL statement at a time');
  if (FORBIDDEN.test(body)) throw new AgtError('forbidden', "only the agent's own local_* tables are reachable (no agt_/sqlite_ names, PRAGMA, ATTACH, TEMP or extensions)");
  if (DDL.test(body)) {
    const match = DDL_FORMS.map((form) => form.exec(body)).find((m) => m !== null);
    if (!match) throw new AgtError('forbidden', 'schema changes are limited to CREATE TABLE, CREATE INDEX, DROP TABLE/INDEX and ALTER TABLE on local_* names');
    if (/\bas\s+select\b/i.test(body)) throw new AgtError('forbidden', 'CREATE TABLE ... AS SELECT is not allowed');
    for (const name of match.slice(1).filter((n): n is string => n !== undefined)) {
      if (!LOCAL.test(name)) throw new AgtError('forbidden', `"${name}" is not a local_* name`);
    }
  }
  return sql.trim().replace(/;\s*$/, '');
}

/** Every b-tree the compiled statement opens must be a local_* table or index. */
function checkTouched(runtime: AgentRuntime, sql: string, params: Param[]): void {
  const db = runtime.agent.file.raw.db;
  let program: Array<{ opcode: string; p2: number; p3: number }>;
  try {
    program = db.prepare(`EXPLAIN ${sql}`).all(...params) as typeof program;
  } catch (error) {
    throw new AgtError('bad_request', `SQL error: ${(error as Error).message}`);
  }
  if (program.some((op) => op.opcode === 'VOpen')) throw new AgtError('forbidden', 'virtual tables are not reachable from agent SQL');
  const roots = new Set<number>();
  for (const op of program) {
    if (op.opcode !== 'OpenRead' && op.opcode !== 'OpenWrite') continue;
    if (op.p3 !== 0) throw new AgtError('forbidden', 'only the main database is reachable');
    roots.add(op.p2);
  }
  if (roots.size === 0) return;
  const objects = runtime.agent.file.raw.all<{ name: string; tbl_name: string; rootpage: number }>(
    `SELECT name, tbl_name, rootpage FROM sqlite_master WHERE rootpage IN (${[...roots].map(() => '?').join(', ')})`,
    ...roots,
  );
  for (const root of roots) {
    const object = objects.find((o) => o.rootpage === root);
    const table = object?.tbl_name;
    // Root page 1 is sqlite_master itself: DDL writes it, and DDL was checked by name above.
    if (root === 1 && DDL.test(sql)) continue;
    if (!table || !(table.startsWith('local_') || table === 'sqlite_sequence')) {
      throw new AgtError('forbidden', `the statement reaches ${table ?? 'a table'} outside the agent's local_* tables`);
    }
  }
}

function prepare(runtime: AgentRuntime, sql: string, params: Param[]) {
  const statementText = checkLocalSql(sql);
  checkTouched(runtime, statementText, params);
  try {
    // Straight on the connection: agent SQL must not fill the stores' statement cache.
    return runtime.agent.file.raw.db.prepare(statementText);
  } catch (error) {
    throw new AgtError('bad_request', `SQL error: ${(error as Error).message}`);
  }
}

export function dbTools(lookup: RuntimeLookup): ToolDefinition[] {
  return [
    builtin(
      {
        name: 'db_query',
        description: 'Run a read-only SQL query on your local_* tables; returns at most 500 rows as JSON.',
        input: Type.Object({ sql: Type.String({ minLength: 1, maxLength: 20_000 }), params: Params }),
        run(runtime, { sql, params }) {
          const statement = prepare(runtime, sql, params ?? []);
          if (!statement.reader) throw new AgtError('bad_request', 'db_query only reads; use db_execute to change data');
          const rows = (statement.all(...(params ?? [])) as Record<string, unknown>[]).slice(0, MAX_ROWS + 1);
          const clean = rows.slice(0, MAX_ROWS).map((row) => Object.fromEntries(Object.entries(row).filter(([k]) => k !== '_metadata').map(([k, v]) => [k, v instanceof ArrayBuffer || Buffer.isBuffer(v) ? Buffer.from(v as ArrayBuffer).toString('base64') : v])));
          return json({ rows: clean, truncated: rows.length > MAX_ROWS });
        },
      },
      lookup,
    ),
    builtin(
      {
        name: 'db_execute',
        description: 'Run one SQL statement that changes your local_* tables (CREATE TABLE local_x, INSERT, UPDATE, DELETE, DROP).',
        input: Type.Object({ sql: Type.String({ minLength: 1, maxLength: 20_000 }), params: Params }),
        run(runtime, { sql, params }) {
          const statement = prepare(runtime, sql, params ?? []);
          if (statement.reader) throw new AgtError('bad_request', 'db_execute changes data; use db_query to read');
          try {
            const result = statement.run(...(params ?? []));
            return json({ changes: result.changes, lastInsertRowid: Number(result.lastInsertRowid) });
          } catch (error) {
            throw new AgtError('bad_request', `SQL error: ${(error as Error).message}`);
          }
        },
      },
      lookup,
    ),
  ];
}
