/**
 * The runtime service: one {@link AgentRuntime} per loaded agent, driven by the registry through the
 * {@link AgentRuntimeHooks} it is installed as (`kernel.runtime`), plus what the routes share (lookup
 * by `{id}`). Idempotency keys live in each agent's file (`agt_idempotency`).
 */
import { AgtError } from '../../contracts/errors.js';
import type { LoadedAgent } from '../agents/loaded-agent.js';
import type { AgentRuntimeHooks, RuntimeStatus } from '../agents/runtime-hooks.js';
import type { InboxMessage } from '../agents/stores/message-stores.js';
import type { Kernel } from '../kernel.js';
import { AgentRuntime, type RuntimeDeps } from './agent-runtime.js';
import { systemClock, type Clock } from './clock.js';

export interface Accepted {
  accepted: true;
  turnId: string;
}

export class RuntimeService implements AgentRuntimeHooks {
  private readonly runtimes = new Map<string, AgentRuntime>();

  /** `clock` is replaceable before agents load (tests drive timers and trigger timing with a fake). */
  constructor(
    private readonly kernel: Kernel,
    public clock: Clock = systemClock,
  ) {
    // Log rows written outside the runtime (kernel, extensions) feed `on_logs` too; the runtime offers
    // its own rows itself, with their loop, so self-suppression can apply.
    kernel.bus.subscribe((event) => {
      if (event.event_type !== 'log.written' || event.source === 'runtime' || !event.agent_id) return;
      const payload = event.payload as { level: string; origin: string | null; event: string | null; message: string };
      this.runtimes.get(event.agent_id)?.fire('on_logs', payload);
    });
  }

  private deps(): RuntimeDeps {
    const kernel = this.kernel;
    return {
      bus: kernel.bus,
      logger: kernel.logger,
      clock: this.clock,
      hasModelProviders: () => kernel.contributions.hasModelProviders,
      resolveModel: (agent, providerId) =>
        kernel.contributions.resolveModelClient(providerId, {
          agentId: agent.id,
          agentProviders: agent.config.providers ?? [],
          readCredential: (name) => kernel.agents.readCredential(agent.id, name),
        }),
      builtinTools: () => kernel.builtinTools,
      contributedTools: (agentId, taken) => kernel.contributions.toolsFor(agentId, taken),
      updateConfig: async (agentId, next) => {
        const agent = kernel.registry.list().find((candidate) => candidate.id === agentId);
        if (!agent) throw new AgtError('not_found', `agent ${agentId} is not loaded`);
        await kernel.registry.updateConfig(agent, next);
      },
    };
  }

  async attach(agent: LoadedAgent): Promise<void> {
    const runtime = new AgentRuntime(agent, this.deps());
    this.runtimes.set(agent.id, runtime);
    agent.attachments.set('runtime', runtime);
    runtime.activate();
  }

  /** The agent is loaded and announced: what a restart left in its file runs, resumes or is ended. */
  loaded(agent: LoadedAgent): void {
    this.runtimes.get(agent.id)?.recover();
  }

  configChanged(agent: LoadedAgent): void {
    this.runtimes.get(agent.id)?.configChanged();
  }

  async detach(agent: LoadedAgent, options: { graceMs: number; reason: string }): Promise<void> {
    const runtime = this.runtimes.get(agent.id);
    if (!runtime) return;
    try {
      await runtime.detach(options.graceMs, options.reason);
    } finally {
      this.runtimes.delete(agent.id);
      agent.attachments.delete('runtime');
    }
  }

  status(agent: LoadedAgent): RuntimeStatus {
    return this.runtimes.get(agent.id)?.status() ?? { runtimeState: agent.displayState, targetState: null };
  }

  inboxReceived(agent: LoadedAgent, message: InboxMessage): void {
    this.runtimes.get(agent.id)?.fire('on_inbox', {
      messageId: message.id,
      source: message.source,
      sender: message.sender,
      text: message.text,
      data: message.data,
    });
  }

  /**
   * The agent was started (start route, autostart): fires `on_startup`. Returns
   * `startupTriggered` (a target took the startup event).
   */
  start(agent: LoadedAgent): boolean {
    return this.runtimes.get(agent.id)?.start() ?? false;
  }

  /** The runtime of a loaded agent (`{id}` is id, handle or name); 404 when none is loaded. */
  forRequest(idOrName: string): AgentRuntime {
    const agent = this.kernel.registry.resolve(idOrName);
    const runtime = this.runtimes.get(agent.id);
    if (!runtime) throw new AgtError('not_found', `agent ${idOrName} is not running`);
    return runtime;
  }

  /** By exact agent id (built-in tools); undefined when not loaded. */
  byId(agentId: string): AgentRuntime | undefined {
    return this.runtimes.get(agentId);
  }
}
