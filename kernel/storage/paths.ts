/**
 * Where backups and restored files may go. Paths are the owner's choice (the routes take the owner's
 * token) with two rules held by construction, on real paths (symbolic links resolved):
 * - never inside the daemon's sandbox tree (`<data dir>/sandbox`, which holds every agent's work folder:
 *   an agent's commands could read or replace a copy there);
 * - never over an existing file (files are linked into place, which fails when the name exists).
 */
import { existsSync, mkdirSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { backupPathRefused, backupTargetExists, folderMissing, pathNotAbsolute } from './errors.js';

/** A backup file's name: `<agent id>-<UTC time to the millisecond>.agt`, `.sealed` appended when sealed. */
export function backupName(agentId: string, sealed: boolean, now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('.', '');
  return `${agentId}-${stamp}.agt${sealed ? '.sealed' : ''}`;
}

/** Names of scheduled copies of one agent (the retention of `keep` removes only these). */
export function isBackupOf(agentId: string, name: string): boolean {
  if (!name.startsWith(`${agentId}-`)) return false;
  return /^\d{8}T\d{9}Z\.agt(\.sealed)?$/.test(name.slice(agentId.length + 1));
}

/** The real path of `path`, resolving as much of it as exists (the rest appended as given). */
function realish(path: string): string {
  let existing = path;
  const rest: string[] = [];
  while (!existsSync(existing)) {
    rest.unshift(basename(existing));
    const parent = dirname(existing);
    if (parent === existing) break;
    existing = parent;
  }
  return join(realpathSync(existing), ...rest);
}

function within(child: string, parent: string): boolean {
  const below = relative(parent, child);
  return below === '' || (!below.startsWith(`..${sep}`) && below !== '..' && !isAbsolute(below));
}

/** Refuses a path inside the daemon's sandbox tree (agents' work folders). */
export function assertOutsideSandbox(dataDir: string, path: string): void {
  const real = realish(path);
  const sandbox = realish(join(dataDir, 'sandbox'));
  if (within(real, sandbox))
    throw backupPathRefused(path, "inside the daemon's sandbox folder, where agents' work folders are");
}

/**
 * Where a copy goes when the owner names a place (`agt backup --to`, `agt restore --to`), one rule for
 * both: a path ending in `/` or an existing folder is a folder (the copy is named `name` there; a missing
 * folder is made, 0700, when its parent exists); any other path is the file itself, in a folder that
 * must exist. A missing parent is refused naming it, never guessed at.
 */
export function placeCopy(field: string, given: string, name: string): string {
  if (!isAbsolute(given)) throw pathNotAbsolute(field, given);
  const folder = given.endsWith('/') || (existsSync(given) && statSync(given).isDirectory());
  if (!folder) {
    if (!existsSync(dirname(given))) throw folderMissing(given);
    return resolve(given);
  }
  const dir = resolve(given);
  if (!existsSync(dir)) {
    if (!existsSync(dirname(dir))) throw folderMissing(given);
    mkdirSync(dir, { mode: 0o700 });
  }
  return join(dir, name);
}

/** The file a backup is written to: `given` placed by {@link placeCopy}; absent: `defaultDir` (created 0700). */
export function backupTarget(dataDir: string, given: string | undefined, defaultDir: string, name: string): string {
  let target: string;
  if (given === undefined) {
    mkdirSync(defaultDir, { recursive: true, mode: 0o700 });
    target = join(defaultDir, name);
  } else {
    target = placeCopy('path', given, name);
  }
  assertOutsideSandbox(dataDir, target);
  if (existsSync(target)) throw backupTargetExists(target);
  return target;
}
