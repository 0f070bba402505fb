/**
 * System-scope `command` targets: a shell command run as a child process.
 *
 * The boundary is a process boundary, not a container: the command runs as the daemon's OS user and
 * can read what that user can read. What it does not get: the daemon's memory, its environment (only
 * a minimal one: PATH, HOME and LANG pointing at neutral values, plus AGT_AGENT_ID and AGT_TRIGGER;
 * never AGT_DAEMON_TOKEN or any *_API_KEY), a shared working directory (each run gets a fresh temporary
 * directory, removed afterwards) or unlimited time (the whole process group is killed at the limit).
 * The event arrives as JSON on stdin. Container isolation comes from the compute extension.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const COMMAND_DEFAULT_TIMEOUT_MS = 10_000;
export const COMMAND_MAX_OUTPUT_BYTES = 64 * 1024;
const SAFE_PATH = '/usr/local/bin:/usr/bin:/bin';

export interface CommandCall {
  command: string;
  event: unknown;
  agentId: string;
  trigger: string;
  timeoutMs?: number;
  /** Aborts the run (agent unload): the process group is killed at once. */
  signal?: AbortSignal;
}

export interface CommandOutcome {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
}

function capped() {
  let text = '';
  let truncated = false;
  return {
    push(chunk: Buffer) {
      if (text.length >= COMMAND_MAX_OUTPUT_BYTES) {
        truncated = true;
        return;
      }
      text += chunk.toString('utf8');
      if (text.length > COMMAND_MAX_OUTPUT_BYTES) {
        text = text.slice(0, COMMAND_MAX_OUTPUT_BYTES);
        truncated = true;
      }
    },
    value: () => (truncated ? `${text}\n[output truncated]` : text),
  };
}

export async function runCommand(call: CommandCall): Promise<CommandOutcome> {
  const cwd = await mkdtemp(join(tmpdir(), 'agt-cmd-'));
  try {
    return await new Promise<CommandOutcome>((resolve, reject) => {
      const child = spawn('/bin/sh', ['-c', call.command], {
        cwd,
        // A new process group, so the limit kills the command and everything it started.
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
        env: { PATH: SAFE_PATH, HOME: cwd, TMPDIR: cwd, LANG: 'C.UTF-8', AGT_AGENT_ID: call.agentId, AGT_TRIGGER: call.trigger },
      });
      const stdout = capped();
      const stderr = capped();
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
      child.stdin!.end(JSON.stringify(call.event ?? null));
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
        resolve({ exitCode, signal, timedOut, stdout: stdout.value(), stderr: stderr.value() });
      });
    });
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
}
