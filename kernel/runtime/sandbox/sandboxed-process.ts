/**
 * A long-lived process in an agent's command sandbox (`ctx.agents.spawnSandboxed`): the bwrap command line
 * the host runner builds (bwrap-args.ts), started with pipes the caller keeps, where a command's run collects
 * its output and waits. The kill aims at the sandbox's pid 1 (bwrap reports it on INFO_FD): the kernel then
 * kills every process of the namespace, so nothing the program started outlives it.
 *
 * The read-only mounts a caller asks for are checked here: each source is resolved (links followed) and
 * refused when it holds a private path of the daemon (the data directory, the agents' work folders, agent
 * folders): a folder inside those is fine (the mcp extension's installed packages), one around them is not,
 * and nothing of the agents' work folders is (another agent's would be the agent's to read).
 */
import { spawn } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { SandboxedExit, SandboxedProcess } from '@agt/contracts';
import { badSandboxMount } from '../errors.js';
import { ARGS_FD, killPid, onSandboxPid, SANDBOX_MOUNTS, type SandboxCommand } from './bwrap-args.js';

/** A mount's path under SANDBOX_MOUNTS: plain segments only (no `..`, no empty one). */
const MOUNT_PATH = /^(?!\.{1,2}(?:\/|$))[A-Za-z0-9._-]{1,100}(?:\/(?!\.{1,2}(?:\/|$))[A-Za-z0-9._-]{1,100}){0,7}$/;

/** Whether `path` is `root` or below it. */
function within(path: string, root: string): boolean {
  const below = relative(root, path);
  return below === '' || (!below.startsWith('..') && !isAbsolute(below));
}

/**
 * The read-only binds of `mounts`, each source resolved; refused when a path is malformed, when a source holds
 * one of `privatePaths`, or lies in or around `sandboxRoot` (the agents' work folders).
 */
export function sandboxMounts(
  mounts: Readonly<Record<string, string>> | undefined,
  privatePaths: readonly string[],
  sandboxRoot: string,
): Array<{ source: string; target: string }> {
  const privates = [...privatePaths, sandboxRoot].map((path) => resolve(path));
  const root = resolve(sandboxRoot);
  return Object.entries(mounts ?? {}).map(([path, host]) => {
    if (!MOUNT_PATH.test(path)) throw badSandboxMount(path, 'not a relative path of plain segments');
    if (!isAbsolute(host)) throw badSandboxMount(path, 'its source is not an absolute path');
    let source: string;
    try {
      source = realpathSync(host);
    } catch {
      throw badSandboxMount(path, 'its source does not exist');
    }
    if (privates.some((secret) => within(secret, source)) || within(source, root))
      throw badSandboxMount(path, "its source holds the daemon's private files");
    return { source, target: `${SANDBOX_MOUNTS}/${path}` };
  });
}

/** Starts the sandbox with its pipes; resolves once it runs, rejects when it cannot start at all. */
export function startSandboxed({ argv, options }: SandboxCommand, env: NodeJS.ProcessEnv): Promise<SandboxedProcess> {
  return new Promise((resolveStart, rejectStart) => {
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd: '/',
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe', 'pipe', 'pipe'],
      env,
    });
    const args = child.stdio[ARGS_FD] as Writable | null;
    args?.on('error', () => {}); // a bwrap that failed early closes it unread; its exit says why
    args?.end(`${options.join('\0')}\0`);
    let initPid: number | undefined;
    let exitedAlready = false;
    let killing = false;
    onSandboxPid(child, (pid) => {
      initPid = pid;
      if (killing && !exitedAlready) killPid(pid);
    });
    child.stdin!.on('error', () => {}); // a program that exits closes its stdin: a late write fails, harmlessly
    child.once('exit', () => {
      exitedAlready = true;
    });
    const exited = new Promise<SandboxedExit>((done) => {
      child.once('close', (code, exitSignal) => {
        // Anything of bwrap's group left (it died while setting up): gone too.
        if (child.pid !== undefined) killPid(-child.pid);
        done({ code, signal: exitSignal });
      });
    });
    child.once('error', (error) => rejectStart(error));
    child.once('spawn', () =>
      resolveStart({
        pid: child.pid!,
        stdin: child.stdin!,
        stdout: child.stdout as Readable,
        stderr: child.stderr as Readable,
        exited,
        kill() {
          if (killing || exitedAlready) return;
          killing = true;
          // Once bwrap has exited the namespace is gone already (and its pid 1 may be reused).
          if (initPid !== undefined) killPid(initPid);
          // Not reported yet (bwrap still setting up): bwrap's group; its children follow (--die-with-parent).
          else if (child.pid !== undefined) killPid(-child.pid);
        },
      }),
    );
  });
}
