/**
 * Exit codes and the one error type of the `agt` command. Scripts branch on the code: 1 the operation
 * failed (an API error, or the agent's turn ended in `agent.error`), 2 bad usage, 3 no daemon answers,
 * 4 the daemon refused the token.
 */
export const EXIT = { ok: 0, failed: 1, usage: 2, unreachable: 3, unauthorized: 4 } as const;

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failed,
    /** The daemon's `{error, code}` when it answered one. */
    readonly body?: { error?: string; code?: string; [key: string]: unknown },
  ) {
    super(message);
  }
}
