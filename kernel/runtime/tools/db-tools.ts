/**
 * `db_query` / `db_execute`: SQL on the agent's own `local_*` tables only.
 *
 * Agent SQL never runs on the daemon's event loop or connection: it goes to the agent's SQL child
 * (`../sql-sandbox/sql-runner.ts`), where the statement's kind, SQLite's compiled program and, for DDL, its
 * effect on the schema are checked against allow-lists (`sql-policy.mjs`), never a pattern on the text. A
 * statement over `limits.sql_timeout_ms` has its child killed (`timeout`). Parameters are bound, never
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
