/**
 * The disk use of a folder tree as `du` counts it: the blocks allocated to every entry, the folder itself
 * included (a sparse file counts what it occupies; a directory's own blocks grow with its entries).
 * For the work-folder bound (work-usage.ts), on a tree an agent shaped, so it is built not to stall the
 * daemon nor to be led elsewhere:
 * - asynchronous: each directory is read in chunks (`opendir`) and its entries `lstat`ed a few at a time
 *   on libuv's thread pool; the event loop only adds numbers between them;
 * - links are never followed: `lstat` only, and a directory is entered only when `lstat` said it is one;
 * - bounded: the walk stops as soon as the sum passes `stopAbove` (the answer is known then) or after
 *   `maxEntries` entries.
 * Hard links count once per name (more, never less, than the disk holds).
 */
import type { Dirent, Stats } from 'node:fs';
import { chmod, lstat, opendir } from 'node:fs/promises';
import { join } from 'node:path';

export interface FolderSize {
  /** Bytes allocated (`st_blocks` × 512); a lower bound when `complete` is false. */
  bytes: number;
  /** Entries counted, the folder itself included. */
  entries: number;
  /** False when the walk stopped early: past `stopAbove`, or at `maxEntries`. */
  complete: boolean;
  /** True when it stopped at `maxEntries`. */
  tooManyEntries: boolean;
}

/** `lstat`s in flight at once: enough to keep the thread pool busy, few enough to leave it to others. */
const PARALLEL = 16;

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException).code;
}

/** `lstat`, or undefined for an entry gone meanwhile. */
async function lstatIfThere(path: string): Promise<Stats | undefined> {
  try {
    return await lstat(path);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Opens a directory of the tree for reading. One the daemon cannot read (a command as the daemon's
 * own user may `chmod 000` its folders) is given its owner's read and search bits back, once.
 */
async function openDirectory(path: string, stats: Stats) {
  try {
    return await opendir(path, { bufferSize: 64 });
  } catch (error) {
    if (errorCode(error) === 'ENOENT' || errorCode(error) === 'ENOTDIR') return undefined;
    if (errorCode(error) !== 'EACCES') throw error;
    await chmod(path, (stats.mode & 0o7777) | 0o700);
    return opendir(path, { bufferSize: 64 });
  }
}

/** The disk use of the tree at `root`; a `root` that does not exist uses nothing. */
export async function folderSize(root: string, stopAbove: number, maxEntries: number): Promise<FolderSize> {
  const size: FolderSize = { bytes: 0, entries: 0, complete: true, tooManyEntries: false };
  const directories: { path: string; stats: Stats }[] = [];
  /** Counts one entry; false once the walk must stop. */
  const count = (path: string, stats: Stats | undefined): boolean => {
    if (stats) {
      size.bytes += stats.blocks * 512;
      size.entries += 1;
      if (stats.isDirectory()) directories.push({ path, stats });
    }
    if (size.entries >= maxEntries) size.tooManyEntries = true;
    if (size.bytes > stopAbove || size.tooManyEntries) size.complete = false;
    return size.complete;
  };
  if (!count(root, await lstatIfThere(root))) return size;
  // Depth first: the stack holds folders seen but not read yet, at most `maxEntries` of them.
  for (let next = directories.pop(); next; next = directories.pop()) {
    const dir = await openDirectory(next.path, next.stats);
    if (!dir) continue;
    let batch: Dirent[] = [];
    const flush = async (): Promise<boolean> => {
      const paths = batch.map((entry) => join(next!.path, entry.name));
      batch = [];
      const stats = await Promise.all(paths.map(lstatIfThere));
      return stats.every((entry, i) => count(paths[i]!, entry));
    };
    // Leaving the loop early (a stop, an error) closes the directory.
    for await (const entry of dir) {
      batch.push(entry);
      if (batch.length === PARALLEL && !(await flush())) return size;
    }
    if (!(await flush())) return size;
  }
  return size;
}
