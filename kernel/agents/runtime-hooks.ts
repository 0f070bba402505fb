/**
 * How the registry drives the agent runtime (executors, triggers, timers) without depending on it. The
 * composition root hands the runtime service to the registry as these hooks.
 *
 * Call order: `attach` after the file is open and leased (before `agent.loaded` is emitted); `loaded`
 * right after `agent.loaded`; `configChanged` after a new config is committed; `detach` before the file
 * closes. `status` is called
 * synchronously by `GET /agents/{id}/status` and must not block.
 */
import type { AgentConfig } from '@agt/contracts';
import type { InboxMessage } from './stores/message-stores.js';
import type { LoadedAgent } from './loaded-agent.js';

export interface RuntimeStatus {
  /** Executor state of main (`idle`, `thinking`, ...) or a display state. */
  runtimeState: string;
  /** Where the runtime is heading (for example `off` while draining), or null. */
  targetState: string | null;
}

export interface AgentRuntimeHooks {
  /** Builds executors for a freshly loaded agent. A throw fails the load (the file is closed again). */
  attach(agent: LoadedAgent): Promise<void>;
  /**
   * The agent was announced (`agent.loaded`) and answers requests: recover what a restart left in its
   * file (accepted turns, requests to the owner). Synchronous: nothing else runs before it.
   */
  loaded?(agent: LoadedAgent): void;
  /**
   * The config was replaced (committed already); re-derive executors, triggers and loops. Must not move the display
   * state.
   */
  configChanged(agent: LoadedAgent, previous: Readonly<AgentConfig>): Promise<void> | void;
  /**
   * Stops everything of this agent: a running turn gets `graceMs` to finish, then is aborted; queued
   * chats are discarded (`chat.discarded`); timers are cleared. Resolves when nothing of it runs.
   * With `reason: "shutdown"` (or `"lease_lost"`) accepted work is kept in the file for the next load
   * instead: queued turns stay queued and a turn waiting for the owner is parked.
   */
  detach(agent: LoadedAgent, options: { graceMs: number; reason: string }): Promise<void>;
  status(agent: LoadedAgent): RuntimeStatus;
  /** The agent was started (start route, autostart, create): fires `on_startup`; true when a target took it. */
  start?(agent: LoadedAgent): boolean;
  /** A message was committed to the agent's inbox (by `kernel.inbox.deliver`); run `on_inbox`. */
  inboxReceived?(agent: LoadedAgent, message: InboxMessage): Promise<void> | void;
}
