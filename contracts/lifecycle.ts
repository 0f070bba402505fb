/**
 * Agent lifecycle hooks and inbound message sources (channels, mesh).
 *
 * Combination rules:
 * - `loaded` and `started` run sequentially in extension load order; `stopped` and `unloaded` run
 *   sequentially in reverse order. Each call has a 10 s deadline; an error is logged and the next
 *   hook still runs: a hook can never stop an agent from loading or unloading.
 * - Every {@link InboxSource} is attached, in parallel, to every loaded agent (a loaded agent runs:
 *   its triggers and timers are live); the function it returns is called when the agent unloads or
 *   the extension stops. A failing attach is logged and the others go on.
 */
import type { AgentView, InboundMessage } from './services.js';

/** @public */
export interface AgentLifecycleHooks {
  loaded?(agent: AgentView): Promise<void> | void;
  started?(agent: AgentView): Promise<void> | void;
  stopped?(agent: AgentView): Promise<void> | void;
  unloaded?(agent: AgentView): Promise<void> | void;
}

/** @public */
export type Deliver = (message: InboundMessage) => Promise<{ messageId: number }>;

/** @public */
export interface InboxSource {
  name: string;
  /** Starts listening for this agent; returns how to stop. Must not block longer than needed to bind. */
  attach(agent: AgentView, deliver: Deliver): Promise<Detach | void> | Detach | void;
}

/** @public */
export type Detach = () => Promise<void> | void;
