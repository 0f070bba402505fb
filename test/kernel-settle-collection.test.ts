/**
 * kernel/agents/settle-collection.ts: a burst of agents settling is followed by one full collection once
 * none settled for a while. Read from V8's own record of its collections (`gc` performance entries: a full
 * one the process asked for is flagged forced).
 */
import { constants, PerformanceObserver } from 'node:perf_hooks';
import t from 'tap';
import { agentSettled, BURST, QUIET_MS } from '../kernel/agents/settle-collection.js';

/** Forced full collections from now on, with the time each ended. */
function forcedCollections(t: { teardown(fn: () => void): void }): { at: number[]; next: () => Promise<number> } {
  const at: number[] = [];
  let wake: (() => void) | undefined;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const detail = (entry as { detail?: { kind?: number; flags?: number } }).detail;
      if (detail?.kind !== constants.NODE_PERFORMANCE_GC_MAJOR) continue;
      if (!((detail.flags ?? 0) & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED)) continue;
      at.push(performance.now());
      wake?.();
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  t.teardown(() => observer.disconnect());
  return {
    at,
    next: () =>
      new Promise<number>((done) => {
        const seen = at.length;
        wake = () => at.length > seen && done(at[at.length - 1]!);
      }),
  };
}

t.test('one full collection after a burst of agents, once it is over', async (t) => {
  const collections = forcedCollections(t);
  // The collection's timer does not keep a process alive (a daemon has its server for that): this does.
  const alive = setInterval(() => {}, 1000);
  t.teardown(() => clearInterval(alive));
  const collected = collections.next();
  for (let i = 0; i < BURST; i++) agentSettled();
  // The burst goes on: the collection waits for the quiet time after the last agent.
  await new Promise((done) => setTimeout(done, QUIET_MS / 2));
  const last = performance.now();
  agentSettled();
  const at = await collected;
  t.ok(
    at - last >= QUIET_MS - 5,
    `collected ${Math.round(at - last)} ms after the last agent, not before the quiet time`,
  );
  t.equal(collections.at.length, 1, 'once for the whole burst');
});
