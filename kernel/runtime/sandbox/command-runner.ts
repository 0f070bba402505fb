/**
 * System-scope `command` targets: a shell command run as a child process.
 *
 * The boundary, when the daemon runs as root and util-linux `unshare` and `setpriv` work (probed once):
 * the command runs through `unshare --net` (a new, empty network namespace: no interface but a loopback
 * that is down, so no connection to anything, the daemon's own port included) and `setpriv` as uid/gid
 * 65534 (`nobody`) with no supplementary groups, no capabilities (inheritable and bounding sets cleared)
 * and `no_new_privs` (setuid binaries cannot raise it back). It can therefore read only what any user
 * may read: not the daemon's 0700 data directory (`daemon-token`, keys, settings), not agent files in
 * private folders, not `/proc/<daemon>/environ`. Without that isolation (the daemon is not root, or the
 * host forbids new namespaces) command targets are refused with `unavailable` unless the agent's config
 * sets `security.allow_unsandboxed_commands: true`; then the command runs as the daemon's own OS user
 * and can read what that user can read, network included.
 *
 * Either way it does not get: the daemon's memory, its environment (only a minimal one: PATH, HOME and
 * TMPDIR pointing at the run's directory, LANG, AGT_AGENT_ID, AGT_TRIGGER; never AGT_DAEMON_TOKEN or
 * any *_API_KEY), a shared working directory (each run gets a fresh temporary directory owned by the
 * user it runs as, removed afterwards) or unlimited time (the whole process group is killed at the
 * limit or when the agent unloads). The event arrives as JSON on stdin. Container isolation comes from
 * the compute extension.
 */
import { spawn } from 'node:child_process';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cappedOutput, type CommandOutcome as CommandResult, type CommandRun } from '../../../contracts/commands.js';
import { commandsNeedIsolation } from '../errors.js';

export const COMMAND_DEFAULT_TIMEOUT_MS = 10_000;
const SAFE_PATH = '/usr/local/bin:/usr/bin:/bin';
/** The unprivileged user and group isolated commands run as (`nobody` / `nogroup`). */
export const COMMAND_UID = 65534;
export const COMMAND_GID = 65534;
/** `unshare --net` + `setpriv` to the unprivileged user; the shell command follows. */
const ISOLATION_PREFIX = [
  'unshare',
  '--net',
  '--',
  'setpriv',
  `--reuid=${COMMAND_UID}`,
  `--regid=${COMMAND_GID}`,
  '--clear-groups',
  '--inh-caps=-all',
  '--bounding-set=-all',
  '--no-new-privs',
];

let probed: Promise<boolean> | undefined;

/**
 * True when commands can run isolated (root, and `unshare --net` + `setpriv` work on this host).
 * Probed once per process by running the real prefix with `/bin/true`.
 */
export function commandIsolationAvailable(): Promise<boolean> {
  probed ??= new Promise<boolean>((resolve) => {
    if (process.getuid?.() !== 0) return resolve(false);
    const [bin, ...args] = ISOLATION_PREFIX;
    const child = spawn(bin!, [...args, '/bin/true'], { stdio: 'ignore', env: { PATH: SAFE_PATH } });
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('error', () => (clearTimeout(timer), resolve(false)));
    child.once('close', (code) => (clearTimeout(timer), resolve(code === 0)));
  });
  return probed;
}

export interface CommandCall {
  command: string;
  /** Written to the command's stdin, then closed (a target's event as JSON). */
  stdin: string;
  agentId: string;
  trigger: string;
  timeoutMs?: number;
  /** Aborts the run (agent unload): the process group is killed at once. */
  signal?: AbortSignal;
  /** The agent's `security.allow_unsandboxed_commands`: run as the daemon's user when isolation is unavailable. */
  allowUnsandboxed?: boolean;
  /** Whether isolation is available; default: {@link commandIsolationAvailable} (tests pass false). */
  isolation?: boolean;
}

export interface CommandOutcome {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  /** How it ran: `isolated` (no network, unprivileged user) or `unsandboxed` (the daemon's user, allowed by config). */
  boundary: 'isolated' | 'unsandboxed';
}

/** Runs a command inside the boundary; `unavailable` when it cannot be isolated and the agent did not allow that. */
export async function runCommand(call: CommandCall): Promise<CommandOutcome> {
  const isolated = call.isolation ?? (await commandIsolationAvailable());
  if (!isolated && !call.allowUnsandboxed) {
    throw commandsNeedIsolation();
  }
  const boundary = isolated ? 'isolated' : 'unsandboxed';
  const cwd = await mkdtemp(join(tmpdir(), 'agt-cmd-'));
  try {
    if (isolated) await chown(cwd, COMMAND_UID, COMMAND_GID);
    const argv = isolated ? [...ISOLATION_PREFIX, '/bin/sh', '-c', call.command] : ['/bin/sh', '-c', call.command];
    return await new Promise<CommandOutcome>((resolve, reject) => {
      const child = spawn(argv[0]!, argv.slice(1), {
        cwd,
        // A new process group, so the limit kills the command and everything it started.
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
        env: { PATH: SAFE_PATH, HOME: cwd, TMPDIR: cwd, LANG: 'C.UTF-8', AGT_AGENT_ID: call.agentId, AGT_TRIGGER: call.trigger },
      });
      // Each stream cut at 512 KB (COMMAND_OUTPUT_CAP_BYTES, D15).
      const stdout = cappedOutput('\n[output truncated]');
      const stderr = cappedOutput('\n[output truncated]');
      let timedOut = false;
      const killGroup = () => {
        try {
          if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      };
      const timer = setTimeout(() => {
        timedOut = true;
        killGroup();
      }, call.timeoutMs ?? COMMAND_DEFAULT_TIMEOUT_MS);
      const onAbort = () => killGroup();
      call.signal?.addEventListener('abort', onAbort, { once: true });
      child.stdout!.on('data', stdout.push);
      child.stderr!.on('data', stderr.push);
      child.stdin!.on('error', () => {}); // a command that never reads stdin closes the pipe early
      child.stdin!.end(call.stdin);
      child.once('error', (error) => {
        clearTimeout(timer);
        call.signal?.removeEventListener('abort', onAbort);
        reject(error);
      });
      child.once('close', (exitCode, signal) => {
        clearTimeout(timer);
        call.signal?.removeEventListener('abort', onAbort);
        // Children that outlived the shell die with the group.
        killGroup();
        resolve({ exitCode, signal, timedOut, stdout: stdout.value(), stderr: stderr.value(), boundary });
      });
    });
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
}

/** The agent's `security.allow_unsandboxed_commands` (owner-only, like all of `security`). */
export function allowsUnsandboxedCommands(config: { security?: unknown }): boolean {
  return (config.security as Record<string, unknown> | undefined)?.allow_unsandboxed_commands === true;
}

/**
 * A command of the `host` tier in the shape extensions see (`contracts/points.ts`): exit code 124 on a
 * time-out, as the compute extension's containers answer it.
 */
export async function runHostCommand(run: CommandRun, allowUnsandboxed: boolean, trigger = 'compute_exec'): Promise<CommandResult> {
  const outcome = await runCommand({
    command: run.command,
    stdin: run.stdin ?? '',
    agentId: run.agentId,
    trigger,
    timeoutMs: run.timeoutMs,
    signal: run.signal,
    allowUnsandboxed,
  });
  return {
    target: 'host',
    exitCode: outcome.timedOut ? 124 : outcome.exitCode,
    timedOut: outcome.timedOut,
    stdout: outcome.stdout,
    stderr: outcome.stderr,
  };
}
