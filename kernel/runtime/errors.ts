/**
 * The coded errors of the agent runtime (loops, turns, human-in-the-loop, timers, triggers, sandboxes),
 * one factory per meaning (the model is fastify's `lib/errors.js`). Statuses come from `ERROR_STATUS` in
 * `contracts/errors.ts`; codes, messages and details are API. The tools' errors are in `tools/errors.ts`.
 */
import { AgtError } from '@agt/contracts';

// ---- agents and loops ----------------------------------------------------------------------------

/** 404 `not_found`: no runtime for this agent (not loaded, or unloading). */
export const agentNotRunning = (ref: string) => new AgtError('not_found', `agent ${ref} is not running`);

/** 409 `conflict`: the agent is loaded but its runtime is not there yet, or no more (try again). */
export const agentLoadingOrUnloading = (agentName: string) =>
  new AgtError('conflict', `agent ${agentName} is loading or unloading; try again`);

/** 404 `not_found`: the agent declares no loop `loop`. */
export const noSuchLoop = (agentName: string, loop: string) =>
  new AgtError('not_found', `agent ${agentName} has no loop ${loop}`);

/** 409 `conflict`: the loop is declared but disabled. */
export const loopDisabled = (loop: string) => new AgtError('conflict', `loop ${loop} is disabled`);

/** 409 `conflict`: a loop's history cannot be cleared while a turn runs in it. */
export const turnRunningInLoop = (loop: string) =>
  new AgtError('conflict', `a turn is running in loop ${loop}; interrupt it first`);

/** 409 `conflict`: stop was asked of a loop without a live executor. */
export const noRunningExecutor = (loop: string) => new AgtError('conflict', `loop ${loop} has no running executor`);

/**
 * 422 `idempotency_key_reused`: an `Idempotency-Key` already answered for another request (another
 * body, route or loop) within its 24 h (the IETF Idempotency-Key draft's answer).
 */
export const idempotencyKeyReused = () =>
  new AgtError(
    'idempotency_key_reused',
    'this Idempotency-Key was used with a different request; use a new key for a new request',
  );

/** 400 `bad_request`: a dispatched event or trigger body is malformed (`problem` says where). */
export const invalidDispatch = (problem: string) => new AgtError('bad_request', problem);

// ---- loop executor and turns ---------------------------------------------------------------------

/** 409 `conflict`: the loop was aborted; only a reload runs it again. */
export const loopAborted = (loop: string) =>
  new AgtError('conflict', `loop ${loop} is stopped (aborted); reload the agent to run it again`);

/** 409 `conflict`: the loop's queue is full (`queued` turns wait, at most `max`). */
export const turnQueueFull = (loop: string, max: number, queued: number) =>
  new AgtError('conflict', `loop ${loop} already has ${max} queued turns; try again when it has caught up`, {
    details: { queued },
  });

/** 409 `conflict`: the loop is stopped. */
export const loopStopped = (loop: string) => new AgtError('conflict', `loop ${loop} is stopped`);

/** 409 `conflict`: the loop is in error with no turn to interrupt. */
export const loopInError = (loop: string) =>
  new AgtError('conflict', `loop ${loop} is in error; send a chat to recover`);

/** 409 `conflict`: `what` (compaction...) needs the loop idle and a turn runs. */
export const loopMidTurn = (loop: string, what: string) =>
  new AgtError('conflict', `loop ${loop} is mid-turn; ${what} needs it idle`);

/** 409 `conflict`: `what` already holds the loop. */
export const loopBusy = (loop: string, what: string) =>
  new AgtError('conflict', `loop ${loop} is busy: ${what} is already running`);

/** 504 `timeout` or 409 `conflict`: the abort reason of a turn stopped for `cause`. */
export const turnStopped = (cause: string) =>
  new AgtError(cause === 'timeout' ? 'timeout' : 'conflict', `turn stopped: ${cause}`, { details: { cause } });

/** 503 `unavailable`: a turn needs a model and no provider extension is loaded. */
export const noProviderExtension = () =>
  new AgtError(
    'unavailable',
    'no provider extension is loaded: this turn needs a model (enable the providers extension)',
  );

/** 503 `unavailable`: no loaded provider serves the loop's provider. */
export const noProviderServes = (provider: string) =>
  new AgtError('unavailable', `no loaded provider serves "${provider}"`);

/** 504 `timeout`: a tool ran past its time limit. */
export const toolTimedOut = (tool: string, timeoutMs: number) =>
  new AgtError('timeout', `tool ${tool} exceeded its time limit of ${timeoutMs} ms`);

