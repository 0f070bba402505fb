/**
 * The watcher of one tracked folder: `.agt` files added, changed and removed, down to `maxDepth`
 * folder levels, never following a symbolic link, skipping dot-folders and `node_modules`.
 *
 * Built on `fs.watch` of each folder (inotify on Linux) rather than chokidar: measured here on a tree
 * of 10,000 files, chokidar 4's initial walk held the event loop for 60–380 ms at a time, where this
 * walk (asynchronous, yielding after SLICE_MS of work, scan.ts) stays under ~20 ms. `fs.watch`'s
 * known gaps are handled by never trusting an event's file name: any event on a folder re-reads that
 * folder (coalesced, and read again when events arrived meanwhile) and compares it with what was
 * there, so renames, moves between folders, editor saves (write to a temporary file, rename over),
 * folders moved in or out, and bursts all come out as added / changed / removed. A file is reported
 * once its size and modification time stayed the same for {@link STABLE_MS} (a copy in progress is
 * read whole). A folder that cannot be watched (inotify limit) is logged and left unwatched.
 */
import { watch, type Dirent, type FSWatcher } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { isInside, skippedFolderName, TimeSlice } from './scan.js';

export type WatchChange = 'added' | 'changed' | 'removed';

export interface FolderWatcher {
  /** Resolves once the folders are read and watched (changes before that are not reported). */
  ready: Promise<void>;
  close(): Promise<void>;
}

/** How long a file's size and time must stay the same before `added`/`changed` is reported. */
export const STABLE_MS = 150;
/** Events on one folder within this time are handled by one read of it. */
const COALESCE_MS = 50;
/**
 * Folders watched below one tracked folder at most (each costs an inotify watch, a per-user kernel
 * resource): someone tracking `/` or a home folder gets the first ones watched and a logged warning.
 */
export const MAX_WATCHED_FOLDERS = 4_000;

/**
 * SQLite's files beside an agent file (`x.agt-wal`, `x.agt-shm`, `x.agt-journal`). A running agent
 * writes its WAL on every turn; re-reading its folder for that found nothing (the read looks at `.agt`
 * files and folders) and was up to 10% of a turn's profile. A folder named like one is still found at
 * the next read of its parent.
 */
function sqliteSidecar(name: string | Buffer | null): boolean {
  return typeof name === 'string' && /\.agt-(wal|shm|journal)$/.test(name);
}

interface FileState {
  mtimeMs: number;
  size: number;
  /** Reported as present (an `added` went out). */
  reported: boolean;
  timer?: NodeJS.Timeout;
}

interface DirState {
  depth: number;
  watcher?: FSWatcher;
  timer?: NodeJS.Timeout;
  reading: boolean;
  dirty: boolean;
}

