/**
 * `agt_files`: files stored inside the agent (the `fs_*` tools, lambdas of system-scope triggers, the
 * Files routes). Paths follow the one rule of `contracts/agent-paths.ts`. A file's `protection` is the
 * owner's: `readonly` files are refused to the agent's own writes and deletes (the `fs_*` tools), never
 * to the owner's routes.
 */
import type { Sql } from '../sql.js';
import { normalizeAgentPath } from '@agt/contracts';
import { storedFileExists, storedFileNotFound } from './errors.js';

export type FileProtection = 'none' | 'readonly';

export interface StoredFileInfo {
  path: string;
  mime: string | null;
  size: number;
  updated_at: number;
  /** Null for files written before the agent file recorded it (schema 4). */
  created_at: number | null;
  protection: FileProtection;
}

export interface StoredFile extends StoredFileInfo {
  content: Buffer;
}

const COLUMNS = 'path, mime, size, updated_at, created_at, protection';

export class FilesStore {
  constructor(private readonly sql: Sql) {}

  /** Files (without content) under an optional folder prefix, sorted by path. */
  list(prefix = ''): StoredFileInfo[] {
    const folder = prefix === '' ? '' : `${normalizeAgentPath(prefix)}/`;
    return this.sql.all<StoredFileInfo>(
      `SELECT ${COLUMNS} FROM agt_files WHERE substr(path, 1, length(?)) = ? ORDER BY path`,
      folder,
      folder,
    );
  }

  read(path: string): StoredFile | undefined {
    const row = this.sql.one<StoredFile>(
      `SELECT ${COLUMNS}, content FROM agt_files WHERE path = ?`,
      normalizeAgentPath(path),
    );
    return row && { ...row, content: Buffer.from(row.content) };
  }

  /** Info without content; undefined when absent. */
  info(path: string): StoredFileInfo | undefined {
    return this.sql.one<StoredFileInfo>(`SELECT ${COLUMNS} FROM agt_files WHERE path = ?`, normalizeAgentPath(path));
  }

  /**
   * Creates or replaces a file; returns its info. A replaced file keeps its creation time, and its
   * protection unless `protection` is given.
   */
  write(
    path: string,
    content: Uint8Array | string,
    mime: string | null = null,
    protection?: FileProtection,
  ): StoredFileInfo {
    const normalized = normalizeAgentPath(path);
    const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
    const now = Date.now();
    this.sql.run(
      `INSERT INTO agt_files (path, content, mime, size, updated_at, created_at, protection) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT(path) DO UPDATE SET content = excluded.content, mime = excluded.mime, size = excluded.size, updated_at = excluded.updated_at${protection ? ', protection = excluded.protection' : ''}`,
      normalized,
      bytes,
      mime,
      bytes.byteLength,
      now,
      now,
      protection ?? 'none',
    );
    return this.info(normalized)!;
  }

  /** Deletes a file; false when absent. */
  delete(path: string): boolean {
    return this.sql.run('DELETE FROM agt_files WHERE path = ?', normalizeAgentPath(path)).changes > 0;
  }

  /** Moves a file to a new path (content, times and protection kept); 404 when absent, 409 onto an existing file. */
  rename(from: string, to: string): StoredFileInfo {
    const source = normalizeAgentPath(from);
    const target = normalizeAgentPath(to);
    if (!this.info(source)) throw storedFileNotFound(source);
    if (source === target) return this.info(source)!;
    if (this.info(target)) throw storedFileExists(target);
    this.sql.run('UPDATE agt_files SET path = ? WHERE path = ?', target, source);
    return this.info(target)!;
  }
}