/** 409 `conflict` (`details.aborted`): the turn was stopped while a tool ran. */
export const stoppedWhileToolRan = () =>
  new AgtError('conflict', 'the turn was stopped while the tool ran', { details: { aborted: true } });

/** 500 `internal_error`: waiting for a tool call's approval failed. */
export const approvalWaitFailed = (cause: unknown) => new AgtError('internal_error', 'approval wait failed', { cause });

// ---- human in the loop ---------------------------------------------------------------------------

/** 409 `conflict`: a prompt or task was cancelled because the turn waiting for it ended. */
export const turnEnded = () => new AgtError('conflict', 'cancelled: the turn waiting for it ended');

/** 404 `not_found`: no task with this id. */
export const taskNotFound = (taskId: string) => new AgtError('not_found', `no task ${taskId}`);

/** 409 `conflict`: the task was already resolved (`status`). */
export const taskNotPending = (taskId: string, status: string) =>
  new AgtError('conflict', `task ${taskId} is ${status}, not pending approval`);

/** 404 `not_found`: no pending ask prompt with this id. */
export const askNotPending = (requestId: string) => new AgtError('not_found', `no pending ask ${requestId}`);

/** 404 `not_found`: no pending suspend prompt with this id. */
export const suspendNotPending = (requestId: string) =>
  new AgtError('not_found', `no pending suspend prompt ${requestId}`);

/** 409 `conflict`: resume was asked and nothing is suspended. */
export const nothingSuspended = () =>
  new AgtError('conflict', 'nothing is suspended: no pending suspend prompt and the agent is not suspended');

// ---- loop declarations and compaction ------------------------------------------------------------

/** 400 `bad_request`: an inner loop declaration is refused (`problem` says why). */
export const invalidLoopDeclaration = (problem: string) =>
  new AgtError('bad_request', `Invalid loop declaration: ${problem}`);

/** 400 `bad_request`: a loop declaration grants tools that do not exist. */
export const unknownLoopTools = (tools: string[]) =>
  new AgtError('bad_request', `Invalid loop declaration: unknown tool(s) ${tools.join(', ')}`, { details: { tools } });

/** 400 `bad_request`: a loop declaration grants tools an inner loop never gets. */
export const neverGrantableTools = (tools: string[]) =>
  new AgtError('bad_request', `Invalid loop declaration: an inner loop can never be granted ${tools.join(', ')}`, {
    details: { tools },
  });

/** 409 `conflict`: `main` is declared by the agent config, not by the loops API. */
export const mainIsImplicit = () => new AgtError('conflict', 'main is implicit: change the agent config instead');

/** 409 `conflict`: `main` cannot be `what` (patched, deleted) through the loops API. */
export const mainNotEditable = (what: string) =>
  new AgtError('conflict', `main cannot be ${what} here: change the agent config instead`);

/** 409 `conflict`: the owner locked the agent's loops (`locked_fields`). */
export const loopsLocked = () => new AgtError('conflict', 'loops are locked by the owner (locked_fields)');

/** 409 `conflict`: a loop with this name is declared already. */
export const loopExists = (name: string) => new AgtError('conflict', `a loop named ${name} already exists`);

/** 409 `conflict`: the agent has `max` inner loops already. */
export const tooManyLoops = (max: number) => new AgtError('conflict', `an agent has at most ${max} inner loops`);

/** 400 `bad_request`: a loop patch without any of `keys`. */
export const emptyLoopPatch = (keys: readonly string[]) =>
  new AgtError('bad_request', `an empty loop patch changes nothing: send at least one of ${keys.join(', ')}`);

/** 409 `conflict`: the loop holds no more than its last `keep` turns. */
export const nothingToCompact = (loop: string, keep: number) =>
  new AgtError('conflict', `nothing to compact in loop ${loop}: it holds no more than its last ${keep} turns`);

/** 502 `upstream_error`: the summarizing model call failed (`upstreamStatus` when the provider gave one). */
export const summarizationFailed = (loop: string, error: unknown, upstreamStatus: unknown) =>
  new AgtError(
    'upstream_error',
    `summarization failed, history unchanged: ${(error as Error)?.message ?? String(error)}`,
    {
      details: { loop, ...(typeof upstreamStatus === 'number' ? { upstreamStatus } : {}) },
    },
  );

/** 502 `upstream_error`: the model returned an empty summary. */
export const emptySummary = (loop: string) =>
  new AgtError('upstream_error', 'summarization failed, history unchanged: the model returned an empty summary', {
    details: { loop },
  });

