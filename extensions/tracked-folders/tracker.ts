/**
 * The tracked folders at work: their index of agent files (kept by walks and the watchers), the boot
 * autostart, finding agents by id, handle or name for the kernel's agent locator, and what a watcher
 * reports: a new reviewed `autostart` file starts, a loaded agent whose file is deleted is unloaded
 * (reason `file_removed`), a file moved within the tracked folders is found at its new path (and an
 * agent that was running is started again from there).
 *
 * All changes to the index run one after another on one queue, so a walk and a watcher event never
 * interleave halfway.
 */
import type { AgentFileChange } from '@agt/contracts';
import type { AutostartReport } from '@agt/contracts';
import type { ExtensionContext } from '@agt/contracts';
import { AgentIndex } from './agent-index.js';
import { exists, isOwnFile, isOwnFileNow, realDirectory, trackedSettings, type TrackedSettings } from './folders.js';
import { isInside, scanFolder, walkReaches } from './scan.js';
import { watchFolder, type FolderWatcher, type WatchChange } from './watcher.js';

/** An unlink followed by an add of a file with the same agent id within this time is a move. */
export const MOVE_WINDOW_MS = 10_000;

interface FolderState {
  /** As written in settings. */
  path: string;
  /** Its real path, null when it does not exist (or is not a directory). */
  real: string | null;
  truncated: boolean;
  /** An earlier tracked folder is the same folder: it is not walked or watched twice. */
  coveredBy: string | null;
  /** Walked and watched as a folder of its own. */
  active: boolean;
  watcher?: FolderWatcher;
}

export interface TrackerOptions {
  watch: boolean;
}

type Ctx = Pick<ExtensionContext, 'settings' | 'agents' | 'launcher' | 'bus' | 'logger'>;

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

