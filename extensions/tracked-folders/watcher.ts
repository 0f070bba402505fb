/**
 * The watcher of one tracked folder (chokidar 4: recursive watching with the rename and editor-save
 * cases `fs.watch` gets wrong on Linux before Node 22). It reports `.agt` files added, changed and
 * removed, down to `maxDepth` folder levels, never following a symbolic link and skipping dot-folders
 * and `node_modules`; other files are not watched at all (a folder of thousands of documents costs one
 * watch per folder, not per file). Files are reported once their size stopped changing, so a file being
 * copied in is read whole.
 */
import { watch, type FSWatcher } from 'chokidar';
import type { Stats } from 'node:fs';
import { relative, sep } from 'node:path';
import { skippedFolderName } from './scan.js';

export type WatchChange = 'added' | 'changed' | 'removed';

export interface FolderWatcher {
  /** Resolves once the initial walk of the watcher finished (events before it are not reported). */
  ready: Promise<void>;
  close(): Promise<void>;
}

/** How long a file's size must stay the same before `added`/`changed` is reported. */
export const STABLE_MS = 150;

export function watchFolder(rootReal: string, maxDepth: number, onChange: (change: WatchChange, filePath: string) => void, onError: (error: unknown) => void): FolderWatcher {
  const ignored = (path: string, stats?: Stats) => {
    const inner = relative(rootReal, path);
    if (inner === '' || inner.startsWith('..')) return false;
    const parts = inner.split(sep);
    const last = parts[parts.length - 1]!;
    // Folders: every segment below the root is checked (a dot-folder's contents never get here anyway).
    if (parts.slice(0, -1).some(skippedFolderName)) return true;
    if (stats?.isDirectory()) return skippedFolderName(last);
    if (stats?.isFile()) return !last.endsWith('.agt');
    return false;
  };
  const watcher: FSWatcher = watch(rootReal, {
    followSymlinks: false,
    depth: maxDepth,
    ignoreInitial: true,
    ignored,
    awaitWriteFinish: { stabilityThreshold: STABLE_MS, pollInterval: 50 },
  });
  const report = (change: WatchChange) => (path: string) => {
    if (path.endsWith('.agt')) onChange(change, path);
  };
  watcher.on('add', report('added'));
  watcher.on('change', report('changed'));
  watcher.on('unlink', report('removed'));
  watcher.on('error', onError);
  const ready = new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  return { ready, close: () => watcher.close() };
}
