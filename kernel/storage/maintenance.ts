/**
 * Bounded growth of loaded agent files (docs/backups.md, "Bounded growth"):
 * - WAL: every connection the daemon opens runs with `journal_size_limit` = `storage.walMaxBytes`
 *   (default 4 MiB) and an automatic PASSIVE checkpoint at about half of it (`wal_autocheckpoint`), so
 *   the WAL is reset and cut back to the bound as soon as no reader needs it. Each maintenance pass
 *   (every `storage.maintenanceSeconds`, default 60) adds a PASSIVE checkpoint for a busy agent and a
 *   TRUNCATE checkpoint (WAL to 0 bytes) for an idle one; TRUNCATE runs with a busy timeout of 0, so a
 *   reader in the way (the agent's SQL child, a backup) makes it give up at once instead of blocking the
 *   daemon's event loop. A WAL that gained nothing but lease heartbeats since the last checkpoint is left
 *   alone while it is small ({@link HEARTBEAT_WAL_SHARE}): idle agents cost no `fsync`s.
 * - Retention: `storage.retention.{logs, events, messages}` `{maxAgeDays, maxRows}` delete old rows of
 *   `agt_logs`, `agt_audit` and finished `agt_inbox` / `agt_outbox` rows (read inbox rows; outbox rows no longer queued
 *   or pending); `retention.umbilical` trims the in-memory replay window the same way. When that frees a quarter of the
 *   file, the free pages are given back: `incremental_vacuum` on a file in incremental auto-vacuum mode; an idle
 *   agent's file is switched to that mode once by a VACUUM (which rewrites the file: it runs on the daemon's
 *   connection, so only when the agent is idle).
 * - `storageOf` reports the file and WAL sizes and the rows per table from memory: the status route is a
 *   hot path (two `stat` calls per request were ~8% of its CPU). Sizes are at most 1 s old and counts at
 *   most 5 s; a maintenance pass over the file (which is what shrinks it) drops both, so the next answer
 *   reads the file again.
 */
import { statSync } from 'node:fs';
import type { Logger, RetentionRule, Settings } from '@agt/contracts';
import { BUSY_TIMEOUT_MS, type AgentFile } from '../agents/agent-file.js';
import type { LoadedAgent } from '../agents/loaded-agent.js';
import { quotaBytesFor } from './quota.js';

export const DEFAULT_WAL_MAX_BYTES = 4 * 1024 * 1024;
export const DEFAULT_MAINTENANCE_SECONDS = 60;
const COUNT_CACHE_MS = 5_000;
const SIZE_CACHE_MS = 1_000;
const DAY_MS = 86_400_000;
/** A VACUUM or incremental_vacuum runs when at least this share of the file's pages is free. */
const FREE_SHARE = 0.25;
/**
 * A WAL that gained only lease heartbeats since the file's last checkpoint is not checkpointed until it
 * reaches this share of `walMaxBytes` (256 KB of the default 4 MiB, ~60 heartbeats, ten minutes): a
 * checkpoint syncs the WAL and the file, and the next write after it restarts the WAL and syncs its header,
 * three `fsync`s on the event loop per idle agent per pass, for rows nobody needs on disk (a lost heartbeat
 * is a missed beat). With 1,000 idle agents that was most of the daemon's idle time.
 */
const HEARTBEAT_WAL_SHARE = 1 / 16;

/** Which table and which rows each retention kind prunes (only finished message rows). */
const RETENTION_TABLES: Record<'logs' | 'events' | 'messages', Array<{ table: string; finished: string }>> = {
  logs: [{ table: 'agt_logs', finished: '1' }],
  events: [{ table: 'agt_audit', finished: '1' }],
  messages: [
    { table: 'agt_inbox', finished: "status <> 'unread'" },
    { table: 'agt_outbox', finished: "status NOT IN ('queued', 'pending', 'sending')" },
  ],
};

export interface StorageInfo {
  fileBytes: number;
  walBytes: number;
  quotaBytes: number | null;
  tables: Record<string, number>;
}

export interface PassReport {
  agentId: string;
  deleted: number;
  /** `heartbeats`: left alone, the WAL holding nothing but lease heartbeats since the last checkpoint. */
  checkpoint: 'passive' | 'truncate' | 'busy' | 'heartbeats' | 'none';
  vacuumed: boolean;
}

const sizeOf = (path: string) => {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
};

/** Applies the WAL bound to a daemon connection (SQLite keeps these per connection). */
export function applyWalPolicy(file: AgentFile, walMaxBytes = DEFAULT_WAL_MAX_BYTES): void {
  if (!file.isOpen || file.readonly) return;
  const pageSize = Number(file.raw.one<{ page_size: number }>('PRAGMA page_size')?.page_size ?? 4096);
  file.raw.exec(`PRAGMA journal_size_limit = ${Math.floor(walMaxBytes)}`);
  file.raw.exec(`PRAGMA wal_autocheckpoint = ${Math.max(16, Math.floor(walMaxBytes / 2 / pageSize))}`);
}

