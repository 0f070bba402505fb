/**
 * The bubblewrap (`bwrap`) command line of one agent command: what the sandbox is made of.
 *
 * - Namespaces: new pid, mount, IPC, network, UTS and (where the kernel has it) cgroup namespaces.
 *   bwrap's own process is pid 1 of the pid namespace; when the command's shell ends, pid 1 exits and the
 *   kernel kills every process left in the namespace, `setsid` and double-forked ones included.
 *   The time limit and an unload kill that pid 1 (bwrap reports it on {@link INFO_FD}), and the run ends
 *   when the whole namespace is gone; `--die-with-parent` does the same if the daemon dies.
 * - File system, an allow-list: a new empty root holding read-only binds of the system folders only
 *   ({@link SYSTEM_ROOTS}: `/usr`, `/etc`, `/opt` and the `/bin`, `/lib`... links or folders), a minimal
 *   `/dev`, a fresh `/proc` of the new pid namespace (only the command's own processes), private tmpfs
 *   `/tmp`, `/var/tmp` and `/dev/shm` of a bounded size, and the agent's work folder read-write at
 *   `/work`. Home folders, `/root`, `/run`, `/var`, `/srv`, `/mnt`, `/sys`, the data directory and
 *   other agents' folders are simply not there; the daemon's private paths that lie under a system
 *   folder (a data directory in `/opt`, say) are covered by an empty tmpfs.
 * - User: as root, bwrap (no user namespace) keeps only CAP_SETUID/CAP_SETGID for `setpriv`, which
 *   switches to the agent's own uid/gid with no supplementary groups, empty capability sets and
 *   `no_new_privs`. In `root-userns` mode (the default as root where the kernel allows it) `setpriv` then
 *   starts a second, inner bwrap as the agent: a user namespace of its own (the agent's uid mapped to
 *   itself) that forbids nested ones (`--disable-userns`), so `unshare -U -r` cannot make the command
 *   uid 0 of a new namespace (kernel attack surface). The inner bwrap re-binds the outer sandbox's root
 *   (`--bind / /`): mounts made read-only by the outer one stay read-only (locked from a user namespace).
 *   It cannot be the only bwrap: the agent's uid may not traverse the 0700 data directory that holds its
 *   work folder, so the outer, root bwrap binds it. `root` mode (no inner bwrap) is the fallback where
 *   the kernel forbids user namespaces to ordinary users; there nested namespaces are NOT refused.
 *   As an ordinary user, bwrap makes a user namespace (`--unshare-user`, the daemon's uid inside) in
 *   which the command has no capabilities, and forbids nested ones (`--disable-userns`).
 * - Limits: `prlimit` sets the rlimits of command-limits.ts just before the shell.
 * - A long-lived process (an MCP server, `ctx.agents.spawnSandboxed`) gets the same sandbox, its program run
 *   without a shell, plus read-only binds of what it needs to run (its package folder, the node binary) at
 *   paths under {@link SANDBOX_MOUNTS}, made after the hiding so no bind lands under a hidden path.
 * - What a command can learn of the host's layout: bwrap's options, which name host paths (the data
 *   directory, the work folder), reach it on a pipe ({@link ARGS_FD}, `--args`), not in its argv, so no
 *   `/proc/<pid>/cmdline` inside the sandbox (bwrap's own pid 1 included) shows them. The argv keeps only
 *   paths that are the same inside: the tools under `/usr` and the sandbox's own `/work`.
 */
