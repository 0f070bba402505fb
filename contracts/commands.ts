/**
 * Shell commands an agent runs (system-scope `command` targets, tools such as `compute_exec`): what the
 * kernel's host runner (`ctx.agents.runHostCommand`) and a command executor (`contracts/points.ts`) take
 * and answer, and the output cap both apply. No imports, so both of those can import it.
 */
/**
 * One shell command an agent runs: a system-scope `command` target, or a tool's call.
 *
 * @beta
 */
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

/**
 * How a command ended.
 *
 * @beta
 */
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

/**
 * Each of stdout and stderr is cut here, by the kernel's host runner and by compute's containers, so one noisy command
 * cannot fill memory or the context.
 *
 * @beta
 */
export const COMMAND_OUTPUT_CAP_BYTES = 512 * 1024;

/**
 * Collects one output stream of a command.
 *
 * @beta
 */
export interface CappedOutput {
  /**
   * Keeps the chunk's bytes up to the cap; the rest is dropped (the caller still reads it, so the command never
   * blocks).
   */
  push(chunk: Buffer): void;
  /** Drops everything pushed from now on (output of a command being killed). */
  freeze(): void;
  /** What was kept, as UTF-8, with `note` appended when something was dropped at the cap. */
  value(): string;
}

/**
 * A collector of a stream's first {@link COMMAND_OUTPUT_CAP_BYTES} bytes.
 *
 * @beta
 */
export function cappedOutput(note: string): CappedOutput {
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  let frozen = false;
  return {
    push(chunk) {
      if (frozen) return;
      const room = COMMAND_OUTPUT_CAP_BYTES - size;
      if (chunk.length > room) truncated = true;
      if (room <= 0) return;
      const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
      chunks.push(kept);
      size += kept.length;
    },
    freeze: () => {
      frozen = true;
    },
    value: () => Buffer.concat(chunks).toString('utf8') + (truncated ? note : ''),
  };
}
