/**
 * Event streams wider than one daemon (`GET /events?scope=<name>`): the shipped `fleet` extension offers the
 * scope `fleet`, the events of every daemon of the fleet from a JetStream stream. The kernel writes the
 * Server-Sent Events; the scope says what to send and where a client resumes.
 */
import type { UmbilicalEvent } from './events.js';
import { createExtensionPoint } from './extension.js';

/**
 * One event of a scope, with the scope's own cursor.
 *
 * @beta
 */
export interface ScopedEvent {
  /** The scope's cursor of this event (a stream sequence): increasing, the `id:` a client resumes after. */
  cursor: number;
  event: UmbilicalEvent;
  /** The daemon that emitted it, in the scope's names. */
  daemon: string;
}

/**
 * Where a scoped stream starts and what it keeps.
 *
 * @beta
 */
export interface ScopeStart {
  /** Send the events after this cursor first, then live ones; null: live only. */
  after: number | null;
  /** Only this agent's events (an id); null: all. */
  agentId: string | null;
}

/**
 * A scope's stream, open: `close` ends it (the client went away or the daemon stops).
 *
 * @beta
 */
export interface OpenScope {
  close(): void;
}

/**
 * An event stream wider than this daemon's.
 *
 * @beta
 */
export interface EventScope {
  /** The name clients ask for (`fleet`): lowercase letters, digits and `-`; `local` is the kernel's own. */
  name: string;
  /**
   * Starts streaming: `send` for each event in cursor order, `end` once when the stream cannot go on (the
   * client is told and reconnects with its last cursor). Rejects with a coded error when it cannot start
   * (503 `unavailable`: the engine is out of reach). Must not block `send`'s caller.
   */
  open(start: ScopeStart, send: (event: ScopedEvent) => void, end: (reason: string) => void): Promise<OpenScope>;
  /**
   * Optional: the id of the agent `reference` (an id, handle or name) names when this scope carries its events
   * though it is not loaded here (it runs on another daemon of the fleet); undefined otherwise. The kernel asks
   * when `GET /events?agentId=` names no agent of its own, and then streams this scope for that agent, so a
   * client following one agent works through any daemon.
   */
  resolveAgent?(reference: string): Promise<string | undefined> | string | undefined;
}

/**
 * All providers; the first whose `name` is the asked scope serves it. A scope no provider offers is 400.
 *
 * @beta
 */
export const eventScopes = createExtensionPoint<EventScope>('agt.event-scopes', { providers: 'all' });
