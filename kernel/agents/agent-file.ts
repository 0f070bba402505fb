/**
 * One agent file (`.agt`): a libsql database with the `agt_*` daemon tables and the agent's `local_*` tables
 * (docs/decisions.md, "An agent file is one SQLite database"). Opening checks that the file is an agent file of a
 * version this build knows, switches it to WAL and migrates it forward; the typed stores below are the only way the
 * daemon touches its tables.
 *
 * SQLite's hardening for files from elsewhere: every connection runs with `trusted_schema = OFF` (no
 * function that is not marked innocuous runs from the schema: defaults, CHECK constraints, generated
 * columns, index expressions), and a file carrying triggers, views or virtual tables — which the daemon
 * never creates and agent SQL cannot — is refused (`unsafe_schema`, see schema-check.ts).
 *
 * Commit before announcing: every store method commits before it returns (or when the surrounding
 * {@link AgentFile.transaction} ends), so emit events only after that.
 *
 * Durability: connections run WAL at `synchronous = NORMAL`. A commit is in the WAL before the call
 * returns, so it survives the daemon crashing or being killed (kill -9) at any point; the WAL is synced
 * to disk at every checkpoint (SQLite's automatic one at ~4 MB of WAL, and at close), so a power loss or
 * an operating-system crash may take back the transactions committed since the last one. (FULL synced
 * the WAL at every commit: ~1.4 ms each, five or more per chat turn.) A new file is written without syncs
 * until it is complete, then checkpointed and synced once ({@link AgentFile.finishCreation}): a created
 * file is on disk as a whole before anyone is told about it.
 */
import { closeSync, fsyncSync, openSync, readSync, statSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute } from 'node:path';
import type Database from 'libsql';
import { libsql } from './libsql.js';
import { type AgentConfig, AgtError } from '@agt/contracts';
import { agentFileExists, agentFileLocked, agentFileNotFound, agentPathNotAbsolute, loadFailed } from './errors.js';
import { templateBytes, writeTemplate } from './file-template.js';
import { releaseClosedHandles } from './handle-release.js';
import { MARKER_TABLE, MIGRATIONS, SCHEMA_VERSION } from './schema.js';
import { foreignSchemaObjects, unsafeSchemaObjects, type SchemaObject } from './schema-check.js';
import { Sql } from './sql.js';
import { AuditStore } from './stores/audit-store.js';
import { ConfigStore } from './stores/config-store.js';
import { FilesStore } from './stores/files-store.js';
import { HilRecordStore } from './stores/hil-store.js';
import { IdempotencyKeyStore } from './stores/idempotency-store.js';
import { TurnRecordsStore } from './stores/turn-records-store.js';
import { LeaseStore } from './stores/lease-store.js';
import { LocalTables } from './stores/local-tables.js';
import { LogsStore } from './stores/logs-store.js';
import { LoopStore } from './stores/loop-store.js';
import { InboxStore, OutboxStore } from './stores/message-stores.js';
import { MetaStore } from './stores/meta-store.js';
import { QueueStore } from './stores/queue-store.js';
import { CredentialsStore, IdentityStore } from './stores/secret-stores.js';
import { TimersStore } from './stores/timers-store.js';
import { usageRollup, type UsageRollup } from './stores/usage-rollup.js';
import { MemoryStore } from '../memory/memory-store.js';

/** Busy timeout: a second connection waits this long for a lock instead of failing at once. */
export const BUSY_TIMEOUT_MS = 5_000;
/** Bytes the WAL is cut back to after a checkpoint resets it, unless settings `storage.walMaxBytes` says. */
export const WAL_SIZE_LIMIT = 4 * 1024 * 1024;
const SQLITE_HEADER = 'SQLite format 3\0';

