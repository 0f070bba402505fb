/**
 * A long-lived process in an agent's command sandbox (`ctx.agents.spawnSandboxed`): the same bubblewrap
 * sandbox as the agent's host commands (`ctx.agents.runHostCommand`), with pipes for stdin, stdout and stderr
 * instead of one command's collected output. For a program that serves the agent for a while (an MCP
 * server over stdio) and must see no more of the host than the agent's commands do.
 */
import type { Readable, Writable } from 'node:stream';

/**
 * Where the agent's work folder is inside its sandbox: the cwd and HOME of its commands and sandboxed processes.
 *
 * @beta
 */
export const SANDBOX_WORK_FOLDER = '/work';

/**
 * Where a sandboxed process's read-only mounts ({@link SandboxedSpawn.mounts}) appear inside.
 *
 * @beta
 */
export const SANDBOX_MOUNT_ROOT = '/agt';

/**
 * What to start. The program sees the sandbox's file system: the read-only system folders (`/usr`, `/etc`,
 * `/opt`, `/bin`, `/lib`...), the agent's work folder at `/work` (its cwd and HOME), private tmpfs `/tmp`, and
 * the `mounts` under `/agt/`; nothing else of the host.
 *
 * @beta
 */
export interface SandboxedSpawn {
  /** The program, as a path inside the sandbox (`/usr/bin/python3`, `/agt/bin/node`); run without a shell. */
  command: string;
  args?: readonly string[];
  /**
   * Added to the sandbox's minimal environment (`PATH=/usr/local/bin:/usr/bin:/bin`, `HOME=/work`,
   * `TMPDIR=/tmp`, `LANG=C.UTF-8`, `AGT_AGENT_ID`); nothing of the daemon's own environment is passed.
   */
  env?: Readonly<Record<string, string>>;
  /**
   * Host files or folders shown read-only inside, keyed by their path under `/agt/` (`bin/node`,
   * `mcp-servers/node_modules`: letters, digits, `.`, `_`, `-` per segment). Refused (`bad_request`) when one
   * holds the data directory, the agents' work folders or another private path of the daemon. A mount keeps its
   * host permissions: when the daemon runs as root the agent's uid must be able to read it.
   */
  mounts?: Readonly<Record<string, string>>;
}

/**
 * How a sandboxed process ended: its exit code, or the signal that ended it (null and null when the kernel
 * killed the sandbox at once).
 *
 * @beta
 */
export interface SandboxedExit {
  code: number | null;
  signal: string | null;
}

/**
 * A running sandboxed process. Its stdout and stderr must be read (a full pipe stops the program).
 *
 * @beta
 */
export interface SandboxedProcess {
  /** The host pid of the sandbox's outer process (bubblewrap); the program's own pid is in a namespace of its own. */
  readonly pid: number;
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** Settles once the sandbox is gone: every process it started has been killed and reaped. Never rejects. */
  readonly exited: Promise<SandboxedExit>;
  /** Kills the whole sandbox at once (its pid 1, so every process in it); idempotent. */
  kill(): void;
}

/**
 * `ctx.agents.spawnSandboxed`: starts `spawn` in the loaded agent's command sandbox. Rejects with
 * `unavailable` where no sandbox can be made here (never run unsandboxed, whatever the agent's
 * `security.allow_unsandboxed_commands`), `work_folder_full` while the agent's work folder is over settings
 * `commandLimits.workBytes`, `not_found` for an agent that is not loaded, `agent_id_conflict` when it does
 * not hold the key its id is bound to, `bad_request` for a mount that is refused. The process runs under
 * the rlimits of settings `commandLimits` (its CPU seconds included: past them the kernel kills it) and,
 * when the daemon runs as root, as the agent's own uid; it has no network. The kernel kills it when the
 * agent unloads and when the daemon stops.
 *
 * @beta
 */
export type SpawnSandboxed = (agentId: string, spawn: SandboxedSpawn) => Promise<SandboxedProcess>;
