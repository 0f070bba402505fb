/**
 * Running an agent's own code (`path/file.ts:functionName` from its stored files) in the kernel's lambda
 * sandbox on an extension's behalf, for example the API routes of an agent website (docs/mesh.md).
 * The sandbox is the one system-scope triggers use: QuickJS in a worker per agent, no modules, timers,
 * fs, network, env or daemon object; the input goes in as JSON and the result comes out as JSON.
 */

/**
 * What to run and with what.
 *
 * @beta
 */
export interface AgentLambdaCall {
  /** `path/file.ts:functionName`, a file among the agent's stored files. */
  lambda: string;
  /** Handed to the function as its one argument (JSON-serializable). */
  input: unknown;
  /**
   * Time limit of the run in milliseconds; the kernel caps it at the agent's `limits.lambda_timeout_ms`
   * (default 5 s). Past it the run is stopped and the call rejects with `timeout` (504).
   */
  timeoutMs?: number;
}

/** @beta */
export interface AgentLambdaOutcome {
  /** The function's return value (awaited), as JSON. */
  result: unknown;
  /** What it wrote with `console.*`. */
  logs: string[];
}

/**
 * `ctx.agents.runLambda`: rejects with `not_found` (agent not loaded, or no such file), `bad_request` (malformed
 * reference, code that does not compile), `timeout` (time limit), `lambda_failed` (500, the function threw;
 * `details.logs` carries its console output). Calls of one agent run one at a time, so a slow agent delays only itself.
 *
 * @beta
 */
export type RunAgentLambda = (agentId: string, call: AgentLambdaCall) => Promise<AgentLambdaOutcome>;