/** True for SQLite's "database is locked" family (another connection held the lock past the busy timeout). */
export function isBusyError(error: unknown): boolean {
  const code = String((error as { code?: unknown } | null)?.code ?? '');
  return (
    /^SQLITE_(BUSY|LOCKED)/.test(code) ||
    /database (table )?is locked/i.test(String((error as Error | null)?.message ?? ''))
  );
}

export interface OpenOptions {
  /** Read without migrating, switching journal mode or writing anything (review of an unloaded file). */
  readonly?: boolean;
  /** How long to wait for another connection's lock before giving up (default {@link BUSY_TIMEOUT_MS}). */
  busyTimeoutMs?: number;
}

export interface CreateOptions {
  /** Tests only: build the file at an older schema version to exercise migrations. */
  version?: number;
}

export class AgentFile {
  readonly config: ConfigStore;
  readonly loop: LoopStore;
  readonly logs: LogsStore;
  readonly meta: MetaStore;
  readonly inbox: InboxStore;
  readonly outbox: OutboxStore;
  readonly timers: TimersStore;
  readonly audit: AuditStore;
  readonly credentials: CredentialsStore;
  readonly identity: IdentityStore;
  readonly files: FilesStore;
  readonly tables: LocalTables;
  readonly lease: LeaseStore;
  /** Accepted turns not ended yet (chats, dispatches): what a restart recovers. */
  readonly queue: QueueStore;
  /** Approval tasks, asks and suspend prompts. */
  readonly hil: HilRecordStore;
  readonly idempotency: IdempotencyKeyStore;
  readonly turnRecords: TurnRecordsStore;
  /** Long-term memories with their full-text and vector indexes (docs/memory.md). */
  readonly memory: MemoryStore;
  private closed = false;
  /** A new file not yet complete: written without syncs until {@link finishCreation}. */
  private creating = false;

  private constructor(
    readonly path: string,
    private readonly sql: Sql,
    /** The schema version the file had when opened (before migrating); a created file's, its version. */
    readonly openedAtVersion: number,
    readonly readonly: boolean,
  ) {
    this.config = new ConfigStore(sql);
    this.loop = new LoopStore(sql);
    this.logs = new LogsStore(sql);
    this.meta = new MetaStore(sql);
    this.inbox = new InboxStore(sql);
    this.outbox = new OutboxStore(sql);
    this.timers = new TimersStore(sql);
    this.audit = new AuditStore(sql);
    this.credentials = new CredentialsStore(sql);
    this.identity = new IdentityStore(sql);
    this.files = new FilesStore(sql);
    this.tables = new LocalTables(sql);
    this.lease = new LeaseStore(sql);
    this.queue = new QueueStore(sql);
    this.hil = new HilRecordStore(sql);
    this.idempotency = new IdempotencyKeyStore(sql);
    this.turnRecords = new TurnRecordsStore(sql);
    this.memory = new MemoryStore(sql);
  }

