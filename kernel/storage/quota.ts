/**
 * The per-agent size quota (settings `storage.quotaBytes`, per agent `storage.agentQuotas`): the most
 * an agent file may grow to through the agent's own writes. Held by construction where the writes
 * happen, never by inspecting what is written:
 * - agent SQL (`db_execute`) runs on the agent's own connection in its SQL child, which gets
 *   `PRAGMA max_page_count` = quota / page size before every call: SQLite itself refuses to grow the
 *   file past it (SQLITE_FULL → the tool error `storage_quota_exceeded`), and agent SQL cannot run a
 *   PRAGMA to lift it (sql-policy.mjs refuses PRAGMA);
 * - stored files (`fs_write`) are checked against the file's size before they are written.
 * The daemon's own connection has no such limit: its writes (the conversation, logs, the queue) go on.
 */
import type { Settings } from '@agt/contracts';
import type { AgentFile } from '../agents/agent-file.js';
import { storageQuotaExceeded } from './errors.js';

/** The quota of one agent in bytes, or undefined when none applies. */
export function quotaBytesFor(settings: Readonly<Settings> | undefined, agentId: string): number | undefined {
  const storage = settings?.storage;
  if (!storage) return undefined;
  // Own-property lookup: an agent id such as `__proto__` must not reach Object.prototype.
  if (storage.agentQuotas && Object.hasOwn(storage.agentQuotas, agentId)) return storage.agentQuotas[agentId];
  return storage.quotaBytes;
}

/** Bytes of the database's pages in use (free pages left out; WAL included), read on the daemon's connection. */
export function databaseBytes(file: AgentFile): { bytes: number; pageSize: number } {
  const pageSize = Number(file.raw.one<{ page_size: number }>('PRAGMA page_size')?.page_size ?? 4096);
  const pages = Number(file.raw.one<{ page_count: number }>('PRAGMA page_count')?.page_count ?? 0);
  const free = Number(file.raw.one<{ freelist_count: number }>('PRAGMA freelist_count')?.freelist_count ?? 0);
  return { bytes: (pages - free) * pageSize, pageSize };
}

/** The `max_page_count` for the agent's SQL connection, or undefined for no quota. */
export function quotaPages(file: AgentFile, quota: number | undefined): number | undefined {
  if (quota === undefined) return undefined;
  return Math.max(1, Math.floor(quota / databaseBytes(file).pageSize));
}

/**
 * Refuses a stored-file write that would take the file past its quota: `adding` bytes of content,
 * replacing `replacing` bytes, counted against the pages in use now (a write reuses free pages first).
 */
export function assertFileWriteFits(
  file: AgentFile,
  quota: number | undefined,
  adding: number,
  replacing: number,
): void {
  if (quota === undefined) return;
  const { bytes } = databaseBytes(file);
  if (bytes + adding - replacing > quota) throw storageQuotaExceeded(quota, `writing ${adding} bytes`);
}
