/**
 * The pid file: one daemon per data directory.
 *
 * `agtd.pid` holds the daemon's pid on its first line and, on Linux, a second line `agtd start=<ticks>`:
 * the process's start time from `/proc/<pid>/stat` (clock ticks since boot). A pid and its start time
 * name one process for the life of the machine, so a pid reused by another process is told from the
 * daemon that wrote the file without guessing from names. The file is stale, and replaced, when the
 * process it names is gone, is a zombie (exited, not yet reaped), or is another process than the one that
 * wrote it (a different start time; for a file without one, a command line that is not agtd's).
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StartupError } from './errors.js';

/** What `/proc/<pid>/stat` says of a process; undefined where there is no procfs or no such process. */
interface ProcStat {
  state: string;
  startTime: string;
}

function procStat(pid: number): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces or ')': fields follow the last ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state); field 22 (starttime) is fields[19].
    return { state: fields[0]!, startTime: fields[19]! };
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else; still alive.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** True when this file's process runs agtd: its command line names `agtd` (bin/agtd.mjs, an installed agtd). */
function looksLikeAgtd(pid: number): boolean {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return argv.some((arg) => /(^|\/)agtd(\.m?js)?$/.test(arg) || /kernel\/main\.(ts|js)$/.test(arg));
  } catch {
    // Unreadable (another user's process under hidepid): assume it is a daemon rather than take its place.
    return true;
  }
}

/** The line identifying this process in the pid file; undefined without procfs. */
function identityLine(pid: number): string | undefined {
  const stat = procStat(pid);
  return stat ? `agtd start=${stat.startTime}` : undefined;
}

/** Why the process a pid file names is not a running daemon; undefined when it is one. */
export function staleReason(content: string): string | undefined {
  const [pidLine = '', identity] = content.split('\n').map((line) => line.trim());
  const pid = Number.parseInt(pidLine, 10);
  if (!Number.isInteger(pid) || pid <= 0 || String(pid) !== pidLine) return 'garbled';
  if (pid === process.pid) return 'this process';
  if (!isAlive(pid)) return 'process gone';
  const stat = procStat(pid);
  if (!stat) return undefined; // No procfs (or the process just went): only liveness can be known.
  if (stat.state === 'Z' || stat.state === 'X') return 'zombie';
  const recorded = identity?.match(/^agtd start=(\d+)$/)?.[1];
  if (recorded !== undefined) return recorded === stat.startTime ? undefined : 'pid reused by another process';
  return looksLikeAgtd(pid) ? undefined : 'not an agt daemon';
}

/**
 * Claims the pid file. Refuses when it names a running daemon; a stale or garbled file is replaced.
 * The `wx` flag makes the claim atomic against a second daemon starting at the same moment.
 */
export function claimPidFile(dataDir: string): { path: string; release(): void } {
  const path = join(dataDir, 'agtd.pid');
  const identity = identityLine(process.pid);
  const content = `${process.pid}\n${identity ? `${identity}\n` : ''}`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, content, { flag: 'wx', mode: 0o600 });
      let released = false;
      return {
        path,
        release() {
          if (released) return;
          released = true;
          try {
            if (readFileSync(path, 'utf8') === content) rmSync(path);
          } catch {
            // Already gone: nothing to release.
          }
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const existing = readFileSync(path, 'utf8');
      if (staleReason(existing) === undefined) {
        const pid = Number.parseInt(existing, 10);
        throw new StartupError(
          `another agt daemon (pid ${pid}) is running on data directory ${dataDir}; stop it first or remove ${path} if it is not an agt daemon`,
        );
      }
      rmSync(path, { force: true });
    }
  }
  throw new StartupError(`could not claim pid file ${path}`);
}