export class Tracker {
  readonly index: AgentIndex;
  private folders = new Map<string, FolderState>();
  private depth = -1;
  private queue: Promise<unknown> = Promise.resolve();
  private stopped = false;
  private readonly removed = new Map<string, { from: string; wasLoaded: boolean; at: number }>();
  /** Files the daemon created and announced itself: the watcher's later `added` for them is not news. */
  private readonly announced = new Map<string, { agentId: string; at: number }>();
  /** Settles once the first walk of every folder is over. */
  readonly ready: Promise<void>;
  private markReady!: () => void;
  private recheckTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ctx: Ctx,
    private readonly options: TrackerOptions,
  ) {
    this.index = new AgentIndex(ctx.launcher);
    this.ready = new Promise((resolve) => (this.markReady = resolve));
  }

  /** Runs `work` after everything queued before it; its failure is logged and rethrown to the caller only. */
  private enqueue<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(() => (this.stopped ? (undefined as T) : work()));
    this.queue = run.catch((error) => this.ctx.logger.error({ err: error }, 'tracked folders: work failed'));
    return run;
  }

  /** The first walk of every folder, then the boot autostart of what it found. */
  async boot(autostart: boolean): Promise<AutostartReport | null> {
    await this.reconcile();
    this.markReady();
    if (!autostart || this.stopped) return null;
    return this.enqueue(async () => {
      const report = await this.ctx.launcher.autostart(this.index.all().map((entry) => entry.filePath));
      const reasons = new Map<string, number>();
      for (const { reason } of report.skipped) reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
      const skipped = [...reasons].map(([reason, count]) => `${count} ${reason}`).join(', ');
      this.ctx.logger.info(
        { started: report.started, skipped: report.skipped, failed: report.failed },
        `tracked folders autostart: ${report.started.length} started, ${report.skipped.length} skipped${skipped ? ` (${skipped})` : ''}, ${report.failed.length} failed`,
      );
      this.ctx.bus.emit('tracked.autostarted', { agentId: null, payload: report });
      return report;
    });
  }

  /** Brings folders, walks and watchers in line with the settings (after a change, or at boot). */
  reconcile(): Promise<void> {
    return this.enqueue(async () => {
      const wanted: TrackedSettings = trackedSettings(this.ctx.settings.current());
      const rewalk = wanted.maxScanDepth !== this.depth;
      this.depth = wanted.maxScanDepth;
      for (const [path, state] of this.folders) {
        if (wanted.folders.includes(path) && !rewalk) continue;
        await state.watcher?.close();
        this.folders.delete(path);
      }
      const ordered = new Map<string, FolderState>();
      for (const path of wanted.folders) {
        ordered.set(
          path,
          this.folders.get(path) ?? {
            path,
            real: await realDirectory(path),
            truncated: false,
            coveredBy: null,
            active: false,
          },
        );
      }
      this.folders = ordered;
      const states = [...ordered.values()];
      for (const state of states) state.coveredBy = this.coveringFolder(state, states);
      for (const state of states) {
        if (this.stopped) return;
        if (state.coveredBy !== null || state.real === null) {
          // Its files are the covering folder's: walked and watched once, there.
          await state.watcher?.close();
          state.watcher = undefined;
          state.active = false;
          continue;
        }
        if (state.active) continue;
        state.active = true;
        await this.walk(state);
        // Waiting for the watcher's first walk: a file added once a listing answered is reported.
        if (this.options.watch && !this.stopped) await this.watch(state, state.real);
      }
      this.index.retain(new Set(states.filter((state) => state.active).map((state) => state.real!)));
    });
  }

  /**
   * The earlier folder (as configured) with the same real path as `state` (the same folder written two
   * ways, or through a link): it is walked and watched once. Nested folders are both walked (each to
   * its own depth); the index holds each file once, by real path.
   */
  private coveringFolder(state: FolderState, states: FolderState[]): string | null {
    if (state.real === null) return null;
    const first = states.find((other) => other.real === state.real);
    return first !== undefined && first !== state ? first.path : null;
  }

  private async walk(state: FolderState): Promise<void> {
    if (state.real === null) return;
    const scan = await scanFolder(state.real, this.depth, () => this.stopped);
    state.truncated = scan.truncated;
    await this.index.sync(state.real, scan.files, () => this.stopped);
  }

  private watch(state: FolderState, real: string): Promise<void> {
    state.watcher = watchFolder(
      real,
      this.depth,
      (change, filePath) => void this.enqueue(() => this.changed(change, filePath, state)).catch(() => {}),
      (error) => this.ctx.logger.warn({ err: error, folder: state.path }, 'tracked folders: watcher error'),
    );
    return state.watcher.ready;
  }

  /** Every folder walked again (when no watcher keeps the index current). */
  private rewalkAll(): Promise<void> {
    return this.enqueue(async () => {
      for (const state of this.folders.values()) await this.walk(state);
    });
  }

  /** Agent files whose id, handle or name is `reference` (case-insensitive): the agent locator. */
  async locate(reference: string): Promise<string[]> {
    await this.ready;
    await this.queue;
    const found = this.index.match(reference);
    if (found.length > 0 || this.options.watch) return found;
    await this.rewalkAll();
    return this.index.match(reference);
  }

  /** Waits for the first walk and for queued watcher events: what listings should reflect. */
  async settled(): Promise<void> {
    await this.ready;
    await this.queue;
  }

  listFolders(): Array<{ path: string; exists: boolean; agentCount: number; truncated: boolean }> {
    return [...this.folders.values()].map((state) => ({
      path: state.path,
      exists: state.real !== null,
      agentCount:
        state.real === null
          ? 0
          : this.index.all().filter((entry) => entry.summary !== null && isInside(state.real!, entry.filePath)).length,
      truncated: state.coveredBy === null ? state.truncated : (this.folders.get(state.coveredBy)?.truncated ?? false),
    }));
  }

  get maxScanDepth(): number {
    return trackedSettings(this.ctx.settings.current()).maxScanDepth;
  }

  /** The folder (as configured) whose real path holds `filePath`. */
  private folderOf(real: string): string {
    return [...this.folders.values()].find((state) => state.active && state.real === real)?.path ?? real;
  }

  private emit(
    change: 'added' | 'changed' | 'moved' | 'removed',
    filePath: string,
    folderReal: string,
    extra: { from?: string; agentId?: string } = {},
  ): void {
    this.ctx.bus.emit('tracked.changed', {
      agentId: extra.agentId ?? null,
      payload: { change, filePath, folder: this.folderOf(folderReal), ...extra },
    });
  }

  private loadedAt(filePath: string) {
    return this.ctx.agents.list().find((agent) => agent.filePath === filePath);
  }

  /**
   * The daemon wrote an agent file (the `agt.agent-file-written` point). The index is brought up to date
   * on the queue, ahead of every later read (listings, the locator and walks all wait for the queue), so
   * what the daemon wrote is visible to the next request. A created file is awaited (and announced as
   * `tracked.changed` `added` before the create answers); a config change is only queued, since it may
   * come from a tool call inside a turn that queued work (an unload) could be waiting for.
   */
  written(change: Readonly<AgentFileChange>): Promise<void> | void {
    if (change.change !== 'created' && change.change !== 'changed') return; // kinds added later are not ours to guess
    const work = this.enqueue(() => this.ownWrite(change));
    if (change.change === 'created') return work;
    work.catch(() => {});
  }

  /**
   * Drops what is older than {@link MOVE_WINDOW_MS}: removals that can no longer be moves, creations the watcher never
   * reported.
   */
  private forgetOld(): void {
    const now = Date.now();
    for (const [id, gone] of this.removed) if (now - gone.at > MOVE_WINDOW_MS) this.removed.delete(id);
    for (const [path, own] of this.announced) if (now - own.at > MOVE_WINDOW_MS) this.announced.delete(path);
  }

  private async ownWrite(change: Readonly<AgentFileChange>): Promise<void> {
    // The active folder whose walk reaches the file: only what a walk would find is indexed.
    const state = [...this.folders.values()].find(
      (folder) => folder.active && folder.real !== null && walkReaches(folder.real, change.filePath, this.depth),
    );
    if (!state?.real || !change.filePath.endsWith('.agt') || !isOwnFileNow(change.filePath, state.real)) return;
    const entry = await this.index.refresh(change.filePath, state.real, true);
    if (change.change !== 'created' || !entry) return;
    this.forgetOld();
    if (this.options.watch) this.announced.set(change.filePath, { agentId: change.agentId, at: Date.now() });
    this.emit('added', change.filePath, state.real, { agentId: entry.summary?.id ?? change.agentId });
  }

  /** One watcher report, on the queue. */
  private async changed(change: WatchChange, filePath: string, state: FolderState): Promise<void> {
    const folder = state.real;
    if (folder === null) return;
    this.forgetOld();
    const own = this.announced.get(filePath);
    this.announced.delete(filePath);
    if (change === 'removed') return this.fileRemoved(filePath, folder);
    // A loaded agent's file changes at every checkpoint (with many agents loaded, every few seconds):
    // known and indexed, it needs none of the file system checks below (same outcome as further down).
    if (change === 'changed' && this.index.get(filePath)?.summary && this.loadedAt(filePath)) return;
    // chokidar reports a link as a file of its own: only a regular file inside the folder counts.
    if (!(await isOwnFile(filePath, folder))) return;
    if (change === 'added' && own) {
      // The daemon created it and said so already: read it again (it may have changed since), no news.
      const entry = await this.index.refresh(filePath, folder, true);
      if (entry?.summary?.id === own.agentId) return;
    }
    // A file that could not be read before (a copy still under way when it was first seen) is new now.
    if (change === 'changed' && !this.index.get(filePath)?.summary) change = 'added';
    if (change === 'changed') {
      // A loaded agent's file changes at every checkpoint: the kernel announces its config changes itself.
      if (this.loadedAt(filePath)) return;
      const entry = await this.index.refresh(filePath, folder, true);
      if (entry) this.emit('changed', filePath, folder, entry.summary ? { agentId: entry.summary.id } : {});
      return;
    }
    const entry = await this.index.refresh(filePath, folder, true);
    if (!entry) return;
    const summary = entry.summary;
    if (summary === null) return this.emit('added', filePath, folder);
    const gone = this.removed.get(summary.id);
    const stale = this.ctx.agents
      .list()
      .find((agent) => agent.id === summary.id && agent.filePath !== null && agent.filePath !== filePath);
    if (gone || (stale && !(await exists(stale.filePath!)))) {
      // Moved: the unlink came first (gone), or the add did and the loaded agent's old path is empty now.
      this.removed.delete(summary.id);
      const from = gone?.from ?? stale!.filePath!;
      let wasLoaded = gone?.wasLoaded ?? false;
      if (stale) {
        wasLoaded = true;
        await this.ctx.launcher.unload(summary.id, 'file_moved');
      }
      this.emit('moved', filePath, folder, { from, agentId: summary.id });
      if (wasLoaded) await this.startAgain(filePath);
      return;
    }
    this.emit('added', filePath, folder, { agentId: summary.id });
    if (!summary.autostart || this.loadedAt(filePath)) return;
    const report = await this.ctx.launcher.autostart([filePath]);
    const outcome = report.started.length
      ? 'started'
      : report.skipped[0]
        ? `skipped (${report.skipped[0].reason})`
        : `failed: ${report.failed[0]?.error}`;
    this.ctx.logger.info({ filePath, agentId: summary.id }, `tracked folders: new agent file ${filePath}: ${outcome}`);
  }

  private async fileRemoved(filePath: string, folder: string): Promise<void> {
    const entry = this.index.remove(filePath);
    const loaded = this.loadedAt(filePath);
    const agentId = loaded?.id ?? entry?.summary?.id;
    if (agentId) this.removed.set(agentId, { from: filePath, wasLoaded: loaded !== undefined, at: Date.now() });
    if (loaded) {
      this.ctx.logger.warn(
        { agentId: loaded.id, filePath },
        'tracked folders: the file of a loaded agent was removed; unloading it',
      );
      await this.ctx.launcher
        .unload(loaded.id, 'file_removed')
        .catch((error) => this.ctx.logger.error({ err: error, agentId: loaded.id }, 'tracked folders: unload failed'));
    }
    this.emit('removed', filePath, folder, agentId ? { agentId } : {});
  }

  private async startAgain(filePath: string): Promise<void> {
    try {
      await this.ctx.launcher.start(filePath);
    } catch (error) {
      this.ctx.logger.warn(
        { err: error, filePath },
        `tracked folders: the moved agent could not be started again: ${message(error)}`,
      );
    }
  }

  /**
   * Folders that appeared, vanished or were replaced since they were last walked (a tracked folder made
   * after the daemon started, a removable drive) are walked and watched again; the rest is left alone.
   */
  recheck(): Promise<void> {
    return this.enqueue(async () => {
      for (const [path, state] of this.folders) {
        if ((await realDirectory(path)) === state.real) continue;
        await state.watcher?.close();
        this.folders.delete(path);
      }
    }).then(() => this.reconcile());
  }

  /** Calls {@link recheck} every `everyMs` until {@link stop}. */
  recheckEvery(everyMs: number): void {
    this.recheckTimer = setInterval(() => void this.recheck().catch(() => {}), everyMs);
    this.recheckTimer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.recheckTimer);
    this.stopped = true;
    this.markReady();
    const watchers = [...this.folders.values()].map((state) => state.watcher?.close());
    this.folders.clear();
    await Promise.allSettled(watchers);
    await this.queue.catch(() => {});
  }
}
