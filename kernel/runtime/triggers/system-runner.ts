/**
 * Runs system-scope targets (of triggers, timers and dispatches) in the sandbox and records the
 * outcome in the agent's log (origin `trigger`). The target receives one JSON value:
 * `{trigger, event, events, count}` (`event` is the newest event, `events` all delivered ones).
 * Time limits: `limits.lambda_timeout_ms` (default 5 s) and `limits.command_timeout_ms` (default 10 s).
 * A dispatch (which answered a `turnId`) also ends that turn id: `turn.completed` with the result as
 * `text` and `stop_reason: "system"`, or `agent.error`.
 */
import { isAgtError, type EventPayloads, type EventType, type CommandOutcome, type CommandRun } from '@agt/contracts';
import {
  agentUnloading,
  commandFailed,
  commandTimedOut,
  lambdaFileMissing,
  systemTargetEmpty,
  tooManySystemRuns,
} from '../errors.js';
import {
  allowsUnsandboxedCommands,
  COMMAND_DEFAULT_TIMEOUT_MS,
  type HostCommandRunner,
} from '../sandbox/command-runner.js';
import { LAMBDA_DEFAULT_TIMEOUT_MS, LambdaHost, parseLambdaRef } from '../sandbox/lambda-runner.js';
import { limitOf, type RuntimeAgent } from '../types.js';
import type { TriggerEvent } from '../dispatch.js';

export interface SystemTarget {
  lambda?: string;
  command?: string;
  warm?: boolean;
}

export interface SystemRunHost {
  agent: RuntimeAgent;
  emit<T extends EventType>(type: T, payload: EventPayloads[T], options: { turnId?: string }): void;
  /**
   * The command executor an extension offers (`agt.command-executor`: compute's containers); resolves
   * undefined, or is absent, when the command belongs to the kernel's host runner.
   */
  executeCommand?(run: CommandRun): Promise<CommandOutcome | undefined>;
  /** The kernel's host runner (the agent's bubblewrap sandbox), for commands no executor took. */
  hostCommands: HostCommandRunner;
  /** Writes the agent log as a system run (never re-triggers anything). */
  log(
    level: 'info' | 'warn' | 'error',
    message: string,
    fields: { event: string; target: string; data?: unknown },
  ): void;
}

const MAX_TEXT = 4_000;
/** System runs of one agent at a time; more are refused (a trigger flood must not fork-bomb the host). */
export const MAX_CONCURRENT_SYSTEM_RUNS = 8;

export class SystemRunner {
  private readonly lambdas = new LambdaHost();
  private readonly running = new Set<AbortController>();
  private closed = false;

  constructor(private readonly host: SystemRunHost) {}

  /** Starts a run in the background; never throws. */
  start(target: SystemTarget, trigger: string, events: TriggerEvent[], count: number, turnId?: string): void {
    void this.run(target, trigger, events, count, turnId);
  }

  private async run(
    target: SystemTarget,
    trigger: string,
    events: TriggerEvent[],
    count: number,
    turnId?: string,
  ): Promise<void> {
    const label = target.lambda ? `lambda:${target.lambda}` : `command:${target.command ?? '?'}`;
    const controller = new AbortController();
    this.running.add(controller);
    if (turnId) this.host.emit('turn.started', { turn_id: turnId, trigger }, { turnId });
    const input = { trigger, event: events[events.length - 1] ?? null, events, count };
    try {
      if (this.closed) throw agentUnloading();
      if (this.running.size > MAX_CONCURRENT_SYSTEM_RUNS) throw tooManySystemRuns(MAX_CONCURRENT_SYSTEM_RUNS);
      let result: unknown;
      let logs: string[] = [];
      if (target.lambda) {
        const ref = parseLambdaRef(target.lambda);
        const file = this.host.agent.file.files.read(ref.path);
        if (!file) throw lambdaFileMissing(ref.path);
        const timeoutMs = limitOf(this.host.agent.config, 'lambda_timeout_ms');
        const outcome = await this.lambdas.run({
          ref,
          source: file.content.toString('utf8'),
          event: input,
          warm: target.warm,
          timeoutMs,
        });
        result = outcome.result;
        logs = outcome.logs;
      } else if (target.command) {
        const timeoutMs = limitOf(this.host.agent.config, 'command_timeout_ms', COMMAND_DEFAULT_TIMEOUT_MS);
        const run: CommandRun = {
          agentId: this.host.agent.id,
          command: target.command,
          stdin: JSON.stringify(input),
          timeoutMs,
          signal: controller.signal,
        };
        const outcome =
          (await this.host.executeCommand?.(run)) ??
          (await this.host.hostCommands.runHost(run, allowsUnsandboxedCommands(this.host.agent.config), trigger));
        if (outcome.timedOut) throw commandTimedOut(outcome.stderr.slice(-MAX_TEXT));
        if (outcome.exitCode !== 0) {
          throw commandFailed(outcome.exitCode ?? 'killed', outcome.stderr.slice(-500));
        }
        result = { exitCode: outcome.exitCode, stdout: outcome.stdout, target: outcome.target };
      } else {
        throw systemTargetEmpty();
      }
      const text = JSON.stringify(result ?? null);
      this.host.log('info', `${label} ran for ${trigger}`, {
        event: trigger,
        target: label,
        data: { result: text.slice(0, MAX_TEXT), logs },
      });
      if (turnId) {
        this.host.emit(
          'turn.completed',
          { turn_id: turnId, absorbed_turn_ids: [], text, llm_calls: 0, tool_calls: 0, stop_reason: 'system' },
          { turnId },
        );
      }
    } catch (error) {
      const code = isAgtError(error) ? error.code : 'internal_error';
      const message = error instanceof Error ? error.message : String(error);
      const logs = isAgtError(error) ? error.details?.logs : undefined;
      this.host.log('error', `${label} failed for ${trigger}: ${message}`, {
        event: trigger,
        target: label,
        data: { code, logs },
      });
      // A command target's exit code (124: its time limit) lets `agt exec` end with it, as `docker exec` does.
      const exitCode = isAgtError(error) ? error.details?.exit_code : undefined;
      const exit = typeof exitCode === 'number' ? { exit_code: exitCode } : {};
      if (turnId)
        this.host.emit('agent.error', { code, message, turn_id: turnId, absorbed_turn_ids: [], ...exit }, { turnId });
    } finally {
      this.running.delete(controller);
    }
  }

  /**
   * Runs one lambda for an extension (an agent website's API route) in this agent's sandbox: the same
   * worker, queue and limits as triggers; the time limit is `timeoutMs` capped at the agent's
   * `limits.lambda_timeout_ms`. Throws the sandbox's coded errors.
   */
  async runLambda(lambda: string, input: unknown, timeoutMs?: number): Promise<{ result: unknown; logs: string[] }> {
    if (this.closed) throw agentUnloading();
    const ref = parseLambdaRef(lambda);
    const file = this.host.agent.file.files.read(ref.path);
    if (!file) throw lambdaFileMissing(ref.path);
    const cap = limitOf(this.host.agent.config, 'lambda_timeout_ms', LAMBDA_DEFAULT_TIMEOUT_MS);
    const limit = typeof timeoutMs === 'number' && timeoutMs > 0 ? Math.min(timeoutMs, cap) : cap;
    return this.lambdas.run({ ref, source: file.content.toString('utf8'), event: input, timeoutMs: limit });
  }

  /** Unload: kills running commands and the lambda worker. */
  async close(): Promise<void> {
    this.closed = true;
    for (const controller of this.running) controller.abort();
    await this.lambdas.close();
  }
}
