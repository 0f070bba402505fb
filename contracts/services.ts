/**
 * Kernel services an extension reaches through its context object (never by importing `kernel/`).
 */
import type { AgentConfig } from './agent-config.js';
import type { AgentKeysAccess } from './agent-keys.js';
import type { AgentSnapshots } from './agent-snapshots.js';
import type { AgentFetch, AgentTurnsAccess } from './agent-turns.js';
import type { OwnerTasksAccess } from './owner-tasks.js';
import type { RunAgentLambda } from './agent-lambdas.js';
import type { CommandOutcome, CommandRun } from './commands.js';
import type { SpawnSandboxed } from './sandboxed-processes.js';
import type { Settings } from './settings.js';

/** @public */
export interface SettingsService {
  /** The data directory (the settings file's folder). */
  readonly dataDir: string;
  /** The current settings, already validated. Do not mutate. */
  current(): Readonly<Settings>;
  /** Called after every accepted change; returns the unsubscribe function. */
  onChange(listener: (settings: Readonly<Settings>) => void): () => void;
  /**
   * Merges `patch` into the settings, validates, persists and applies them as `PATCH /settings` does
   * (listeners run before it returns). Throws `bad_request` for an invalid result. For settings an
   * extension owns (the mesh's `meshServerEnabled`, `meshLan`); never write another extension's keys.
   */
  update(patch: Partial<Settings>): Readonly<Settings>;
}

/**
 * A read-only view of one loaded agent.
 *
 * @public
 */
export interface AgentView {
  id: string;
  name: string;
  handle?: string;
  filePath: string | null;
  config: Readonly<AgentConfig>;
}

/** @public */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/**
 * One of an agent's stored files (what its `fs_*` tools see), without content.
 *
 * @public
 */
export interface AgentFileInfo {
  /** Relative, `/`-separated, no `.` or `..` segments. */
  path: string;
  mimeType: string | null;
  size: number;
  /** Epoch milliseconds. */
  updatedAt: number;
}

/** @public */
export interface AgentFile extends AgentFileInfo {
  content: Buffer;
}

/**
 * A loaded agent's stored files (`agt_files`), for extensions that serve them (agent websites) or store
 * into them (channel attachments). Paths are checked by the kernel: an empty path, `\\`, NUL, `.` or
 * `..` segments reject with `bad_request` (a hostile path never names another file). An agent that is
 * not loaded rejects with `not_found`.
 *
 * @public
 */
export interface AgentFilesAccess {
  /** Files under `folder` (`''` for all), sorted by path. */
  list(agentId: string, folder?: string): Promise<AgentFileInfo[]>;
  /** The file, or undefined when there is none at `path`. */
  read(agentId: string, path: string): Promise<AgentFile | undefined>;
  /** Creates or replaces the file; emits nothing (the caller announces what it stored). */
  write(agentId: string, path: string, content: Uint8Array | string, mimeType?: string | null): Promise<AgentFileInfo>;
  /** False when there was no such file. */
  remove(agentId: string, path: string): Promise<boolean>;
}

