/**
 * The `CREDENTIALS_LOCKED` degraded flag of loaded agents (`AgentStatus.degraded`). An
 * agent is checked when it loads, at every owner identity change, after a password unlock or lock, and
 * every minute (a timer cleared at shutdown). A change of the flag emits `agent.degraded` and writes
 * one `agt_logs` row; an unlock also seals values replaced while locked.
 */
import type { EventBus, Logger } from '@agt/contracts';
import type { LoadedAgent } from '../agents/loaded-agent.js';
import type { AgentRegistry } from '../agents/registry.js';
import type { EnvelopeState } from './key-access.js';

export const CREDENTIALS_LOCKED = 'CREDENTIALS_LOCKED';
export const RECHECK_INTERVAL_MS = 60_000;
/** Agents rechecked per turn of the event loop by the timer. */
const SLICE = 25;

/** What the watcher needs of the credentials service (which owns the watcher and hands it this view). */
export interface CredentialLocks {
  /** Whether the agent's envelope is locked now, and why. */
  state(agent: LoadedAgent): EnvelopeState;
  /** Seals the values replaced while the envelope was locked. */
  sealPending(agent: LoadedAgent): void;
  /** Drops the unlocked key of an agent that was unloaded. */
  forget(agentId: string): void;
}

export interface DegradedWatcherDeps {
  registry: AgentRegistry;
  credentials: CredentialLocks;
  bus: EventBus;
  logger: Logger;
  onIdentityChange: (listener: () => void) => () => void;
}

export class DegradedWatcher {
  private timer: NodeJS.Timeout | undefined;
  private readonly unsubscribers: Array<() => void> = [];

  constructor(private readonly deps: DegradedWatcherDeps) {}

  start(intervalMs = RECHECK_INTERVAL_MS): void {
    const { bus, registry, credentials } = this.deps;
    this.unsubscribers.push(
      bus.subscribe((event) => {
        if (!event.agent_id) return;
        if (event.event_type === 'agent.loaded') {
          // The registry emits `agent.loaded` synchronously before load() returns, so the flag is
          // already set when the load response or the next status request is served.
          const agent = registry.byId(event.agent_id);
          if (agent) this.check(agent);
        } else if (event.event_type === 'agent.unloaded') {
          credentials.forget(event.agent_id);
        }
      }),
      this.deps.onIdentityChange(() => this.checkAll()),
    );
    this.timer = setInterval(() => this.checkInSlices(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    for (const unsubscribe of this.unsubscribers.splice(0)) unsubscribe();
  }

  checkAll(): void {
    for (const agent of this.deps.registry.list()) this.check(agent);
  }

  /**
   * The timer's recheck: {@link SLICE} agents per turn of the event loop, so that a pass over 1,000
   * agents (~250 ms under load) never holds requests for its whole length.
   */
  private checkInSlices(agents = this.deps.registry.list()): void {
    for (const agent of agents.splice(0, SLICE)) this.check(agent);
    if (agents.length > 0 && this.timer) setImmediate(() => this.checkInSlices(agents)).unref();
  }

  /** Sets or clears the flag for one agent. Never throws (an agent may be closing meanwhile). */
  check(agent: LoadedAgent): void {
    try {
      if (!agent.file.isOpen) return;
      const state = this.deps.credentials.state(agent);
      if (!state.locked) this.deps.credentials.sealPending(agent);
      // The pass over every agent read pages into each connection's cache: give them back.
      agent.file.releaseMemory({ statements: false });
      if (state.locked && agent.degraded !== CREDENTIALS_LOCKED) {
        agent.degraded = CREDENTIALS_LOCKED;
        this.deps.registry.log(agent, {
          level: 'warn',
          origin: 'kernel',
          event: 'credentials_locked',
          message: `credentials are locked (${state.reason}); the agent runs degraded until they unlock`,
          data: { reason: state.reason },
        });
        this.deps.bus.emit('agent.degraded', { agentId: agent.id, payload: { degraded: CREDENTIALS_LOCKED } });
      } else if (!state.locked && agent.degraded === CREDENTIALS_LOCKED) {
        agent.degraded = null;
        this.deps.registry.log(agent, {
          level: 'info',
          origin: 'kernel',
          event: 'credentials_unlocked',
          message: 'credentials unlocked; degraded flag cleared',
        });
        this.deps.bus.emit('agent.degraded', { agentId: agent.id, payload: { degraded: null } });
      }
    } catch (error) {
      this.deps.logger.warn({ err: error, agentId: agent.id }, 'credentials lock check failed');
    }
  }
}
