/**
 * One slice of bulk writes per event-loop turn, across the whole daemon: the group commits of accepted
 * chats (kernel/agents/group-commit.ts) and the absorbed chats a turn writes (kernel/runtime/executor/turn.ts)
 * each wait here before a slice. A burst over 10 agents otherwise ran every agent's slice in the same
 * check phase (10 × 64 rows in one stretch), and `/health` waited for all of them; released one per
 * event-loop turn, the requests that came meanwhile are read between two slices (docs/performance.md,
 * "Bursts of chats").
 */

const waiting: Array<() => void> = [];
let releasing = false;

/** Resolves in a check phase of its own (one waiter per event-loop turn, in the order asked). */
export function nextWriteSlice(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (!releasing) {
      releasing = true;
      setImmediate(release);
    }
  });
}

function release(): void {
  waiting.shift()?.();
  if (waiting.length > 0) setImmediate(release);
  else releasing = false;
}
