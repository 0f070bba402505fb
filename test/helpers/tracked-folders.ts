/**
 * Helpers of the tracked-folders tests: a manifest with the extension (and nothing that binds ports), waiting for an
 * event (on the in-process daemon's bus, or on a client's `GET /events`), and making reviewed agent files.
 */
import { join } from 'node:path';
import type { EventType, UmbilicalEvent } from '../../contracts/events.js';
import type { AgentConfig } from '../../contracts/agent-config.js';
import { createAgentFile } from './agent-file.js';
import { ROOT, type DaemonClient, type TestDaemon } from './daemon.js';
import type { EventLog } from './events.js';

export const TRACKED_MODULE = join(ROOT, 'extensions/tracked-folders/index.ts');

/** The manifest: tracked-folders enabled (or not) with `config`. */
export const trackedManifest = (enabled = true, config: Record<string, unknown> = {}) => ({
  extensions: [{ name: 'tracked-folders', module: TRACKED_MODULE, enabled, config }],
});

/**
 * Resolves with the first event of `type` that `match` accepts, emitted from now on; rejects after
 * `timeoutMs` naming what it waited for.
 */
export function nextEvent<T extends EventType>(
  d: TestDaemon,
  type: T,
  match: (event: UmbilicalEvent<T>) => boolean = () => true,
  timeoutMs = 15_000,
): Promise<UmbilicalEvent<T>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      unsubscribe();
      reject(new Error(`no ${type} event within ${timeoutMs} ms`));
    }, timeoutMs);
    const unsubscribe = d.daemon.kernel.bus.subscribe((event) => {
      if (event.event_type !== type || !match(event as UmbilicalEvent<T>)) return;
      clearTimeout(timer);
      unsubscribe();
      resolve(event as UmbilicalEvent<T>);
    });
  });
}

/**
 * The same wait on a client's view of the events (`eventLog`): the first event of `type` that `match`
 * accepts, among those that arrive from the moment of the call.
 */
export function nextLogEvent<T extends EventType>(
  log: EventLog,
  type: T,
  match: (event: UmbilicalEvent<T>) => boolean = () => true,
  timeoutMs = 15_000,
): Promise<UmbilicalEvent<T>> {
  return log.waitFor((event) => event.event_type === type && match(event as UmbilicalEvent<T>), `a ${type} event`, {
    from: log.events.length,
    ms: timeoutMs,
  }) as Promise<UmbilicalEvent<T>>;
}

/** Writes an agent file and marks it reviewed on `d` (through the API). */
export async function reviewedAgentFile(
  d: DaemonClient,
  dir: string,
  config: Partial<AgentConfig>,
  fileName?: string,
): Promise<string> {
  const path = await createAgentFile(dir, config, fileName ? { fileName } : {});
  const accepted = await d.request('POST', '/agents/review/accept', { filePath: path });
  if (accepted.status !== 200) throw new Error(`review accept: ${JSON.stringify(accepted.body)}`);
  return path;
}
