/**
 * The agent file's schema: every version's DDL as a forward migration, applied in order. A new file runs
 * all of them from version 0, so the upgrade path of old files is the same code that builds new ones.
 *
 * Rules for editing: never change a released step (files in the wild are at that version); add a new
 * step at the end and bump nothing else, `SCHEMA_VERSION` follows the list.
 */

export interface Migration {
  /** The `PRAGMA user_version` the file has after this step. */
  version: number;
  /** What the step does, for the log and the migration error message. */
  description: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'base tables',
    sql: `
      CREATE TABLE agt_config (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE TABLE agt_loop (
        id INTEGER PRIMARY KEY,
        role TEXT NOT NULL,
        kind TEXT NOT NULL DEFAULT 'message',
        content TEXT NOT NULL,
        turn_id TEXT,
        model TEXT,
        provider TEXT,
        usage_input INTEGER,
        usage_output INTEGER,
        usage_cache_read INTEGER,
        usage_cache_write INTEGER,
        cost REAL,
        created_at INTEGER NOT NULL
      );
      CREATE TABLE agt_audit (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        subject TEXT,
        data TEXT,
        created_at INTEGER NOT NULL
      );
      CREATE TABLE agt_logs (
        id INTEGER PRIMARY KEY,
        level TEXT NOT NULL,
        origin TEXT,
        event TEXT,
        target TEXT,
        message TEXT NOT NULL,
        data TEXT,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX agt_logs_origin ON agt_logs(origin, id);
      CREATE TABLE agt_inbox (
        id INTEGER PRIMARY KEY,
        source TEXT NOT NULL,
        sender TEXT,
        text TEXT NOT NULL,
        data TEXT,
        status TEXT NOT NULL DEFAULT 'unread',
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX agt_inbox_status ON agt_inbox(status, id);
      CREATE TABLE agt_outbox (
        id INTEGER PRIMARY KEY,
        channel TEXT NOT NULL,
        recipient TEXT,
        text TEXT NOT NULL,
        data TEXT,
        status TEXT NOT NULL DEFAULT 'queued',
        error TEXT,
        attempts INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX agt_outbox_status ON agt_outbox(status, id);
      CREATE TABLE agt_meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        protection TEXT NOT NULL DEFAULT 'none' CHECK (protection IN ('none', 'readonly', 'increment')),
        updated_at INTEGER NOT NULL
      );
      CREATE TABLE agt_timers (
        id INTEGER PRIMARY KEY,
        mode TEXT NOT NULL,
        schedule TEXT NOT NULL,
        next_wake_at INTEGER,
        payload TEXT,
        scope TEXT NOT NULL DEFAULT '["agent"]',
        lambda TEXT,
        warm INTEGER NOT NULL DEFAULT 0,
        run_count INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        last_fired_at INTEGER,
        locked INTEGER NOT NULL DEFAULT 0,
        expired INTEGER NOT NULL DEFAULT 0
      );
      CREATE TABLE agt_credentials (
        name TEXT PRIMARY KEY,
        value BLOB NOT NULL,
        sealed INTEGER NOT NULL DEFAULT 1,
        length INTEGER NOT NULL,
        meta TEXT,
        updated_at INTEGER NOT NULL
      );
      CREATE TABLE agt_identity (
        key TEXT PRIMARY KEY,
        value BLOB NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE TABLE agt_files (
        path TEXT PRIMARY KEY,
        content BLOB NOT NULL,
        mime TEXT,
        size INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 2,
    description: 'cognition loops (loop column on agt_loop and agt_timers) and the runtime lease',
    sql: `
      ALTER TABLE agt_loop ADD COLUMN loop TEXT NOT NULL DEFAULT 'main';
      CREATE INDEX agt_loop_by_loop ON agt_loop(loop, id);
      ALTER TABLE agt_timers ADD COLUMN loop TEXT;
      CREATE TABLE agt_lease (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        owner TEXT NOT NULL,
        pid INTEGER NOT NULL,
        host TEXT NOT NULL,
        acquired_at INTEGER NOT NULL,
        heartbeat_at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 3,
    description:
      'durable runtime state: accepted turns (agt_queue), approval tasks (agt_tasks), asks and suspend prompts (agt_prompts), idempotency keys (agt_idempotency)',
    sql: `
      CREATE TABLE agt_queue (
        id INTEGER PRIMARY KEY,
        turn_id TEXT NOT NULL UNIQUE,
        loop TEXT NOT NULL DEFAULT 'main',
        kind TEXT NOT NULL CHECK (kind IN ('chat', 'trigger', 'system')),
        status TEXT NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running')),
        absorbed_by TEXT,
        payload TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        started_at INTEGER
      );
      CREATE TABLE agt_tasks (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL DEFAULT 'approval',
        status TEXT NOT NULL,
        tool TEXT NOT NULL,
        args TEXT NOT NULL,
        loop TEXT NOT NULL DEFAULT 'main',
        turn_id TEXT,
        call_id TEXT,
        resolution TEXT,
        result TEXT,
        error TEXT,
        delivered INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX agt_tasks_by_turn ON agt_tasks(turn_id);
      CREATE INDEX agt_tasks_by_status ON agt_tasks(status, seq);
      CREATE TABLE agt_prompts (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL CHECK (kind IN ('ask', 'suspend')),
        status TEXT NOT NULL DEFAULT 'pending',
        text TEXT NOT NULL,
        answer TEXT,
        loop TEXT NOT NULL DEFAULT 'main',
        turn_id TEXT,
        call_id TEXT,
        delivered INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX agt_prompts_by_turn ON agt_prompts(turn_id);
      CREATE INDEX agt_prompts_by_status ON agt_prompts(status, seq);
      CREATE TABLE agt_idempotency (
        key TEXT PRIMARY KEY,
        turn_id TEXT NOT NULL,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX agt_idempotency_by_age ON agt_idempotency(created_at);
    `,
  },
  {
    version: 4,
    description:
      'delivery facts of outbox rows (status_code, delivered_at) and origin ids of inbox rows (external_id, one row per source and id)',
    sql: `
      ALTER TABLE agt_outbox ADD COLUMN status_code INTEGER;
      ALTER TABLE agt_outbox ADD COLUMN delivered_at INTEGER;
      ALTER TABLE agt_inbox ADD COLUMN external_id TEXT;
      CREATE UNIQUE INDEX agt_inbox_by_external_id ON agt_inbox(source, external_id) WHERE external_id IS NOT NULL;
    `,
  },
  {
    version: 5,
    description: 'stored files: creation time and owner protection (the Files routes)',
    sql: `
      ALTER TABLE agt_files ADD COLUMN created_at INTEGER;
      ALTER TABLE agt_files ADD COLUMN protection TEXT NOT NULL DEFAULT 'none' CHECK (protection IN ('none', 'readonly'));
    `,
  },
  {
    version: 6,
    description: 'the end of an accepted turn kept until its frame reached the event streams (agt_queue.ended)',
    // The event that ends a turn id is committed here before it is emitted; the row goes once the frame
    // was written to the streams, so a kill in between re-announces exactly that end after the restart.
    sql: `
      ALTER TABLE agt_queue ADD COLUMN ended TEXT;
    `,
  },
  {
    version: 7,
    description:
      'spend ledger: every model call with its tokens and cost at the price in force (agt_usage), and owner raises of a day budget (agt_budget_raises)',
    // In the file, not the daemon's data dir, so a moved agent keeps its history; compaction deletes
    // agt_loop rows, never these.
    sql: `
      CREATE TABLE agt_usage (
        id INTEGER PRIMARY KEY,
        at INTEGER NOT NULL,
        loop TEXT NOT NULL DEFAULT 'main',
        turn_id TEXT,
        purpose TEXT NOT NULL DEFAULT 'turn',
        provider TEXT NOT NULL,
        model TEXT NOT NULL,
        input INTEGER NOT NULL,
        output INTEGER NOT NULL,
        cache_read INTEGER NOT NULL DEFAULT 0,
        cache_write INTEGER NOT NULL DEFAULT 0,
        cost_usd REAL
      );
      CREATE INDEX agt_usage_by_time ON agt_usage(at);
      CREATE INDEX agt_usage_by_turn ON agt_usage(turn_id);
      CREATE TABLE agt_budget_raises (
        id INTEGER PRIMARY KEY,
        budget TEXT NOT NULL,
        day TEXT NOT NULL,
        amount REAL NOT NULL,
        task_id TEXT,
        at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 8,
    description: 'the digest of the request an idempotency key was first used with (agt_idempotency.request_hash)',
    // A key sent again with another request is refused (422 idempotency_key_reused); a key stored
    // before this version (no digest) answers its first turn id as before.
    sql: `
      ALTER TABLE agt_idempotency ADD COLUMN request_hash TEXT;
    `,
  },
  {
    version: 9,
    description:
      'long-term memory: memories (agt_memory), their full-text index (agt_memory_fts), their vectors (agt_memory_vectors, agt_memory_bits) and the embedding model the vectors were made with (agt_memory_state)',
    // The FTS5 index is contentless (the text lives once, in agt_memory) and kept in step by the memory
    // store in the same transactions, never by triggers (docs/memory.md). Vectors are BLOBs in libsql's
    // float32 and 1-bit formats, of whatever width the owner's embedding model has (kernel/memory/vectors.ts).
    sql: `
      CREATE TABLE agt_memory (
        id INTEGER PRIMARY KEY,
        text TEXT NOT NULL,
        kind TEXT NOT NULL DEFAULT 'fact' CHECK (kind IN ('fact', 'episode', 'summary', 'instruction')),
        source TEXT NOT NULL DEFAULT 'agent' CHECK (source IN ('agent', 'owner', 'compaction')),
        loop TEXT,
        turn_id TEXT,
        row_id INTEGER,
        pinned INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        used_at INTEGER,
        forgotten_at INTEGER
      );
      CREATE INDEX agt_memory_by_state ON agt_memory(forgotten_at, pinned, created_at);
      CREATE VIRTUAL TABLE agt_memory_fts USING fts5(text, content='', contentless_delete=1, tokenize='porter unicode61 remove_diacritics 2');
      CREATE TABLE agt_memory_state (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );
      CREATE TABLE agt_memory_vectors (
        memory_id INTEGER PRIMARY KEY,
        embedding BLOB NOT NULL
      );
      CREATE TABLE agt_memory_bits (
        memory_id INTEGER PRIMARY KEY,
        bits BLOB NOT NULL
      );
    `,
  },
  {
    version: 10,
    description:
      'memory consolidation changelog (agt_memory_changelog): one row per change a consolidation run made or refused',
    sql: `
      CREATE TABLE agt_memory_changelog (
        id INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL,
        action TEXT NOT NULL,
        memory_id INTEGER,
        from_ids TEXT NOT NULL,
        reason TEXT NOT NULL,
        detail TEXT,
        created_at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 11,
    description: "memories made by consolidation carry their own source (agt_memory.source 'consolidation')",
    // SQLite cannot change a CHECK constraint in place: the table is made again with the wider one and its
    // rows copied, ids kept (the full-text index and the vectors refer to them).
    sql: `
      CREATE TABLE agt_memory_next (
        id INTEGER PRIMARY KEY,
        text TEXT NOT NULL,
        kind TEXT NOT NULL DEFAULT 'fact' CHECK (kind IN ('fact', 'episode', 'summary', 'instruction')),
        source TEXT NOT NULL DEFAULT 'agent' CHECK (source IN ('agent', 'owner', 'compaction', 'consolidation')),
        loop TEXT,
        turn_id TEXT,
        row_id INTEGER,
        pinned INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        used_at INTEGER,
        forgotten_at INTEGER
      );
      INSERT INTO agt_memory_next (id, text, kind, source, loop, turn_id, row_id, pinned, created_at, updated_at, used_at, forgotten_at)
        SELECT id, text, kind, source, loop, turn_id, row_id, pinned, created_at, updated_at, used_at, forgotten_at FROM agt_memory;
      DROP TABLE agt_memory;
      ALTER TABLE agt_memory_next RENAME TO agt_memory;
      CREATE INDEX agt_memory_by_state ON agt_memory(forgotten_at, pinned, created_at);
    `,
  },
  {
    version: 12,
    description:
      'records extensions keep beside a turn (agt_turn_records: an A2A task of the turn), so they outlive a restart',
    // One record per kind and turn; `seq` orders them by first write for listing with a cursor.
    sql: `
      CREATE TABLE agt_turn_records (
        seq INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        turn_id TEXT NOT NULL,
        record TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE UNIQUE INDEX agt_turn_records_by_turn ON agt_turn_records(kind, turn_id);
    `,
  },
  {
    version: 13,
    description: "an ask's answer schema is kept with it (agt_prompts.schema), so its form outlives a restart",
    sql: `
      ALTER TABLE agt_prompts ADD COLUMN schema TEXT;
    `,
  },
  {
    version: 14,
    description:
      'an end that ends many accepted turns is stored once: the other rows of agt_queue hold `{"ref": <turn id>}` in `ended`',
    // No table changes: the version says an older build cannot read such rows, so it refuses the file.
    sql: '',
  },
];

/** The version this build writes. Files with a higher `user_version` are refused. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/** A table every agent file has had since version 1: its presence tells an agent file from a foreign one. */
export const MARKER_TABLE = 'agt_config';