import type { ChildProcess } from 'node:child_process';
import { lstatSync, readlinkSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { SANDBOX_MOUNT_ROOT, SANDBOX_WORK_FOLDER } from '@agt/contracts';
import { prlimitArgs, type CommandLimits } from './command-limits.js';

/** The host folders a command sees (read-only), when present. */
export const SYSTEM_ROOTS = ['/usr', '/etc', '/opt', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'] as const;

/** The descriptor bwrap reports the sandbox's pid 1 on (`{"child-pid": N}`), so a kill can aim at it. */
export const INFO_FD = 3;

/** The descriptor bwrap reads its options from (`--args`): NUL-separated, up to the end of the pipe. */
export const ARGS_FD = 4;

/** Calls `found` once with the sandbox's pid 1, as bwrap reports it on {@link INFO_FD}. */
export function onSandboxPid(child: ChildProcess, found: (pid: number) => void): void {
  let info = '';
  let seen = false;
  const stream = child.stdio[INFO_FD] as Readable | null | undefined;
  stream?.on('data', (chunk: Buffer) => {
    info += chunk.toString('utf8');
    const pid = /"child-pid":\s*(\d+)/.exec(info)?.[1];
    if (pid === undefined || seen) return;
    seen = true;
    found(Number(pid));
  });
  stream?.on('error', () => {});
}

/** SIGKILL to a pid (negative: a group) that may be gone already. */
export function killPid(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** Where the agent's work folder is inside the sandbox (the command's cwd and HOME). */
export const SANDBOX_WORK = SANDBOX_WORK_FOLDER;

/** Where a long-lived process's read-only mounts appear (the program it runs, say): a folder of the new root. */
export const SANDBOX_MOUNTS = SANDBOX_MOUNT_ROOT;

export interface SandboxTools {
  bwrap: string;
  prlimit: string;
  /** Only needed as root. */
  setpriv?: string;
}

export interface SandboxPlan {
  tools: SandboxTools;
  /**
   * `root-userns`: bwrap as root, setpriv to `uid`, then an inner bwrap in a user namespace refusing
   * nested ones; `root`: the same without the inner bwrap (fallback); `user`: bwrap in a user namespace.
   */
  mode: SandboxMode;
  /** The agent's uid/gid (root mode). */
  uid?: number;
  /** Host path of the agent's work folder, bound read-write at {@link SANDBOX_WORK}. */
  workFolder: string;
  limits: CommandLimits;
  /** Host paths to hide when they lie under a system root (the data directory, agent folders). */
  privatePaths: readonly string[];
  /** A shell command (run by `/bin/sh -c`), or a program and its arguments run as they are (a long-lived process). */
  command: string | readonly string[];
  /** Host files or folders bound read-only at their sandbox path (under {@link SANDBOX_MOUNTS}), after the hiding. */
  mounts?: ReadonlyArray<{ source: string; target: string }>;
}

export type SandboxMode = 'root-userns' | 'root' | 'user';

interface RootEntry {
  path: string;
  /** Set for a symbolic link (`/bin -> usr/bin`): made as the same link inside. */
  link?: string;
}

let roots: RootEntry[] | undefined;

/** The system roots present on this host, read once. */
function systemRoots(): RootEntry[] {
  roots ??= SYSTEM_ROOTS.flatMap((path): RootEntry[] => {
    try {
      const stat = lstatSync(path);
      if (stat.isSymbolicLink()) return [{ path, link: readlinkSync(path) }];
      return stat.isDirectory() ? [{ path }] : [];
    } catch {
      return [];
    }
  });
  return roots;
}

/** Whether `path` is `root` or below it. */
function within(path: string, root: string): boolean {
  const below = relative(root, path);
  return below === '' || (!below.startsWith('..') && !isAbsolute(below));
}

/** How to start one sandbox: the process's argv, and the options bwrap reads on {@link ARGS_FD}. */
export interface SandboxCommand {
  /** `bwrap --args 4 --`, then (root) setpriv and the inner bwrap, prlimit and `/bin/sh -c command`: no host path. */
  argv: string[];
  /** bwrap's options (namespaces, mounts, the host paths): written NUL-separated to {@link ARGS_FD}. */
  options: string[];
}

/** The options bwrap reads, then the argv: (root) setpriv, prlimit and `/bin/sh -c command` (or the program). */
export function sandboxCommand(plan: SandboxPlan): SandboxCommand {
  const tmpBytes = String(plan.limits.tmpMb * 1024 * 1024);
  const bound = systemRoots();
  const options: string[] = [];
  if (plan.mode === 'user') options.push('--unshare-user', '--disable-userns');
  options.push('--unshare-pid', '--unshare-ipc', '--unshare-net', '--unshare-uts', '--unshare-cgroup-try');
  options.push('--die-with-parent', '--new-session', '--hostname', 'agt-sandbox', '--info-fd', String(INFO_FD));
  for (const root of bound) {
    if (root.link !== undefined) options.push('--symlink', root.link, root.path);
    else options.push('--ro-bind', root.path, root.path);
  }
  options.push('--dev', '/dev', '--proc', '/proc');
  for (const tmp of ['/tmp', '/var/tmp', '/dev/shm'])
    options.push('--perms', '1777', '--size', tmpBytes, '--tmpfs', tmp);
  const dirs = bound.filter((root) => root.link === undefined).map((root) => root.path);
  for (const path of plan.privatePaths) {
    const absolute = resolve(path);
    if (dirs.some((root) => within(absolute, root))) options.push('--perms', '0700', '--tmpfs', absolute);
  }
  // The folders leading to each mount, made readable to the agent's uid (bwrap would make them 0700).
  const made = new Set<string>();
  for (const mount of plan.mounts ?? []) {
    const parts = mount.target.split('/').filter(Boolean);
    for (let depth = 1; depth < parts.length; depth++) {
      const dir = `/${parts.slice(0, depth).join('/')}`;
      if (!made.has(dir)) options.push('--perms', '0755', '--dir', dir);
      made.add(dir);
    }
    options.push('--ro-bind', mount.source, mount.target);
  }
  options.push('--bind', plan.workFolder, SANDBOX_WORK, '--chdir', SANDBOX_WORK);
  // The new root itself (a tmpfs owned by the daemon's user in a user namespace) is made read-only
  // last; the mounts on it (tmpfs, work folder) keep their own mode.
  options.push('--remount-ro', '/');
  const argv = [plan.tools.bwrap, '--args', String(ARGS_FD)];
  if (plan.mode !== 'user') {
    if (plan.uid === undefined || !plan.tools.setpriv)
      throw new Error('a root sandbox needs the agent uid and setpriv');
    options.push('--cap-add', 'CAP_SETUID', '--cap-add', 'CAP_SETGID');
    const id = String(plan.uid);
    argv.push(
      '--',
      plan.tools.setpriv,
      `--reuid=${id}`,
      `--regid=${id}`,
      '--clear-groups',
      '--inh-caps=-all',
      '--bounding-set=-all',
      '--no-new-privs',
      '--',
    );
    // The inner bwrap: same file system, pid and other namespaces; only a user namespace that forbids nested ones.
    if (plan.mode === 'root-userns')
      argv.push(
        plan.tools.bwrap,
        '--unshare-user',
        '--disable-userns',
        '--dev-bind',
        '/',
        '/',
        '--chdir',
        SANDBOX_WORK,
        '--die-with-parent',
        '--',
      );
  } else {
    argv.push('--');
  }
  const program = typeof plan.command === 'string' ? ['/bin/sh', '-c', plan.command] : plan.command;
  argv.push(plan.tools.prlimit, ...prlimitArgs(plan.limits), '--', ...program);
  // bwrap reads NUL-separated arguments: a NUL inside one would split it.
  if (options.some((option) => option.includes('\0'))) throw new Error('a sandbox option holds a NUL character');
  return { argv, options };
}