export function watchFolder(
  rootReal: string,
  maxDepth: number,
  onChange: (change: WatchChange, filePath: string) => void,
  onError: (error: unknown) => void,
): FolderWatcher {
  const dirs = new Map<string, DirState>();
  const files = new Map<string, FileState>();
  let closed = false;
  let initial = true;

  const parentOf = (path: string) => path.slice(0, path.lastIndexOf(sep)) || sep;

  /** Reports once the file held still for STABLE_MS; `change` is what it will be reported as. */
  const settle = (path: string, state: FileState) => {
    clearTimeout(state.timer);
    state.timer = setTimeout(async () => {
      state.timer = undefined;
      if (closed) return;
      const info = await lstat(path).catch(() => null);
      if (closed || files.get(path) !== state) return;
      if (info === null || !info.isFile()) return; // gone: the folder's next read says so
      if (info.mtimeMs !== state.mtimeMs || info.size !== state.size) {
        Object.assign(state, { mtimeMs: info.mtimeMs, size: info.size });
        return settle(path, state);
      }
      const change = state.reported ? 'changed' : 'added';
      state.reported = true;
      onChange(change, path);
    }, STABLE_MS);
    state.timer.unref?.();
  };

  const dropFile = (path: string) => {
    const state = files.get(path);
    if (!state) return;
    clearTimeout(state.timer);
    files.delete(path);
    if (state.reported) onChange('removed', path);
  };

  const dropDir = (dir: string) => {
    for (const [path, state] of dirs) {
      if (!isInside(dir, path)) continue;
      state.watcher?.close();
      clearTimeout(state.timer);
      dirs.delete(path);
    }
    for (const path of [...files.keys()]) if (isInside(dir, path)) dropFile(path);
  };

  const schedule = (dir: string) => {
    const state = dirs.get(dir);
    if (!state || closed) return;
    if (state.reading) {
      state.dirty = true;
      return;
    }
    clearTimeout(state.timer);
    state.timer = setTimeout(() => void read(dir).catch(onError), COALESCE_MS);
    state.timer.unref?.();
  };

  /** Reads one folder: new, changed and vanished files and subfolders. */
  const read = async (dir: string): Promise<void> => {
    const state = dirs.get(dir);
    if (!state || closed) return;
    state.reading = true;
    state.dirty = false;
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      state.reading = false;
      // The folder itself went away (its parent's read drops it), or cannot be read now.
      if (dir !== rootReal) schedule(parentOf(dir));
      return;
    }
    const seenFiles = new Set<string>();
    const seenDirs = new Set<string>();
    // Awaits of file I/O (the folders below, lstat) give the event loop its turn: a new slice starts.
    const slice = new TimeSlice();
    for (const entry of entries) {
      if (closed) return;
      if (slice.due()) await slice.next();
      const path = join(dir, entry.name);
      if (entry.isSymbolicLink()) continue;
      if (entry.isDirectory()) {
        if (state.depth >= maxDepth || skippedFolderName(entry.name)) continue;
        seenDirs.add(path);
        if (!dirs.has(path)) {
          await add(path, state.depth + 1);
          slice.restart();
        }
        continue;
      }
      if (!entry.isFile() || !entry.name.endsWith('.agt')) continue;
      seenFiles.add(path);
      const info = await lstat(path).catch(() => null);
      slice.restart();
      if (info === null || !info.isFile()) continue;
      const known = files.get(path);
      if (known && known.mtimeMs === info.mtimeMs && known.size === info.size) continue;
      const fileState = known ?? { mtimeMs: info.mtimeMs, size: info.size, reported: initial };
      Object.assign(fileState, { mtimeMs: info.mtimeMs, size: info.size });
      files.set(path, fileState);
      if (!(initial && !known)) settle(path, fileState);
    }
    for (const path of [...files.keys()]) if (parentOf(path) === dir && !seenFiles.has(path)) dropFile(path);
    for (const path of [...dirs.keys()])
      if (parentOf(path) === dir && path !== dir && !seenDirs.has(path)) dropDir(path);
    state.reading = false;
    if (state.dirty) schedule(dir);
  };

  /** Starts watching a folder, then reads it (and, through the read, the folders below). */
  let capped = false;
  const add = async (dir: string, depth: number): Promise<void> => {
    if (dirs.size >= MAX_WATCHED_FOLDERS) {
      if (!capped)
        onError(
          new Error(
            `${rootReal}: more than ${MAX_WATCHED_FOLDERS} folders; ${dir} and the folders after it are not watched (they are still walked)`,
          ),
        );
      capped = true;
      return;
    }
    const state: DirState = { depth, reading: false, dirty: false };
    dirs.set(dir, state);
    try {
      state.watcher = watch(dir, { persistent: false }, (_event, name) => {
        if (!sqliteSidecar(name)) schedule(dir);
      });
      state.watcher.on('error', () => {
        // The folder was removed or became unreadable: its parent's read settles what is left.
        state.watcher?.close();
        if (dir !== rootReal) schedule(parentOf(dir));
      });
    } catch (error) {
      onError(new Error(`cannot watch ${dir}: ${(error as Error).message}`, { cause: error }));
    }
    await read(dir);
  };

  const ready = add(rootReal, 0)
    .catch(onError)
    .finally(() => {
      initial = false;
    });

  return {
    ready,
    async close() {
      closed = true;
      await ready.catch(() => {});
      for (const state of dirs.values()) {
        state.watcher?.close();
        clearTimeout(state.timer);
      }
      for (const state of files.values()) clearTimeout(state.timer);
      dirs.clear();
      files.clear();
    },
  };
}
