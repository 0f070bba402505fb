/**
 * The agent launcher (`ctx.launcher`): what an extension that finds agent files on its own (the shipped
 * `tracked-folders`, or a third-party one watching a share, a repository, ...) needs of the kernel to
 * read, start and stop them. Every load goes through the kernel's review gate, exactly as
 * `POST /agents/load {requireReview: true}` does; nothing here can load an unreviewed file.
 *
 * Paths are absolute; the kernel works on their real paths (symbolic links resolved), so the
 * `filePath` it reports back may differ from the one passed in.
 */

/**
 * Why the autostart of a file was skipped (`POST /agents/autostart` uses the same reasons).
 *
 * @public
 */
export const AUTOSTART_SKIP_REASONS = ['already_loaded', 'not_autostart', 'password_protected', 'unreviewed'] as const;
/** @public */
export type AutostartSkipReason = (typeof AUTOSTART_SKIP_REASONS)[number];

/**
 * What an agent file says about itself, read without loading or leasing it.
 *
 * @public
 */
export interface AgentFileSummary {
  /** The file's real path. */
  filePath: string;
  id: string;
  name: string;
  handle: string | null;
  /** Reviewed on this machine as the file is now (the review gate would let it load). */
  reviewed: boolean;
  /** The config's `autostart`. */
  autostart: boolean;
  /** Its credentials need a password: never autostarted. */
  passwordProtected: boolean;
}

/**
 * The outcome of {@link AgentLauncher.autostart}: the body of `POST /agents/autostart` without the walk's fields.
 *
 * @public
 */
export interface AutostartReport {
  /** Files looked at. */
  scanned: number;
  started: Array<{ agentId: string; filePath: string; name: string; startupTriggered: boolean }>;
  skipped: Array<{ filePath: string; name: string; reason: AutostartSkipReason; agentId?: string }>;
  /** Files that could not be read or loaded; `name` is the file path when the file could not be read. */
  failed: Array<{ filePath: string; name: string; error: string }>;
}

/**
 * What {@link AgentLauncher.start} did.
 *
 * @public
 */
export interface AgentStartOutcome {
  agentId: string;
  /** The real path the agent was loaded from. */
  filePath: string;
  name: string;
  /** This call loaded the file (false: it was loaded already). */
  loaded: boolean;
  /** This call fired the agent's `on_startup` trigger. */
  startupTriggered: boolean;
}

/** @public */
export interface AgentLauncher {
  /**
   * Reads the file's id, name, handle, autostart flag, password protection and review state without
   * loading it: the file is opened read-only (no migration, no lease; a file another daemon runs can
   * be read) and closed before this resolves. Opening is synchronous in the kernel: call it for one
   * file at a time and let other work run in between. Rejects with an `AgtError`: `not_found` (no such
   * file), `load_failed` (not an agent file, or a config that does not validate).
   */
  summarize(filePath: string): Promise<AgentFileSummary>;
  /**
   * Loads the file (unless it is loaded already) through the review gate and starts the agent (firing
   * `on_startup` once; an agent that started already is not started again). Rejects with the errors of
   * `POST /agents/{id}/start`: 403 `AGENT_REVIEW_REQUIRED`, `not_found`, `load_failed`,
   * `agent_file_in_use`, `conflict` (another file with the same id is loaded).
   */
  start(filePath: string): Promise<AgentStartOutcome>;
  /**
   * The autostart of `POST /agents/autostart` for the given files, in order: reviewed, non-password-protected
   * files whose config says `autostart: true` are loaded and started; the others are skipped with a reason
   * (`already_loaded` when the file, or another file with the same id, is loaded); a file that cannot be read
   * or loaded is listed in `failed`. Never rejects for one file's problem. Files are read one at a time,
   * yielding to the event loop in between.
   */
  autostart(filePaths: readonly string[]): Promise<AutostartReport>;
  /**
   * Stops and unloads a loaded agent (a running turn gets the usual 5 s grace); `agent.unloaded` carries
   * `reason`. The file stays on disk. Resolves false when no agent with that id is loaded.
   */
  unload(agentId: string, reason: string): Promise<boolean>;
}
