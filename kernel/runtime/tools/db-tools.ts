/**
 * `db_query` / `db_execute`: SQL on the agent's own `local_*` tables only.
 *
 * Agent SQL never runs on the daemon's event loop or on the daemon's connection: it goes to the agent's
 * SQL child process (`../sql-sandbox/sql-runner.ts`), which has a connection of its own to the agent
 * file. There, in one transaction, the statement must pass three checks (`sql-policy.mjs`), none of them
 * a pattern on the text:
 * 1. its kind, by its first keyword: `db_query` takes SELECT, WITH, VALUES; `db_execute` takes INSERT,
 *    REPLACE, UPDATE, DELETE, WITH, CREATE, DROP, ALTER (never PRAGMA, which SQLite runs while
 *    compiling, ATTACH, DETACH, VACUUM, ANALYZE or transaction control);
 * 2. SQLite's compiled program (`EXPLAIN`, trigger and foreign-key sub-programs included): only allowed
 *    opcodes (no virtual tables or table-valued functions, VACUUM, checkpoints, journal modes, ...), only
 *    SQLite's built-in scalar/aggregate/window/date/JSON/math functions (no readfile, writefile,
 *    load_extension, what ATTACH compiles to, ...), and every b-tree it opens in the main database and
 *    part of a `local_*` table or index; schema opcodes only in CREATE/DROP/ALTER; SQLite's own tables
 *    (sqlite_master/sqlite_schema, sqlite_sequence) only in SQLite's own DDL and AUTOINCREMENT code;
 * 3. for CREATE/DROP/ALTER, the effect: after it ran, `sqlite_master` differs only by `local_*` tables
 *    and indexes (no triggers, views or virtual tables, no renames out of or into `local_*`), the temp
 *    schema is empty; else the transaction is rolled back (`forbidden`).
 * A statement over `limits.sql_timeout_ms` (default 2 s) has its child killed (`timeout`); waiting for
 * one of the daemon's SQL processes (`sqlMaxProcesses`) counts in that limit. `db_query`
 * returns at most 500 rows and 256 KB of JSON (`truncated: true` beyond). Parameters are bound, never
 * interpolated.
 */
import { Type } from 'typebox';
import type { ToolDefinition } from '@agt/contracts';
import { SQL_DEFAULT_TIMEOUT_MS, SQL_MAX_ROWS } from '../sql-sandbox/sql-runner.js';
import { limitOf } from '../types.js';
import { builtin, json, type RuntimeLookup } from './define.js';

const Params = Type.Optional(
  Type.Array(Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]), { maxItems: 100 }),
);
const Input = Type.Object({ sql: Type.String({ minLength: 1, maxLength: 20_000 }), params: Params });

export function dbTools(lookup: RuntimeLookup): ToolDefinition[] {
  return [
    builtin(
      {
        name: 'db_query',
        description: `Run one read-only SQL statement (SELECT, WITH or VALUES) on your local_* tables; returns at most ${SQL_MAX_ROWS} rows as JSON (truncated: true when there were more, or more than 256 KB). Bind values with ? and params.`,
        input: Input,
        async run(runtime, { sql, params }, context) {
          const timeoutMs = limitOf(runtime.agent.config, 'sql_timeout_ms', SQL_DEFAULT_TIMEOUT_MS);
          const result = await runtime.sql.query({ sql, params, timeoutMs, signal: context.signal });
          return json({ rows: result.rows, truncated: result.truncated });
        },
      },
      lookup,
    ),
    builtin(
      {
        name: 'db_execute',
        description:
          'Run one SQL statement that changes your local_* tables: CREATE TABLE local_x, CREATE INDEX, ALTER TABLE, DROP, INSERT, UPDATE, DELETE. Bind values with ? and params.',
        input: Input,
        async run(runtime, { sql, params }, context) {
          const timeoutMs = limitOf(runtime.agent.config, 'sql_timeout_ms', SQL_DEFAULT_TIMEOUT_MS);
          const result = await runtime.sql.execute({ sql, params, timeoutMs, signal: context.signal });
          return json({ changes: result.changes, lastInsertRowid: result.lastInsertRowid });
        },
      },
      lookup,
    ),
  ];
}
