/** The tracked folders as settings hold them (`trackedFolders`, `maxScanDepth`) and their real paths. */
import { lstatSync, realpathSync, type Stats } from 'node:fs';
import { access, lstat, realpath, stat } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { DEFAULT_MAX_SCAN_DEPTH, type Settings } from '@agt/contracts';
import { isInside } from './scan.js';

export interface TrackedSettings {
  /** As written in settings, without duplicates, in order. */
  folders: string[];
  maxScanDepth: number;
}

export function trackedSettings(settings: Readonly<Settings>): TrackedSettings {
  const folders = [...new Set((settings.trackedFolders ?? []).filter((folder) => isAbsolute(folder)))];
  return { folders, maxScanDepth: settings.maxScanDepth ?? DEFAULT_MAX_SCAN_DEPTH };
}

/** The real path of an existing directory, else null (missing, not a directory, unreadable). */
export async function realDirectory(path: string): Promise<string | null> {
  try {
    const real = await realpath(path);
    return (await stat(real)).isDirectory() ? real : null;
  } catch {
    return null;
  }
}

/** Something exists at `path`. */
export const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/** A regular file (not a link) whose real path is itself and inside `folder` (a real path). */
export async function isOwnFile(filePath: string, folder: string): Promise<boolean> {
  const [info, real] = await Promise.all([lstat(filePath).catch(() => null), realpath(filePath).catch(() => null)]);
  return ownFileSeen(info, real, filePath, folder);
}

/**
 * {@link isOwnFile} without the thread pool, for a file the daemon itself has just written in the same
 * request (a create answers only once the index holds it): the daemon's own writes to that path were
 * synchronous a moment ago, so two more cheap calls block nothing new, and the two promise round trips
 * were ~1 ms of each create's profile. The same checks.
 */
export function isOwnFileNow(filePath: string, folder: string): boolean {
  try {
    return ownFileSeen(
      lstatSync(filePath, { throwIfNoEntry: false }) ?? null,
      realpathSync.native(filePath),
      filePath,
      folder,
    );
  } catch {
    return false;
  }
}

/** The checks of {@link isOwnFile} on what `lstat` and `realpath` gave (null: the call failed). */
function ownFileSeen(info: Stats | null, real: string | null, filePath: string, folder: string): boolean {
  return info?.isFile() === true && real === filePath && isInside(folder, real);
}
