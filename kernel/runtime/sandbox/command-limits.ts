/**
 * The resource limits of agents' host commands (settings `commandLimits`), applied as rlimits by
 * util-linux `prlimit` to the command's shell and so to everything it starts (rlimits are inherited
 * across fork and exec, and a process without privileges can only lower them: soft and hard are set
 * alike, so a command cannot raise them back).
 *
 * What each bounds:
 * - `processes` (RLIMIT_NPROC): processes of the command's user at once. In a sandbox made as an
 *   ordinary user (bwrap's own user namespace) the kernel counts them per namespace, so per command;
 *   when the daemon runs as root every agent has its own uid, so per agent (all its commands together).
 * - `memoryMb` (RLIMIT_DATA): each process's heap and private writable mappings, the memory it can fill;
 *   not its address-space reservations (V8, for one, reserves far more than it uses).
 * - `fileSizeMb` (RLIMIT_FSIZE): the largest file a process may write (larger writes fail with EFBIG).
 * - `cpuSeconds` (RLIMIT_CPU): each process's CPU time; past it the kernel kills it.
 * - `tmpMb`: the size of each private tmpfs (`/tmp`, `/var/tmp`, `/dev/shm`), which is memory.
 * - `workBytes`: the disk use of the agent's work folder, not an rlimit: measured after each command and
 *   checked before the next (work-usage.ts).
 * Core dumps are off (RLIMIT_CORE 0): a crashing command leaves no image of its memory behind.
 */
import type { CommandLimitsSettings } from '@agt/contracts';

export interface CommandLimits {
  processes: number;
  memoryMb: number;
  fileSizeMb: number;
  cpuSeconds: number;
  tmpMb: number;
  workBytes: number;
}

/** Safe defaults: enough for shell pipelines, interpreters and builds of small things, not for a fork bomb. */
export const DEFAULT_COMMAND_LIMITS: Readonly<CommandLimits> = Object.freeze({
  processes: 64,
  memoryMb: 512,
  fileSizeMb: 64,
  cpuSeconds: 60,
  tmpMb: 64,
  workBytes: 1024 * 1024 * 1024,
});

/** The limits that apply: the owner's settings over the defaults. */
export function resolveCommandLimits(settings: CommandLimitsSettings | undefined): CommandLimits {
  return { ...DEFAULT_COMMAND_LIMITS, ...(settings ?? {}) };
}

const MB = 1024 * 1024;

/**
 * `prlimit` options for the limits. `withProcesses: false` leaves RLIMIT_NPROC alone: outside a
 * namespace of its own the count would include every process of the daemon's user.
 */
export function prlimitArgs(limits: CommandLimits, withProcesses = true): string[] {
  return [
    ...(withProcesses ? [`--nproc=${limits.processes}`] : []),
    `--data=${limits.memoryMb * MB}`,
    `--fsize=${limits.fileSizeMb * MB}`,
    `--cpu=${limits.cpuSeconds}`,
    '--core=0',
  ];
}
