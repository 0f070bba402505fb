/**
 * The folder walk: `.agt` files under one tracked folder, at most `maxDepth` folder levels below it.
 * Never blocks the event loop: every directory is read asynchronously in one call (`readdir` with file
 * types, so no `stat` per entry), its entries are sorted out synchronously, and the walk yields to other
 * work once it has run for {@link SLICE_MS} since the event loop last had a turn (a time budget, not a
 * count of entries: a slow disk or a loaded machine does not stretch a slice). It never leaves the
 * folder: symbolic links are not followed, and each file found must have a real path inside the
 * folder's real path (a bind mount or a link swapped in during the walk cannot lead it elsewhere).
 * Dot-folders and `node_modules` are skipped.
 */
import type { Dirent } from 'node:fs';
import { lstat, readdir, realpath } from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';

/** The longest synchronous stretch of a walk (the watcher's too) before it yields to the event loop. */
export const SLICE_MS = 4;

/**
 * A time budget for synchronous work between event-loop turns: `due()` says when the slice is used up
 * (then `await next()`); `restart()` after an await that went through the event loop (file I/O).
 */
export class TimeSlice {
  private since = performance.now();
  constructor(private readonly budgetMs = SLICE_MS) {}
  due(): boolean {
    return performance.now() - this.since >= this.budgetMs;
  }
  restart(): void {
    this.since = performance.now();
  }
  async next(): Promise<void> {
    await yieldToEventLoop();
    this.restart();
  }
}

/** Bounds of one folder's walk: huge trees are cut short (the result says so), never walked forever. */
export const SCAN_LIMITS = { maxEntries: 200_000, maxAgentFiles: 5_000 };

export interface FolderScan {
  /** Real paths of the `.agt` files found: depth-first, sorted by name within each folder. */
  files: string[];
  /** A bound stopped the walk early. */
  truncated: boolean;
}

/** Names never descended into (besides dot-folders). */
export const SKIPPED_NAMES = new Set(['node_modules']);

/** Folders below a tracked folder that scans and the watcher skip. */
export const skippedFolderName = (name: string) => name.startsWith('.') || SKIPPED_NAMES.has(name);

/** True when `path` is `root` or inside it (both real paths). */
export const isInside = (root: string, path: string) =>
  path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);

/** Folder levels from `root` down to `path` (inside it): 0 for the root itself. */
export const levelsBelow = (root: string, path: string) => (path === root ? 0 : relative(root, path).split(sep).length);

/**
 * True when a walk of `rootReal` down to `maxDepth` levels reaches the file `filePath` (a real path):
 * inside it, in a folder at most `maxDepth` levels below, through no skipped folder.
 */
export function walkReaches(rootReal: string, filePath: string, maxDepth: number): boolean {
  if (filePath === rootReal || !isInside(rootReal, filePath)) return false;
  const dir = dirname(filePath);
  if (dir === rootReal) return true;
  const below = relative(rootReal, dir).split(sep);
  return below.length <= maxDepth && !below.some(skippedFolderName);
}

/** The entry's kind without following a link; null when the listing does not say (then `lstat`). */
function listedKind(entry: Dirent): 'file' | 'dir' | 'other' | null {
  if (entry.isSymbolicLink()) return 'other';
  if (entry.isFile()) return 'file';
  if (entry.isDirectory()) return 'dir';
  if (entry.isBlockDevice() || entry.isCharacterDevice() || entry.isFIFO() || entry.isSocket()) return 'other';
  return null;
}

async function statKind(path: string): Promise<'file' | 'dir' | 'other'> {
  try {
    const stat = await lstat(path);
    return stat.isFile() ? 'file' : stat.isDirectory() ? 'dir' : 'other';
  } catch {
    return 'other';
  }
}

/**
 * Walks `rootReal` (the tracked folder's real path). `shouldStop` is checked between directories
 * (the extension stopping, a newer scan superseding this one). A directory is read whole (as the
 * watcher reads it); `maxEntries` bounds the walk, not one listing.
 */
export async function scanFolder(
  rootReal: string,
  maxDepth: number,
  shouldStop: () => boolean = () => false,
  limits = SCAN_LIMITS,
): Promise<FolderScan> {
  const files: string[] = [];
  let entries = 0;
  const slice = new TimeSlice();
  const stack: Array<{ dir: string; depth: number }> = [{ dir: rootReal, depth: 0 }];
  while (stack.length > 0) {
    if (shouldStop()) return { files, truncated: true };
    const { dir, depth } = stack.pop()!;
    const below: string[] = [];
    const here: string[] = [];
    let listing: Dirent[];
    try {
      listing = await readdir(dir, { withFileTypes: true });
    } catch {
      continue; // unreadable, vanished or not a folder
    }
    slice.restart();
    for (const entry of listing) {
      if (++entries > limits.maxEntries) return { files, truncated: true };
      if (slice.due()) await slice.next();
      const path = join(dir, entry.name);
      let kind = listedKind(entry);
      if (kind === null) {
        kind = await statKind(path);
        slice.restart();
      }
      if (kind === 'dir' && depth < maxDepth && !skippedFolderName(entry.name)) below.push(path);
      else if (kind === 'file' && entry.name.endsWith('.agt')) {
        const real = await realpath(path).catch(() => null);
        slice.restart();
        // The link check above covers files; this covers what listing cannot see (mounts, races).
        if (real === null || !isInside(rootReal, real)) continue;
        if (files.length + here.length >= limits.maxAgentFiles)
          return { files: [...files, ...here.sort()], truncated: true };
        here.push(real);
      }
    }
    files.push(...here.sort());
    below.sort((a, b) => basename(b).localeCompare(basename(a)));
    for (const path of below) stack.push({ dir: path, depth: depth + 1 });
    if (slice.due()) await slice.next();
  }
  return { files, truncated: false };
}
