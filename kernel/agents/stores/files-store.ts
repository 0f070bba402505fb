/**
 * `agt_files`: files stored inside the agent (the `fs_*` tools, lambdas of system-scope triggers).
 * Paths follow the one rule of `contracts/agent-paths.ts`.
 */
import type { Sql } from '../sql.js';
import { normalizeAgentPath } from '../../../contracts/agent-paths.js';

export interface StoredFileInfo {
  path: string;
  mime: string | null;
  size: number;
  updated_at: number;
}

export interface StoredFile extends StoredFileInfo {
  content: Buffer;
}

export class FilesStore {
  constructor(private readonly sql: Sql) {}

  /** Files (without content) under an optional folder prefix, sorted by path. */
  list(prefix = ''): StoredFileInfo[] {
    const folder = prefix === '' ? '' : `${normalizeAgentPath(prefix)}/`;
    return this.sql.all<StoredFileInfo>(
      "SELECT path, mime, size, updated_at FROM agt_files WHERE substr(path, 1, length(?)) = ? ORDER BY path",
      folder,
      folder,
    );
  }

  read(path: string): StoredFile | undefined {
    const row = this.sql.one<StoredFile>('SELECT path, content, mime, size, updated_at FROM agt_files WHERE path = ?', normalizeAgentPath(path));
    return row && { ...row, content: Buffer.from(row.content) };
  }

  /** Creates or replaces a file; returns its info. */
  write(path: string, content: Uint8Array | string, mime: string | null = null): StoredFileInfo {
    const normalized = normalizeAgentPath(path);
    const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
    const now = Date.now();
    this.sql.run(
      'INSERT INTO agt_files (path, content, mime, size, updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET content = excluded.content, mime = excluded.mime, size = excluded.size, updated_at = excluded.updated_at',
      normalized,
      bytes,
      mime,
      bytes.byteLength,
      now,
    );
    return { path: normalized, mime, size: bytes.byteLength, updated_at: now };
  }

  /** Deletes a file; false when absent. */
  delete(path: string): boolean {
    return this.sql.run('DELETE FROM agt_files WHERE path = ?', normalizeAgentPath(path)).changes > 0;
  }
}