/** @public */
export interface AgentsService {
  list(): AgentView[];
  /** By id, handle or name; undefined when no loaded agent matches. */
  find(idOrName: string): AgentView | undefined;
  /** One of the agent's sealed credentials, decrypted; undefined when unset or locked. */
  readCredential(agentId: string, name: string): Promise<string | undefined>;
  /** The agent's stored files. */
  readonly files: AgentFilesAccess;
  /** The agent's Ed25519 identity: its DID, public key, and signing without the secret key leaving the kernel. */
  readonly keys: AgentKeysAccess;
  /** Runs one of the agent's lambdas in the kernel's sandbox, with a time limit (see `agent-lambdas.ts`). */
  readonly runLambda: RunAgentLambda;
  /**
   * Start, interrupt and answer agents' turns (see `agent-turns.ts`): the daemon's kernel always offers
   * it; a fake kernel in tests may not.
   */
  readonly turns?: AgentTurnsAccess;
  /**
   * What waits for the owner (approvals, budget stops, asks, suspend prompts), listed, followed and answered
   * as the owner (see `owner-tasks.ts`): the daemon's kernel always offers it; a fake kernel may not.
   */
  readonly tasks?: OwnerTasksAccess;
  /**
   * An HTTP(S) request under the agent's fetch policy (see `AgentFetch` in `agent-turns.ts`); absent in fake kernels.
   */
  readonly fetch?: AgentFetch;
  /**
   * Replaces a loaded agent's config as `PUT /agents/{id}/config` does: validated against the agent
   * config schema (and the no-secrets rule), persisted, applied, `agent.config.changed` emitted. For an
   * extension's own routes that edit its part of the config (`adapters`, `mcp`); read the current config
   * from {@link find} and change only your part. Rejects `bad_request` (invalid), `not_found` (not loaded).
   */
  updateConfig(agentId: string, next: AgentConfig): Promise<void>;
  /**
   * Runs a shell command for a loaded agent in the kernel's host runner, the one system-scope `command`
   * targets use without a container: a bubblewrap sandbox per command (own pid, mount, IPC and empty
   * network namespaces, read-only system folders, the agent's kept work folder at `/work`, rlimits from
   * settings `commandLimits`, the agent's own uid when the daemon is root), a minimal environment;
   * refused with `unavailable` where no sandbox can be made unless the agent's effective
   * `security.allow_unsandboxed_commands` is true, and with `work_folder_full` while the agent's work
   * folder is over settings `commandLimits.workBytes`. The outcome's `target` is `host`; output is cut at
   * 512 KB per stream. Rejects `not_found` for an agent that is not loaded.
   */
  runHostCommand(run: CommandRun): Promise<CommandOutcome>;
  /**
   * Starts a long-lived process (an MCP server over stdio) in the agent's command sandbox, the one
   * {@link runHostCommand} makes, with pipes for its stdin, stdout and stderr (see `sandboxed-processes.ts`):
   * refused with `unavailable` where no sandbox can be made, never run unsandboxed; killed when the agent
   * unloads and when the daemon stops. Absent in fake kernels.
   *
   * @beta
   */
  spawnSandboxed?: SpawnSandboxed;
  /**
   * The host path of the agent's work folder (`/work` inside its command sandbox, kept between commands),
   * made (0700) when missing: for a process the owner lets work in it (an MCP server given it as its root).
   * Rejects `not_found` for an agent that is not loaded, `agent_id_conflict` when it does not hold
   * the key the folder is bound to. Absent in fake kernels.
   */
  workFolder?(agentId: string): Promise<string>;
  /** Writes a row to the agent's `agt_logs` (origin is the extension's name). Never throws. */
  log(agentId: string, level: LogLevel, message: string, data?: unknown): void;
  /**
   * Consistent copies of a loaded agent's file, for replicating it elsewhere (see `agent-replication.ts`);
   * absent in fake kernels.
   *
   * @beta
   */
  readonly snapshots?: AgentSnapshots;
}

/** @public */
export interface InboundMessage {
  /** Where it came from: `channel:<type>`, `mesh`, `api`. Never `user` (that is chat). */
  source: string;
  sender?: string;
  text: string;
  data?: unknown;
  /**
   * The message's id at its origin (a mesh envelope id, a platform message id). When given, the agent
   * keeps one row per `source` + `externalId`: a replay is answered with the first row's id and
   * `duplicate: true`, and neither commits a row nor runs `on_inbox` again (at most 200 characters).
   */
  externalId?: string;
  /**
   * The W3C `traceparent` the message arrived with (a mesh envelope's `payload.traceparent`). The kernel
   * hands a well-formed one to the `traceContext` provider (`contracts/trace-context.ts`) after the row is
   * committed; it is not stored.
   */
  traceparent?: string;
}

/**
 * One row of an agent's `agt_inbox`.
 *
 * @public
 */
export interface InboxRow {
  id: number;
  source: string;
  sender: string | null;
  text: string;
  data: unknown;
  status: string;
  externalId: string | null;
  /** Epoch milliseconds. */
  createdAt: number;
}

/** @public */
export interface InboxService {
  /**
   * Commits the message to the agent's `agt_inbox` and then runs its `on_inbox` trigger.
   * Rejects with `not_found` for an agent that is not loaded.
   */
  deliver(agentId: string, message: InboundMessage): Promise<{ messageId: number; duplicate?: boolean }>;
  /** One inbox row of a loaded agent (for replies by `parent_id`); undefined when there is none. */
  get(agentId: string, messageId: number): Promise<InboxRow | undefined>;
}