  /**
   * Opens an existing agent file. Refuses (never creates) a missing path with `not_found`, and a file
   * that is not an agent file of a known version with 422 `load_failed` and `details.reason`.
   */
  static open(filePath: string, options: OpenOptions = {}): AgentFile {
    if (!isAbsolute(filePath)) throw agentPathNotAbsolute(filePath);
    let size: number;
    try {
      const stat = statSync(filePath);
      if (!stat.isFile()) throw loadFailed(filePath, 'not_a_file', 'not a regular file');
      size = stat.size;
    } catch (error) {
      if (error instanceof AgtError) throw error;
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw agentFileNotFound(filePath);
      throw loadFailed(filePath, 'not_a_file', `cannot read: ${(error as Error).message}`, error);
    }
    // Check the header ourselves: libsql would happily turn an empty or random file into a database.
    if (size === 0) throw loadFailed(filePath, 'foreign', 'empty file, not an agent file');
    let header: string;
    try {
      header = readHeader(filePath);
    } catch (error) {
      // A file the daemon's user may not read (another user's, as an ordinary-user daemon): the owner's to fix.
      throw loadFailed(filePath, 'not_a_file', `cannot read: ${(error as Error).message}`, error);
    }
    if (header !== SQLITE_HEADER)
      throw loadFailed(filePath, 'corrupt', 'not an SQLite database (corrupt or foreign file)');

    let db: Database.Database | undefined;
    const sql = (() => {
      try {
        db = new (libsql())(filePath, {
          timeout: options.busyTimeoutMs ?? BUSY_TIMEOUT_MS,
          readonly: options.readonly === true,
        });
        db.exec('PRAGMA trusted_schema = OFF');
        db.exec('PRAGMA synchronous = NORMAL');
        return new Sql(db);
      } catch (error) {
        if (isBusyError(error)) throw agentFileLocked(filePath, error);
        throw loadFailed(filePath, 'corrupt', `cannot open: ${(error as Error).message}`, error);
      }
    })();
    try {
      const version = inspect(sql, filePath);
      checkSchema(sql, filePath);
      const file = new AgentFile(filePath, sql, version, options.readonly === true);
      if (!file.readonly) {
        sql.exec('PRAGMA journal_mode = WAL');
        // The WAL's default bound (docs/backups.md): cut back to 4 MiB whenever a checkpoint resets it;
        // the storage service applies the owner's `storage.walMaxBytes` once the agent is loaded.
        sql.exec(`PRAGMA journal_size_limit = ${WAL_SIZE_LIMIT}`);
        migrate(sql, filePath, version, SCHEMA_VERSION);
      }
      if (file.config.get() === undefined) throw loadFailed(filePath, 'no_config', 'the file holds no agent config');
      return file;
    } catch (error) {
      sql.dropStatements();
      db?.close();
      void releaseClosedHandles();
      throw !(error instanceof AgtError) && isBusyError(error) ? agentFileLocked(filePath, error) : error;
    }
  }

  /**
   * Creates a new agent file holding `config`. `conflict` when the path exists. A file at the current
   * schema is a copy of the empty template (file-template.ts: the migrations, run once per process);
   * an older version (tests) runs the migrations up to it. Nothing is synced until
   * {@link finishCreation} (or close).
   */
  static create(filePath: string, config: AgentConfig, options: CreateOptions = {}): AgentFile {
    if (!isAbsolute(filePath)) throw agentPathNotAbsolute(filePath);
    const target = options.version ?? SCHEMA_VERSION;
    if (!MIGRATIONS.some((step) => step.version === target)) throw new Error(`unknown schema version ${target}`);
    const fromTemplate = target === SCHEMA_VERSION;
    if (fromTemplate) {
      const template = templateBytes(SCHEMA_VERSION, (sql, path) => migrate(sql, path, 0, SCHEMA_VERSION));
      try {
        writeTemplate(filePath, template);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw agentFileExists(filePath);
        throw error;
      }
    } else {
      let exists = true;
      try {
        statSync(filePath);
      } catch {
        exists = false;
      }
      if (exists) throw agentFileExists(filePath);
      // Made 0600 before SQLite opens it (it would create 0644); an empty file is an empty database.
      writeFileSync(filePath, '', { flag: 'wx', mode: 0o600 });
    }
    const db = new (libsql())(filePath, { timeout: BUSY_TIMEOUT_MS });
    const sql = new Sql(db);
    try {
      sql.exec('PRAGMA trusted_schema = OFF');
      // Nobody else knows the file yet: it is written in place (rollback journal in memory, so a failed
      // transaction still rolls back; no syncs) and becomes a WAL file, synced once, in finishCreation.
      // Through the WAL it took a checkpoint to put the rows into the main file: 3 fsyncs and the pages
      // written twice per create.
      sql.exec('PRAGMA journal_mode = MEMORY');
      sql.exec('PRAGMA synchronous = OFF');
      if (!fromTemplate) migrate(sql, filePath, 0, target);
      const file = new AgentFile(filePath, sql, target, false);
      file.creating = true;
      file.config.put(config);
      return file;
    } catch (error) {
      sql.dropStatements();
      db.close();
      void releaseClosedHandles();
      throw error;
    }
  }

