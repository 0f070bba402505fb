/**
 * Processes a test run left behind: orphans (parent pid 1) whose command line names this checkout, such as a
 * fixture server that outlived a daemon killed outright. Only this checkout's: another one's run on the same
 * machine is not this run's doing. Linux only (it reads /proc); elsewhere there are none to find.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** The matching orphans now: pid → command line. */
export function orphans(root) {
  const found = new Map();
  let pids;
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return found;
  }
  const mark = `${root.replace(/\/$/, '')}/`;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // The parent pid is the second field after the command name, which may hold spaces and parentheses.
      if (stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1] !== '1') continue;
      const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
      if (command.includes(mark)) found.set(Number(pid), command);
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

/**
 * The orphans that were not there in `before`, once those still exiting had a moment to go (a file's last
 * teardown may still be reaping); each is killed, so no run leaves them on the machine.
 */
export async function leftSince(root, before, graceMs = 3000) {
  const end = Date.now() + graceMs;
  for (;;) {
    const left = [...orphans(root)].filter(([pid]) => !before.has(pid));
    if (left.length === 0 || Date.now() > end) {
      for (const [pid] of left) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Gone already.
        }
      }
      return left;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
