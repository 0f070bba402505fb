/**
 * `ctx.agents.snapshots`: consistent copies of loaded agents' files, for an extension that replicates them
 * (see `agent-replication.ts`).
 */

/**
 * One consistent copy of a loaded agent's file ({@link AgentSnapshots.snapshot}).
 *
 * @beta
 */
export interface AgentSnapshot {
  agentId: string;
  /** Absolute path of the copy, in the daemon's data directory (mode 0600); removed once `use` settles. */
  path: string;
  bytes: number;
  /** SHA-256 of the copy, hex. */
  sha256: string;
  /** The agent file's schema version (`PRAGMA user_version`): a build that reads an older one only refuses it. */
  schemaVersion: number;
}

/**
 * A small agent file's pages, read in memory ({@link AgentSnapshots.pages}).
 *
 * @beta
 */
export interface AgentPageImage {
  agentId: string;
  /** The file's pages in order, as SQLite would write it with its WAL checkpointed, the live lease left out. */
  data: Uint8Array;
  /** SQLite's page size: two images of one file differ only in the pages a write changed. */
  pageSize: number;
  /** SHA-256 of `data`, hex. */
  sha256: string;
  schemaVersion: number;
}

/**
 * Consistent copies of loaded agents' files. The daemon's kernel always offers it; a fake kernel may not.
 *
 * @beta
 */
export interface AgentSnapshots {
  /**
   * Copies the agent's file as it was committed when the copy began (SQLite's `VACUUM INTO` on a connection
   * of its own: the agent's turns go on; a few milliseconds on the event loop for a small file, a worker
   * thread for a large one), without the live file lease, then calls `use` with it and removes it once
   * `use` settles; resolves
   * what `use` resolves. The copy is the file: its sealed credentials stay sealed, everything else (the
   * conversation, memories) is as clear as in the file, so keep it where only the daemon reads. Emits no
   * event. Rejects `not_found` for an agent not loaded here, `backup_failed` when SQLite fails.
   */
  snapshot<T>(agentId: string, use: (copy: AgentSnapshot) => Promise<T>): Promise<T>;
  /**
   * The agent's file as its pages, in memory, as committed now (one read transaction on the agent's own
   * connection, on the event loop: under a millisecond for a new agent's file), without the live lease (its
   * page is an empty one); undefined when the file is larger than a few megabytes or cannot be read so now
   * (then use {@link snapshot}). Writes no file and emits no event; the same rules for the copy apply. Rejects
   * `not_found` for an agent not loaded here.
   */
  pages?(agentId: string): AgentPageImage | undefined;
}
