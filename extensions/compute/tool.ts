/**
 * `compute_exec`: a shell command in the agent's tier. Restricted by default (the owner approves
 * each call unless the agent's declaration lifts it) and notable in the review summary. The model gets
 * `{target, exit_code, timed_out, stdout, stderr}` as JSON; an interrupt or unload kills the command.
 */
import { isAgtError } from '@agt/contracts';
import type { ToolDefinition } from '@agt/contracts';
import type { Compute, Tier } from './compute.js';
import { TIERS } from './compute.js';
import type { ComputeOptions } from './options.js';

export const TOOL_NAME = 'compute_exec';

export function computeExecTool(compute: Compute, options: ComputeOptions): ToolDefinition {
  return {
    name: TOOL_NAME,
    source: 'ext:compute',
    restricted: true,
    notable: true,
    defaultEnabled: false,
    description:
      'Run a shell command (/bin/sh -c, busybox tools) in your compute container. Your work dir persists between calls; ' +
      '/tmp is in memory. Returns {target, exit_code, timed_out, stdout, stderr}; each stream is cut at 512 KB; exit code 124 means the time limit ended it.',
    inputSchema: {
      type: 'object',
      properties: {
        command: { type: 'string', minLength: 1, maxLength: 100_000, description: 'The shell command' },
        timeout_ms: {
          type: 'integer',
          minimum: 1,
          maximum: options.maxTimeoutMs,
          description: `Time limit (default ${options.defaultTimeoutMs})`,
        },
        target: {
          type: 'string',
          enum: [...TIERS],
          description: 'Where to run: your own tier (default), or isolated when yours is shared',
        },
      },
      required: ['command'],
      additionalProperties: false,
    },
    // The exec's own limit ends it; the kernel's tool limit only has to be later than the longest one.
    timeoutMs: options.maxTimeoutMs + 30_000,
    async run(args, context) {
      const command = args.command;
      if (typeof command !== 'string' || command.trim() === '')
        return { content: 'command must be a non-empty string', isError: true };
      const asked = args.timeout_ms;
      const timeoutMs =
        Number.isInteger(asked) && (asked as number) > 0
          ? Math.min(asked as number, options.maxTimeoutMs)
          : options.defaultTimeoutMs;
      const target = args.target;
      if (target !== undefined && !TIERS.includes(target as Tier))
        return { content: `target must be one of ${TIERS.join(', ')}`, isError: true };
      try {
        const outcome = await compute.run({
          agentId: context.agentId,
          command,
          timeoutMs,
          signal: context.signal,
          origin: 'tool',
          target: target as Tier | undefined,
        });
        const result = {
          target: outcome.target,
          exit_code: outcome.exitCode,
          timed_out: outcome.timedOut,
          stdout: outcome.stdout,
          stderr: outcome.stderr,
        };
        return { content: JSON.stringify(result), isError: outcome.exitCode !== 0 };
      } catch (error) {
        const code = isAgtError(error) ? error.code : 'internal_error';
        return {
          content: `compute_exec failed (${code}): ${error instanceof Error ? error.message : String(error)}`,
          isError: true,
        };
      }
    },
  };
}
