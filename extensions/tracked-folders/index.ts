/**
 * The `tracked-folders` extension (docs/tracked-folders.md): folders of agent files the daemon keeps track
 * of. At boot it walks them and autostarts the reviewed, non-password-protected `autostart` agents
 * (logged in one line and announced as `tracked.autostarted`); it offers the kernel's agent locator, so
 * `POST /agents/{id}/start` finds an agent that is not loaded by id, handle or name; it watches the
 * folders (`tracked.changed`) and is told of the daemon's own writes (`agt.agent-file-written`); and
 * it serves `/tracked-folders`. Settings `trackedFolders` and `maxScanDepth` are followed as they change.
 */
import { agentFileObservers } from '@agt/contracts';
import { defineExtension } from '@agt/contracts';
import { agentLocator } from '@agt/contracts';
import { TrackedFoldersOptions } from './options.js';
import { registerRoutes } from './routes.js';
import { TAG } from './schemas.js';
import { Tracker } from './tracker.js';

/** `start` may take 15 s before the kernel marks the extension failed: longer boots go on in the background. */
const BOOT_WAIT_MS = 10_000;
/** How often folders that may have appeared or vanished are looked at again. */
const RECHECK_MS = 30_000;

export default defineExtension({
  name: 'tracked-folders',
  version: '1.0.0',
  contract: '1.0',
  prefix: '/tracked-folders',
  routeGroups: [TAG],
  options: TrackedFoldersOptions,
  register(ctx) {
    const tracker = new Tracker(ctx, { watch: ctx.config.watch });
    ctx.provide(agentLocator, {
      locate: (reference) => tracker.locate(reference),
      list: () => tracker.index.all().map((entry) => entry.filePath),
    });
    // What the daemon itself creates or rewrites is indexed before its request answers (no watcher lag).
    ctx.provide(agentFileObservers, { written: (change) => tracker.written(change) });
    registerRoutes(ctx.http, ctx, tracker);
    let last = JSON.stringify(trackedOf(ctx.settings.current()));
    ctx.settings.onChange((settings) => {
      const next = JSON.stringify(trackedOf(settings));
      if (next === last) return;
      last = next;
      void tracker.reconcile().catch(() => {});
    });
    return {
      async start() {
        const boot = tracker
          .boot(ctx.config.autostart)
          .catch((error) => ctx.logger.error({ err: error }, 'tracked folders: boot failed'));
        tracker.recheckEvery(RECHECK_MS);
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([boot, new Promise((resolve) => (timer = setTimeout(resolve, BOOT_WAIT_MS)))]);
        clearTimeout(timer);
      },
      stop: () => tracker.stop(),
    };
  },
});

function trackedOf(settings: { trackedFolders?: string[]; maxScanDepth?: number }) {
  return [settings.trackedFolders ?? [], settings.maxScanDepth ?? null];
}
