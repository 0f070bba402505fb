/**
 * Bounded steps for long multi-daemon tests: a step that does not settle within its bound fails with its name
 * and a snapshot of this process's children (CPU, age, command), so a hang in CI says where it stuck and
 * which process, if any, was busy, instead of running into the file's timeout.
 */
import { execFileSync } from 'node:child_process';

/** This process's descendants as `ps` shows them (pid, parent, CPU %, elapsed, command). */
export function childSnapshot(): string {
  try {
    const table = execFileSync('ps', ['-eo', 'pid=,ppid=,pcpu=,etime=,args='], { encoding: 'utf8' });
    const rows = table
      .split('\n')
      .map((line) => line.trim().split(/\s+/))
      .filter((cols) => cols.length >= 5);
    const mine = new Set([String(process.pid)]);
    // Parents are listed before most children, but not always: repeat until the set stops growing.
    for (let size = 0; size !== mine.size; ) {
      size = mine.size;
      for (const cols of rows) if (mine.has(cols[1]!)) mine.add(cols[0]!);
    }
    return rows
      .filter((cols) => mine.has(cols[0]!) && cols[0] !== String(process.pid))
      .map((cols) => `${cols[0]} cpu ${cols[2]}% up ${cols[3]} ${cols.slice(4).join(' ').slice(0, 120)}`)
      .join('\n');
  } catch (error) {
    return `ps failed: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** `promise`, or a rejection naming `what` and the children's snapshot once `ms` pass. */
export function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not done within ${ms} ms; children:\n${childSnapshot()}`)), ms);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}
