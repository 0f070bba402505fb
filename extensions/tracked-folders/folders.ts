/** The tracked folders as settings hold them (`trackedFolders`, `maxScanDepth`) and their real paths. */
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
export const exists = (path: string) => access(path).then(() => true, () => false);

/** A regular file (not a link) whose real path is itself and inside `folder` (a real path). */
export async function isOwnFile(filePath: string, folder: string): Promise<boolean> {
  const [info, real] = await Promise.all([lstat(filePath).catch(() => null), realpath(filePath).catch(() => null)]);
  return info !== null && info.isFile() && real === filePath && isInside(folder, real);
}