  /**
   * Gives back the page cache memory the connection does not need now (`PRAGMA shrink_memory`): ~85 KB
   * per connection, read again from the operating system's cache when needed. At the points where an
   * agent settles (loaded, started) the cached statements are dropped too (`statements`): most were
   * prepared once for loading and starting (~80 KB of native memory per agent); libsql frees a
   * dropped statement when the garbage collector takes it, and the ones used again are prepared again.
   * The lease heartbeat calls it without `statements` (it reads pages back into the cache). Never throws.
   */
  releaseMemory(options: { statements?: boolean } = {}): void {
    if (this.closed) return;
    if (options.statements !== false) this.sql.dropStatements();
    try {
      this.sql.exec('PRAGMA shrink_memory');
    } catch {
      // Best effort.
    }
  }

  /**
   * A value that moves with every commit to the file except the lease's heartbeats: rows changed on this
   * connection (`total_changes()` less the heartbeats'), its schema changes (`schema_version`) and other
   * connections' commits (`data_version`: the agent's SQL child, a backup tool). The maintenance pass
   * compares it with the one of its last checkpoint (kernel/storage/maintenance.ts).
   */
  writeMark(): string {
    const row = this.sql.one<{ changes: number; schema: number }>(
      'SELECT total_changes() AS changes, schema_version AS schema FROM pragma_schema_version',
    );
    const data = this.sql.one<{ data_version: number }>('PRAGMA data_version')?.data_version;
    return `${Number(row?.changes) - this.lease.heartbeatChanges}:${row?.schema}:${data}`;
  }