export interface MaintenanceDeps {
  settings: { current(): Readonly<Settings> };
  agents(): readonly LoadedAgent[];
  /** True when no turn runs for the agent (its executors are idle or stopped). */
  isIdle(agent: LoadedAgent): boolean;
  logger: Logger;
  /** The in-memory replay window (`retention.umbilical`). */
  umbilical?: { prune(maxAgeMs: number | undefined, maxRows: number | undefined, now?: number): number };
  now?: () => number;
}

export class StorageMaintenance {
  private timer: NodeJS.Timeout | undefined;
  private readonly counts = new WeakMap<AgentFile, { at: number; tables: Record<string, number> }>();
  private readonly sizes = new WeakMap<AgentFile, { at: number; fileBytes: number; walBytes: number }>();
  /** Each file's `writeMark()` at its last complete checkpoint. */
  private readonly checkpointed = new WeakMap<AgentFile, string>();
  private everyMs = 0;

  constructor(private readonly deps: MaintenanceDeps) {}

  /** Starts (or re-times after a settings change) the periodic pass; the timer is unref'd. */
  start(): void {
    const seconds = this.deps.settings.current().storage?.maintenanceSeconds ?? DEFAULT_MAINTENANCE_SECONDS;
    if (this.timer && this.everyMs === seconds * 1000) return;
    clearInterval(this.timer);
    this.everyMs = seconds * 1000;
    this.timer = setInterval(() => void this.runSpreadPass(), this.everyMs).unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One pass over every loaded agent at once (tests call it as their tick). Never throws. */
  runPass(): PassReport[] {
    this.pruneUmbilical();
    return this.deps.agents().flatMap((agent) => this.maintainSafely(agent));
  }

  /**
   * The timer's pass: one agent at a time, spread over at most half the interval (at most 1 s apart), so
   * with hundreds of agents loaded the checkpoints never add up to one long stall of the daemon (a
   * single pass over 300 agents took 1.9 s) nor to a burst that takes the event loop for seconds: right
   * after 1,000 creates each checkpoint took ~4 ms, back to back, while requests waited.
   * A pass still running when the next tick comes makes that tick skip.
   */
  private passing = false;
  async runSpreadPass(): Promise<void> {
    if (this.passing) return;
    this.passing = true;
    try {
      this.pruneUmbilical();
      const agents = this.deps.agents();
      const gapMs = Math.min(1_000, Math.floor(this.everyMs / 2 / Math.max(1, agents.length)));
      for (const agent of agents) {
        if (!this.timer) return;
        this.maintainSafely(agent);
        await new Promise<void>((resolve) => (gapMs >= 1 ? setTimeout(resolve, gapMs).unref() : setImmediate(resolve)));
      }
    } finally {
      this.passing = false;
    }
  }

  private pruneUmbilical(): void {
    const umbilical = this.deps.settings.current().storage?.retention?.umbilical;
    if (umbilical)
      this.deps.umbilical?.prune(
        umbilical.maxAgeDays === undefined ? undefined : umbilical.maxAgeDays * DAY_MS,
        umbilical.maxRows,
        (this.deps.now ?? Date.now)(),
      );
  }

  private maintainSafely(agent: LoadedAgent): PassReport[] {
    try {
      // An agent unloaded while a spread pass was under way is skipped.
      return agent.file.isOpen ? [this.maintain(agent)] : [];
    } catch (error) {
      this.deps.logger.warn({ err: error, agentId: agent.id }, 'storage maintenance failed for an agent');
      return [];
    }
  }

  /** Retention, then a checkpoint, for one agent. */
  maintain(agent: LoadedAgent): PassReport {
    const file = agent.file;
    const storage = this.deps.settings.current().storage;
    applyWalPolicy(file, storage?.walMaxBytes);
    const idle = this.deps.isIdle(agent);
    const deleted = this.prune(file, storage?.retention ?? {});
    let vacuumed = false;
    if (deleted > 0) {
      this.counts.delete(file);
      vacuumed = this.giveBackFreePages(file, idle);
    }
    const checkpoint = this.checkpoint(file, idle, storage?.walMaxBytes ?? DEFAULT_WAL_MAX_BYTES);
    // The pass is what shrinks the file and its WAL: the next status reads them again.
    this.sizes.delete(file);
    // What the pass read stays in the OS cache, not in this connection's (~90 KB per agent).
    file.releaseMemory({ statements: false });
    return { agentId: agent.id, deleted, checkpoint, vacuumed };
  }

  private prune(file: AgentFile, retention: NonNullable<NonNullable<Settings['storage']>['retention']>): number {
    const now = (this.deps.now ?? Date.now)();
    let deleted = 0;
    for (const kind of ['logs', 'events', 'messages'] as const) {
      const rule: RetentionRule | undefined = retention[kind];
      if (!rule) continue;
      for (const { table, finished } of RETENTION_TABLES[kind]) {
        file.transaction(() => {
          // Table names and conditions come from the constant above, never from input.
          if (rule.maxAgeDays !== undefined) {
            deleted += file.raw.run(
              `DELETE FROM ${table} WHERE created_at < ? AND ${finished}`,
              now - rule.maxAgeDays * DAY_MS,
            ).changes;
          }
          if (rule.maxRows !== undefined) {
            deleted += file.raw.run(
              `DELETE FROM ${table} WHERE ${finished} AND id <= (SELECT id FROM ${table} WHERE ${finished} ORDER BY id DESC LIMIT 1 OFFSET ?)`,
              rule.maxRows,
            ).changes;
          }
        });
      }
    }
    return deleted;
  }

  /** Gives free pages back to the file system when a quarter of the file is free; true when it did. */
  private giveBackFreePages(file: AgentFile, idle: boolean): boolean {
    const pages = Number(file.raw.one<{ page_count: number }>('PRAGMA page_count')?.page_count ?? 0);
    const free = Number(file.raw.one<{ freelist_count: number }>('PRAGMA freelist_count')?.freelist_count ?? 0);
    if (pages === 0 || free / pages < FREE_SHARE) return false;
    const mode = Number(file.raw.one<{ auto_vacuum: number }>('PRAGMA auto_vacuum')?.auto_vacuum ?? 0);
    if (mode === 2) {
      file.raw.all('PRAGMA incremental_vacuum');
      return true;
    }
    if (!idle) return false;
    // Once per file: from now on freed pages go back with incremental_vacuum, without rewriting the file.
    file.raw.exec('PRAGMA auto_vacuum = INCREMENTAL');
    file.raw.exec('VACUUM');
    return true;
  }

  private checkpoint(file: AgentFile, idle: boolean, walMaxBytes: number): PassReport['checkpoint'] {
    const walBytes = sizeOf(`${file.path}-wal`);
    if (walBytes === 0) return 'none';
    const mark = file.writeMark();
    if (walBytes < walMaxBytes * HEARTBEAT_WAL_SHARE && this.checkpointed.get(file) === mark) return 'heartbeats';
    if (!idle) {
      const row = file.raw.one<{ busy: number; log: number; checkpointed: number }>('PRAGMA wal_checkpoint(PASSIVE)');
      if (row && Number(row.busy) === 0 && Number(row.log) === Number(row.checkpointed))
        this.checkpointed.set(file, mark);
      return 'passive';
    }
    // Never wait for a reader here (the event loop would wait with it): busy means try again next pass.
    file.raw.exec('PRAGMA busy_timeout = 0');
    try {
      const row = file.raw.one<{ busy: number }>('PRAGMA wal_checkpoint(TRUNCATE)');
      if (row && Number(row.busy) !== 0) return 'busy';
      this.checkpointed.set(file, mark);
      return 'truncate';
    } finally {
      file.raw.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  }

  /** The `storage` of `GET /agents/{id}/status`. */
  storageOf(agent: LoadedAgent): StorageInfo {
    const file = agent.file;
    const now = Date.now();
    let cached = this.counts.get(file);
    if (!cached || now - cached.at > COUNT_CACHE_MS) {
      cached = { at: now, tables: countRows(file) };
      this.counts.set(file, cached);
    }
    let sizes = this.sizes.get(file);
    if (!sizes || now - sizes.at > SIZE_CACHE_MS) {
      sizes = { at: now, fileBytes: sizeOf(file.path), walBytes: sizeOf(`${file.path}-wal`) };
      this.sizes.set(file, sizes);
    }
    return {
      fileBytes: sizes.fileBytes,
      walBytes: sizes.walBytes,
      quotaBytes: quotaBytesFor(agent.ownerSettings(), agent.id) ?? null,
      tables: cached.tables,
    };
  }
}

function countRows(file: AgentFile): Record<string, number> {
  const tables: Record<string, number> = {};
  const names = file.raw.all<{ name: string }>(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
  );
  for (const { name } of names) {
    // Names come from sqlite_master (the daemon's tables and the agent's local_* ones), quoted as
    // identifiers; not kept in the statement cache (the agent's tables come and go).
    const row = file.raw.db.prepare(`SELECT count(*) AS n FROM "${name.replace(/"/g, '""')}"`).get() as
      | { n: number }
      | undefined;
    tables[name] = Number(row?.n ?? 0);
  }
  return tables;
}
