/**
 * One full garbage collection once a burst of agent loads is over (creates, restores, autostart, a fleet
 * taking agents over). Loading and starting an agent leaves its garbage mostly in V8's old generation (the
 * objects of a load outlive the 1 MB young generation bin/v8-flags.mjs keeps), and V8 collects the old
 * generation when it reaches its limit or when its memory reducer finds the process idle, which the agents'
 * heartbeats put off: 1 s after 1,000 creates the heap held 30–40 MB of garbage, collected only ~40 s later
 * (docs/performance.md, "Memory right after 1,000 creates").
 *
 * So: once at least `BURST` agents settled since the last collection and none for `QUIET_MS`, one full
 * collection (tens of ms with 1,000 agents, once per burst, not per agent).
 */
import { collector } from './handle-release.js';

/** Agents settled since the last collection that make a burst worth one. */
export const BURST = 32;
/** How long without a new agent settling before the burst counts as over. */
export const QUIET_MS = 500;

let settled = 0;
let timer: NodeJS.Timeout | undefined;

/** Called when an agent settled (loaded; see the registry). Never throws. */
export function agentSettled(): void {
  settled++;
  if (settled < BURST) return;
  if (timer) {
    timer.refresh();
    return;
  }
  timer = setTimeout(() => {
    timer = undefined;
    settled = 0;
    collector()?.();
  }, QUIET_MS);
  timer.unref();
}
