/**
 * The backup files in the backups folder (`GET /backups/files`, docs/backups.md): `<backups folder>/<agent
 * id>/<name>.agt[.sealed]`, one level of agent folders, nothing else. Symbolic links are not followed (a link
 * could name a file outside the folder), and a name must end in `.agt` or `.agt.sealed`; sealed is read from the
 * file's first bytes, not its name.
 */
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { isSealedFile } from './seal.js';

export interface BackupFileEntry {
  /** The file's absolute path (what `POST /agents/restore` takes as `from`). */
  path: string;
  name: string;
  /** The folder it is in: the agent id of its copies. */
  agentId: string;
  bytes: number;
  modifiedAt: string;
  sealed: boolean;
}

const NAME = /\.agt(\.sealed)?$/;
/** Agent ids are `agt-<uuid>`-like; a folder named otherwise is not an agent's. */
const AGENT_FOLDER = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

/** Every backup file of the folder, newest first. A folder that does not exist has none. */
export async function listBackupFiles(root: string): Promise<BackupFileEntry[]> {
  const folders = await readdir(root, { withFileTypes: true }).catch(() => []);
  const entries: BackupFileEntry[] = [];
  for (const folder of folders) {
    if (!folder.isDirectory() || !AGENT_FOLDER.test(folder.name)) continue;
    const dir = join(root, folder.name);
    for (const file of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      if (!file.isFile() || !NAME.test(file.name)) continue;
      const path = join(dir, file.name);
      const info = await lstat(path).catch(() => null);
      if (!info?.isFile()) continue;
      entries.push({
        path,
        name: file.name,
        agentId: folder.name,
        bytes: info.size,
        modifiedAt: info.mtime.toISOString(),
        sealed: await isSealedFile(path).catch(() => false),
      });
    }
  }
  return entries.sort((a, b) => b.modifiedAt.localeCompare(a.modifiedAt) || b.name.localeCompare(a.name));
}
