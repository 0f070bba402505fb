/**
 * Shell commands an agent runs (system-scope `command` targets, tools such as `compute_exec`): what the
 * kernel's host runner (`ctx.agents.runHostCommand`) and a command executor (`contracts/points.ts`) take
 * and answer. Types only, so both of those can import them.
 */
/** One shell command an agent runs: a system-scope `command` target, or a tool's call. */
export interface CommandRun {
  agentId: string;
  /** Run by `/bin/sh -c`. */
  command: string;
  /** Written to the command's stdin, then closed (system targets get their event JSON here). */
  stdin?: string;
  /** Past it the command and everything it started are killed: `timedOut`, exit code 124. */
  timeoutMs: number;
  /** Aborted when the agent unloads or the turn is interrupted: the command is killed at once. */
  signal?: AbortSignal;
}

/** How a command ended. */
export interface CommandOutcome {
  /** Where it ran: `host`, or the container's name. */
  target: string;
  /** 124 on a time-out; null when it was killed otherwise (interrupt, unload). */
  exitCode: number | null;
  timedOut: boolean;
  /** Each stream cut at the runner's cap (the compute extension's: 512 KB). */
  stdout: string;
  stderr: string;
}