/** 409 `conflict`: the agent was unloaded while its loop was summarized. */
export const unloadedDuringCompaction = (agentName: string) =>
  new AgtError('conflict', `agent ${agentName} was unloaded during compaction`);

/** 409 `conflict`: the loop's history changed while it was summarized. */
export const historyChangedDuringCompaction = (loop: string) =>
  new AgtError('conflict', `the history of loop ${loop} changed during compaction; nothing was replaced`);

// ---- timers --------------------------------------------------------------------------------------

/** 400 `bad_request`: a timer's schedule is malformed (`problem` says how). */
export const invalidSchedule = (problem: string) => new AgtError('bad_request', problem);

/** 409 `conflict`: the agent holds `max` live timers already. */
export const tooManyTimers = (max: number) => new AgtError('conflict', `an agent holds at most ${max} live timers`);

/** 403 `forbidden`: the agent tried to create a locked timer. */
export const timerLockOwnerOnly = () => new AgtError('forbidden', 'only the owner can lock a timer');

/** 403 `forbidden`: the agent tried to change or delete a timer the owner locked. */
export const timerLocked = (id: number) => new AgtError('forbidden', `timer ${id} is locked by the owner`);

/** 400 `bad_request`: a system-scope timer without a lambda. */
export const systemTimerNeedsLambda = () => new AgtError('bad_request', 'a system-scope timer needs a lambda');

// ---- system triggers and sandboxes ---------------------------------------------------------------

/** 503 `unavailable`: the agent is unloading; no new sandboxed run starts and running ones end. */
export const agentUnloading = () => new AgtError('unavailable', 'the agent is unloading');

/** 409 `conflict`: `max` system runs are going on; this one was skipped. */
export const tooManySystemRuns = (max: number) =>
  new AgtError('conflict', `more than ${max} system runs at once; this one was skipped`);

/** 404 `not_found`: the lambda's file is not stored in the agent. */
export const lambdaFileMissing = (path: string) =>
  new AgtError('not_found', `lambda file ${path} is not stored in the agent`);

/** 400 `bad_request`: a system target with neither a lambda nor a command. */
export const systemTargetEmpty = () => new AgtError('bad_request', 'a system target needs a lambda or a command');

/** 504 `timeout`: a command target ran past its time limit (`stderr`: its tail). */
export const commandTimedOut = (stderr: string) =>
  new AgtError('timeout', `command exceeded its time limit`, { details: { stderr, exit_code: 124 } });

/** 500 `command_failed`: a command target exited non-zero (`exit`: code or signal). */
export const commandFailed = (exit: number | string | null, stderr: string) =>
  new AgtError('command_failed', `command exited with ${exit}: ${stderr}`, {
    status: 500,
    ...(typeof exit === 'number' ? { details: { exit_code: exit } } : {}),
  });

/** 503 `unavailable`: agents' commands need a sandbox this host cannot make (`reason`: what the probe saw). */
export const commandsNeedSandbox = (reason: string) =>
  new AgtError(
    'unavailable',
    `agents' commands run in a bubblewrap sandbox, which this host cannot make: ${reason}. To run them without one, as the daemon's own user with its file and network access, the owner allows it (settings agentCeiling.allowUnsandboxedCommands) and the agent's config sets security.allow_unsandboxed_commands: true`,
  );

/**
 * 503 `unavailable`: a long-lived sandboxed process (`ctx.agents.spawnSandboxed`) where no sandbox can be made;
 * unlike a command, it never runs without one.
 */
export const processNeedsSandbox = (reason: string) =>
  new AgtError(
    'unavailable',
    `this process runs only in an agent's bubblewrap sandbox, which this host cannot make: ${reason}`,
  );

/** 400 `bad_request`: a read-only mount of a sandboxed process that is refused (`why` names no host path). */
export const badSandboxMount = (path: string, why: string) =>
  new AgtError('bad_request', `sandbox mount ${JSON.stringify(path.slice(0, 200))} refused: ${why}`);

/**
 * 507 `work_folder_full`: the agent's work folder holds more than the owner's bound (settings
 * `commandLimits.workBytes`), or more entries than a folder may; no host path in the message (the agent reads it).
 */
export const workFolderFull = (workBytes: number, measured: { bytes: number } | { entries: number }) =>
  new AgtError(
    'work_folder_full',
    `this agent's work folder (/work) ${'bytes' in measured ? `uses more than its bound of ${workBytes} bytes (at least ${measured.bytes})` : `holds more than ${measured.entries} files and folders`}: no command runs until the owner frees space in it or raises settings commandLimits.workBytes`,
    { details: { workBytes } },
  );

