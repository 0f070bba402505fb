/**
 * The defaults of an agent config's `limits` (what applies when a file says nothing): owned here, beside
 * the owner's ceiling that caps them (ceiling.ts), and used by the runtime's executor and sandboxes, which
 * import them from here (agents/ never imports runtime/: a dependency-cruiser rule).
 */

/** Defaults of the `limits` object of the agent config. */
export const DEFAULT_LIMITS = {
  max_llm_calls_per_turn: 25,
  max_tool_calls_per_turn: 100,
  tool_timeout_ms: 60_000,
} as const;

/** `limits.command_timeout_ms` when the file gives none: one system-scope command. */
export const COMMAND_DEFAULT_TIMEOUT_MS = 10_000;
/** `limits.lambda_timeout_ms` when the file gives none: one lambda run. */
export const LAMBDA_DEFAULT_TIMEOUT_MS = 5_000;
/** `limits.sql_timeout_ms` when the file gives none: one `db_query` / `db_execute` statement. */
export const SQL_DEFAULT_TIMEOUT_MS = 2_000;
