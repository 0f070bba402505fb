/**
 * Kernel services an extension reaches through its context object (never by importing `kernel/`).
 */
import type { AgentConfig } from './agent-config.js';
import type { Settings } from './settings.js';

export interface SettingsService {
  /** The data directory (the settings file's folder). */
  readonly dataDir: string;
  /** The current settings, already validated. Do not mutate. */
  current(): Readonly<Settings>;
  /** Called after every accepted change; returns the unsubscribe function. */
  onChange(listener: (settings: Readonly<Settings>) => void): () => void;
}

/** A read-only view of one loaded agent. */
export interface AgentView {
  id: string;
  name: string;
  handle?: string;
  filePath: string | null;
  config: Readonly<AgentConfig>;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface AgentsService {
  list(): AgentView[];
  /** By id, handle or name; undefined when no loaded agent matches. */
  find(idOrName: string): AgentView | undefined;
  /** One of the agent's sealed credentials, decrypted; undefined when unset or locked. */
  readCredential(agentId: string, name: string): Promise<string | undefined>;
  /** Writes a row to the agent's `agt_logs` (origin is the extension's name). Never throws. */
  log(agentId: string, level: LogLevel, message: string, data?: unknown): void;
}

export interface InboundMessage {
  /** Where it came from: `channel:<type>`, `mesh`, `api`. Never `user` (that is chat). */
  source: string;
  sender?: string;
  text: string;
  data?: unknown;
}

export interface InboxService {
  /**
   * Commits the message to the agent's `agt_inbox` and then runs its `on_inbox` trigger.
   * Rejects with `not_found` for an agent that is not loaded.
   */
  deliver(agentId: string, message: InboundMessage): Promise<{ messageId: number }>;
}
