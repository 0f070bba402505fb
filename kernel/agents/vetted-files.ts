/**
 * The agent files this daemon wrote last, each with the fingerprint it had when the daemon closed it
 * (device, inode, size and modification time of the file and of its WAL, if any), kept in
 * `<dataDir>/vetted-files.jsonl` (0600, one JSON line per close; the last line of a path wins).
 *
 * A file whose fingerprint still matches holds only what the daemon itself wrote (and the agent's own
 * `local_*` tables, which the daemon reads only in the agent's SQL child): it is opened directly. Any
 * other file (new to this daemon, changed since, or left open by a crash) is first read whole in the file
 * reader's child process (credentials/file-reader.ts), because libsql aborts its process on a TEXT value
 * that is not UTF-8. See docs/decisions.md, "A file the daemon did not write last is read whole in a child
 * process first".
 */
import { appendFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const VETTED_FILES = 'vetted-files.jsonl';

function stamp(path: string): string | null {
  try {
    const s = statSync(path, { bigint: true });
    return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}`;
  } catch {
    return null;
  }
}

/** The file's fingerprint, null when it cannot be read. */
export function fingerprint(filePath: string): string | null {
  const main = stamp(filePath);
  return main === null ? null : `${main}|${stamp(`${filePath}-wal`) ?? '-'}`;
}

export class VettedFiles {
  private readonly path: string;
  private table?: Map<string, string>;

  constructor(dataDir: string) {
    this.path = join(dataDir, VETTED_FILES);
  }

  private load(): Map<string, string> {
    if (this.table) return this.table;
    const table = new Map<string, string>();
    let lines = 0;
    let text = '';
    try {
      text = readFileSync(this.path, 'utf8');
    } catch {
      // Missing or unreadable: every file is read whole once more, nothing worse.
    }
    for (const line of text.split('\n')) {
      if (line === '') continue;
      lines += 1;
      try {
        const entry = JSON.parse(line) as { path?: unknown; fp?: unknown };
        if (typeof entry.path === 'string' && typeof entry.fp === 'string') table.set(entry.path, entry.fp);
      } catch {
        // A line cut short (the daemon killed mid-append).
      }
    }
    this.table = table;
    // Rewritten once it holds mostly superseded lines (every close appends one).
    if (lines > 2 * table.size + 64) this.write(table);
    return table;
  }

  private write(table: Map<string, string>): void {
    try {
      const body = [...table].map(([path, fp]) => `${JSON.stringify({ path, fp })}\n`).join('');
      writeFileSync(this.path, body, { mode: 0o600 });
    } catch {
      // Not kept: the files are read whole once more.
    }
  }

  /** True when `filePath` is as the daemon left it when it last closed it. */
  matches(filePath: string): boolean {
    const fp = this.load().get(filePath);
    return fp !== undefined && fp === fingerprint(filePath);
  }

  /** Records `filePath` as the daemon leaves it (right after closing it). */
  remember(filePath: string): void {
    const fp = fingerprint(filePath);
    const table = this.load();
    if (fp === null || table.get(filePath) === fp) return;
    table.set(filePath, fp);
    try {
      appendFileSync(this.path, `${JSON.stringify({ path: filePath, fp })}\n`, { mode: 0o600 });
    } catch {
      // Not kept: the file is read whole at its next load.
    }
  }
}
