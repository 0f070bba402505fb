/**
 * A built daemon prints its listening line before its extensions start (they start while it already
 * serves: kernel/daemon.ts), and says it has started with `daemon.started` once they have. A test that
 * reads what extensions do at start (their state, a boot autostart) waits for that event first.
 */
import type { DaemonClient } from './daemon.js';
import { eventLog, type EventLog } from './events.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

/** Resolves once `d` has emitted `daemon.started`; the log it read (replayed from the first event) stays open. */
export async function daemonStarted(t: Teardown, d: DaemonClient): Promise<EventLog> {
  const log = await eventLog(t, d, '?since=0');
  await log.waitFor((event) => event.event_type === 'daemon.started', 'daemon.started', { ms: 30_000 });
  return log;
}
