/** The pid file: one daemon per data directory. */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StartupError } from './errors.js';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else; still alive.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Claims the pid file. Refuses when it names another live process; a stale or garbled file is replaced.
 * The `wx` flag makes the claim atomic against a second daemon starting at the same moment.
 */
export function claimPidFile(dataDir: string): { path: string; release(): void } {
  const path = join(dataDir, 'agtd.pid');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
      let released = false;
      return {
        path,
        release() {
          if (released) return;
          released = true;
          try {
            if (readFileSync(path, 'utf8').trim() === String(process.pid)) rmSync(path);
          } catch {
            // Already gone: nothing to release.
          }
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) {
        throw new StartupError(
          `another agt daemon (pid ${pid}) is running on data directory ${dataDir}; stop it first or remove ${path} if it is not an agt daemon`,
        );
      }
      rmSync(path, { force: true });
    }
  }
  throw new StartupError(`could not claim pid file ${path}`);
}