  /** The schema version of the file now (`PRAGMA user_version`). */
  get version(): number {
    return userVersion(this.sql);
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  /**
   * Ends the creation of a new file: it switches to WAL (every row is in the main file, the WAL is
   * empty), the file and then its folder (the new names) are synced, and commits run at `synchronous =
   * NORMAL` from here on. No-op for an opened file.
   */
  finishCreation(): void {
    if (!this.creating) return;
    const mode = this.sql.one<{ journal_mode: string }>('PRAGMA journal_mode = WAL')?.journal_mode;
    // Where WAL is refused (a file system without shared memory), the journal goes to disk, never memory.
    if (mode !== 'wal') this.sql.exec('PRAGMA journal_mode = DELETE');
    this.sql.exec('PRAGMA synchronous = NORMAL');
    syncPath(this.path);
    syncPath(dirname(this.path), true);
    this.creating = false;
  }

  /**
   * Runs `fn` atomically (synchronously: no awaits inside). Nested calls are savepoints. Emit events for
   * rows written inside only after this returns.
   */
  transaction<T>(fn: (file: this) => T): T {
    return this.sql.transaction(() => fn(this));
  }

  /**
   * Schema objects the file carries besides the daemon's own and SQLite's: the agent's `local_*` tables
   * and indexes (the review lists them; an unsafe object never gets this far).
   */
  schemaObjects(): SchemaObject[] {
    return foreignSchemaObjects(this.sql);
  }

  /** Usage rollup from `agt_loop` (the rules are in stores/usage-rollup.ts). */
  usage(): UsageRollup {
    return usageRollup(this.sql);
  }

  /**
   * Escape hatch for daemon SQL the stores do not cover. Prefer the typed stores; never interpolate input
   * into SQL. Never for agent SQL: `db_query`/`db_execute` run in a process and on a connection of their
   * own (kernel/runtime/sql-sandbox/).
   */
  get raw(): Sql {
    return this.sql;
  }

  /**
   * Checkpoints the WAL into the main file (so the `.agt` alone is complete) and closes. Idempotent.
   * Resolves once the connection's descriptors are released (see handle-release.ts).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      if (this.creating) this.finishCreation();
      else if (!this.readonly) this.sql.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    } catch {
      // Another connection may hold a read lock; the WAL then stays and is replayed on next open.
    }
    this.sql.dropStatements();
    this.sql.db.close();
    await releaseClosedHandles();
  }
}

/** fsync of a file, or of a folder (its entries), where the platform allows that (not Windows). */
function syncPath(path: string, folder = false): void {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    if (folder) return;
    throw error;
  }
  try {
    fsyncSync(fd);
  } catch (error) {
    if (!folder) throw error;
  } finally {
    closeSync(fd);
  }
}

/** True when `filePath` starts with SQLite's header (read without opening it as a database). */
export function hasSqliteHeader(filePath: string): boolean {
  return readHeader(filePath) === SQLITE_HEADER;
}

function readHeader(filePath: string): string {
  const fd = openSync(filePath, 'r');
  try {
    const buffer = Buffer.alloc(16);
    const read = readSync(fd, buffer, 0, 16, 0);
    return buffer.subarray(0, read).toString('latin1');
  } finally {
    closeSync(fd);
  }
}

function userVersion(sql: Sql): number {
  return Number(sql.one<{ user_version: number }>('PRAGMA user_version')?.user_version ?? 0);
}

/** The file's schema version, after checking it is an agent file this build can read. */
function inspect(sql: Sql, filePath: string): number {
  let version: number;
  let hasMarker: boolean;
  try {
    version = userVersion(sql);
    hasMarker =
      sql.one("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = ?", MARKER_TABLE) !== undefined;
  } catch (error) {
    if (isBusyError(error)) throw agentFileLocked(filePath, error);
    throw loadFailed(filePath, 'corrupt', `unreadable database: ${(error as Error).message}`, error);
  }
  if (!hasMarker || version < 1) {
    throw loadFailed(filePath, 'foreign', `not an agent file (no ${MARKER_TABLE} table or no schema version)`);
  }
  if (version > SCHEMA_VERSION) {
    throw loadFailed(
      filePath,
      'newer',
      `written by a newer agt (schema version ${version}; this build reads up to ${SCHEMA_VERSION})`,
    );
  }
  return version;
}

/** Refuses a file carrying triggers, views or virtual tables (before anything of the daemon writes to it). */
function checkSchema(sql: Sql, filePath: string): void {
  let unsafe: SchemaObject[];
  try {
    unsafe = unsafeSchemaObjects(foreignSchemaObjects(sql));
  } catch (error) {
    if (isBusyError(error)) throw agentFileLocked(filePath, error);
    throw loadFailed(filePath, 'corrupt', `unreadable schema: ${(error as Error).message}`, error);
  }
  if (unsafe.length === 0) return;
  const list = unsafe
    .map((o) => `${o.virtual ? 'virtual table' : o.type} ${o.name}${o.table !== o.name ? ` on ${o.table}` : ''}`)
    .join(', ');
  throw loadFailed(
    filePath,
    'unsafe_schema',
    `the file carries schema objects agt never creates and will not run (${list}); remove them with another SQLite tool if you trust the file`,
    undefined,
    { objects: unsafe },
  );
}

/** Applies the steps after `from` up to `to`, each in its own transaction with its version bump. */
function migrate(sql: Sql, filePath: string, from: number, to: number): void {
  for (const step of MIGRATIONS) {
    if (step.version <= from || step.version > to) continue;
    try {
      sql.transaction(() => {
        sql.exec(step.sql);
        // user_version cannot be bound as a parameter; step.version is a number from our own table.
        sql.exec(`PRAGMA user_version = ${Number(step.version)}`);
      });
    } catch (error) {
      if (isBusyError(error)) throw agentFileLocked(filePath, error);
      throw loadFailed(
        filePath,
        'migration_failed',
        `migration to version ${step.version} (${step.description}) failed: ${(error as Error).message}`,
        error,
      );
    }
  }
}