/** 400 `bad_request`: a command for an agent id that cannot name a work folder (never one the config accepts). */
export const badCommandAgentId = (agentId: string) =>
  new AgtError('bad_request', `not an agent id: ${JSON.stringify(agentId.slice(0, 140))}`);

/**
 * 409 `agent_id_conflict`: the agent's file does not hold the key its id is bound to; its work folder and uid are not
 * handed out.
 */
export const workFolderNotBound = (agentId: string) =>
  new AgtError(
    'agent_id_conflict',
    `agent ${agentId} does not hold the key its id is bound to on this daemon: its work folder is not handed out`,
    { details: { agentId } },
  );

/** 400 `bad_request`: a lambda reference that is not `path/file.ts:functionName`. */
export const invalidLambdaRef = (ref: string) =>
  new AgtError('bad_request', `lambda must look like path/file.ts:functionName, got ${JSON.stringify(ref)}`);

/** 400 `bad_request`: the lambda's file does not compile (`firstLine` of the compiler's message). */
export const lambdaDoesNotCompile = (path: string, firstLine: string | undefined) =>
  new AgtError('bad_request', `lambda ${path} does not compile: ${firstLine}`);

/** The error a lambda threw in its sandbox: its own `code` (500 `lambda_failed` when it gave none), with its logs. */
export const lambdaFailed = (code: string, message: string | undefined, logs: string[]) =>
  new AgtError(code, message ?? 'lambda failed', {
    status: code === 'lambda_failed' ? 500 : undefined,
    details: { logs },
  });

/** 504 `timeout`: the lambda overran its limit and its sandbox was terminated. */
export const lambdaTimedOut = () =>
  new AgtError('timeout', 'lambda exceeded its time limit and its sandbox was terminated');

/** 500 `internal_error`: the lambda sandbox crashed (`why` says how). */
export const lambdaSandboxCrashed = (why: string) => new AgtError('internal_error', why);

/** 500 `internal_error`: the lambda sandbox was replaced `attempts` times while the call waited. */
export const lambdaSandboxReplaced = (attempts: number) =>
  new AgtError('internal_error', `lambda sandbox was replaced ${attempts} times while this call waited`);

// ---- agent SQL sandbox ---------------------------------------------------------------------------

/** The SQL child's refusal or SQLite's error: its own `code` (400 `bad_request` when it gave none). */
export const sqlFailed = (code: string | undefined, message: string | undefined) =>
  new AgtError(code ?? 'bad_request', message ?? 'SQL failed');

/** 504 `timeout`: the statement ran past `limits.sql_timeout_ms`; its child was killed, nothing was kept. */
export const sqlTimedOut = (timeoutMs: number) =>
  new AgtError(
    'timeout',
    `the SQL statement ran past its time limit of ${timeoutMs} ms (limits.sql_timeout_ms) and was stopped; nothing it did was kept`,
  );

/** 409 `conflict` (`details.aborted`): the turn was stopped while the statement ran. */
export const stoppedWhileSqlRan = () =>
  new AgtError('conflict', 'the turn was stopped while the SQL statement ran', { details: { aborted: true } });

/** 500 `internal_error`: the SQL child could not be forked. */
export const sqlSandboxStartFailed = (error: unknown) =>
  new AgtError('internal_error', `the SQL sandbox could not start: ${(error as Error).message}`);

/** 500 `internal_error`: the SQL child did not report ready in time. */
export const sqlSandboxSlowStart = () => new AgtError('internal_error', 'the SQL sandbox did not start in time');

/** 500 `internal_error`: the SQL child died on its own (`why`: code or signal; `detail`: its last stderr lines). */
export const sqlSandboxExited = (why: string, detail: string) =>
  new AgtError('internal_error', `the SQL sandbox exited (${why})${detail ? `: ${detail}` : ''}`);

/** 409 `conflict`: the owner asked for a memory consolidation while one runs. */
export const consolidationRunning = () =>
  new AgtError('conflict', 'a memory consolidation is already running for this agent');

/** 502 `upstream_error`: the consolidation's model call failed (or the agent went away); no memory changed. */
export const consolidationFailed = (error: unknown) =>
  new AgtError(
    'upstream_error',
    `memory consolidation failed, memories unchanged: ${(error as Error)?.message ?? String(error)}`,
  );
