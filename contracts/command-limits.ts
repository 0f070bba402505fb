/**
 * Settings `commandLimits`: the resource limits of agents' host commands (the kernel's host runner: system-scope
 * `command` targets and the compute `host` tier), applied as rlimits to every process of a command, and the bound on
 * each agent's work folder. Each field is optional; the kernel's defaults (docs/runtime.md#command-targets) apply.
 */
import { Type, type Static } from 'typebox';

/** @beta */
export const CommandLimitsSettings = Type.Object(
  {
    processes: Type.Optional(
      Type.Integer({
        minimum: 4,
        maximum: 4096,
        description:
          'processes at once (RLIMIT_NPROC): per command, or per agent when the daemon runs as root (default 64)',
      }),
    ),
    memoryMb: Type.Optional(
      Type.Integer({
        minimum: 16,
        maximum: 65536,
        description: 'data memory of each process in MB (RLIMIT_DATA, default 512)',
      }),
    ),
    fileSizeMb: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 65536,
        description: 'largest file a command may write, in MB (RLIMIT_FSIZE, default 64)',
      }),
    ),
    cpuSeconds: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 86400,
        description: 'CPU time of each process in seconds (RLIMIT_CPU, default 60)',
      }),
    ),
    tmpMb: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 65536,
        description: 'size of each private /tmp, /var/tmp and /dev/shm in MB (default 64)',
      }),
    ),
    workBytes: Type.Optional(
      Type.Integer({
        minimum: 1024 * 1024,
        maximum: 2 ** 50,
        description:
          "disk use of each agent's work folder in bytes, measured after each command; over it, its next commands are refused (work_folder_full) (default 1 GiB)",
      }),
    ),
  },
  { additionalProperties: false },
);

/** @beta */
export type CommandLimitsSettings = Static<typeof CommandLimitsSettings>;
