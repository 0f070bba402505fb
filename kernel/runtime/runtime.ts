/**
 * The runtime service: one {@link AgentRuntime} per loaded agent, driven by the registry through the
 * {@link AgentRuntimeHooks} it is given as, plus what the routes share (lookup
 * by `{id}`). Idempotency keys live in each agent's file (`agt_idempotency`).
 */
import type { LoadedAgent } from '../agents/loaded-agent.js';
import type { AgentRuntimeHooks, RuntimeStatus } from '../agents/runtime-hooks.js';
import type { InboxMessage } from '../agents/stores/message-stores.js';
import { agentIdNotLoaded } from '../agents/errors.js';
import type { Contributions } from '../extensions/contributions.js';
import { executeCommand, sendOutbound, toolCallTrace } from '../extensions/kernel-points.js';
import type { KernelBus } from '../events/bus.js';
import type { AgentConfig, Logger, ModelClient, ToolDefinition, Settings } from '@agt/contracts';
import { AgentRuntime } from './agent-runtime.js';
import type { RuntimeDeps } from './runtime-deps.js';
import type { HostCommandRunner } from './sandbox/command-runner.js';
import { systemClock, type Clock } from './clock.js';
import { agentNotRunning } from './errors.js';
import { SpendGovernor, type GovernedAgent } from '../spend/governor.js';
import { MemoryService } from '../memory/service.js';
import type { ToolReplayer } from './executor/loop-setup.js';

export interface Accepted {
  accepted: true;
  turnId: string;
}

/** What the runtime uses of the rest of the kernel (handed over by the composition root). */
export interface RuntimeServiceDeps {
  bus: KernelBus;
  logger: Logger;
  contributions: Contributions;
  /** The built-in tools (they reach the runtime back through its `byId`). */
  builtinTools(): ToolDefinition[];
  /** One of the agent's sealed credentials, decrypted; undefined when unset or locked. */
  readCredential(agentId: string, name: string): Promise<string | undefined>;
  /** A loaded agent by `{id}` (id, handle or name): 404/409 as every agent route. */
  resolveAgent(idOrName: string): LoadedAgent;
  /** A loaded agent by exact id. */
  findAgent(agentId: string): LoadedAgent | undefined;
  /** Validates, persists and applies a new config (the agent's own config tool). */
  updateConfig(agent: LoadedAgent, next: AgentConfig): Promise<void>;
  /** The daemon's host command runner (agents' sandboxed commands). */
  hostCommands: HostCommandRunner;
  /** The owner's settings as they are now (prices, budgets, time zone of the spend governor). */
  settings(): Readonly<Settings>;
  /** Every loaded agent (the daemon-wide budgets sum their ledgers). */
  listAgents(): LoadedAgent[];
}

export class RuntimeService implements AgentRuntimeHooks {
  private readonly runtimes = new Map<string, AgentRuntime>();
  /** Every model client the runtime resolves is wrapped by it (docs/costs.md). */
  readonly governor: SpendGovernor;
  /** Every agent's long-term memory (docs/memory.md). */
  readonly memory: MemoryService;
  /** Eval copies whose tools answer from a recording (docs/evals.md), by agent id. */
  readonly replays = new Map<string, ToolReplayer>();

  /** `clock` is replaceable before agents load (tests drive timers and trigger timing with a fake). */
  constructor(
    private readonly services: RuntimeServiceDeps,
    public clock: Clock = systemClock,
  ) {
    this.governor = new SpendGovernor({
      settings: () => services.settings(),
      now: () => this.clock.now(),
      agents: () => services.listAgents(),
      emit: (type, agentId, payload, where) =>
        services.bus.emit(type, { agentId, payload, source: 'runtime', ...where }),
      hil: (agentId) => this.runtimes.get(agentId)?.hil,
      providerKind: (agent, providerId) =>
        (agent.config.providers ?? []).find((p) => p.id === providerId)?.type ??
        (services.settings().providers ?? []).find((p) => p.id === providerId)?.type,
    });
    this.memory = new MemoryService({
      settings: () => services.settings(),
      now: () => this.clock.now(),
      logger: services.logger,
      resolveClient: (agent, providerId) => this.resolveModel(agent, providerId),
      secrets: async (agent) => {
        const values = await Promise.all(
          agent.file.credentials.list().map((c) => services.readCredential(agent.id, c.name).catch(() => undefined)),
        );
        return values.filter((v): v is string => typeof v === 'string' && v !== '');
      },
      emit: (agent, type, payload, where) =>
        services.bus.emit(type, { agentId: agent.id, payload, source: 'runtime', ...where }),
      agent: (agentId) => services.findAgent(agentId),
    });
    // Log rows written outside the runtime (kernel, extensions) feed `on_logs` too; the runtime offers
    // its own rows itself, with their loop, so self-suppression can apply.
    services.bus.subscribe((event) => {
      if (event.event_type !== 'log.written' || event.source === 'runtime' || !event.agent_id) return;
      const payload = event.payload as { level: string; origin: string | null; event: string | null; message: string };
      this.runtimes.get(event.agent_id)?.fire('on_logs', payload);
    });
  }

  private deps(): RuntimeDeps {
    const { bus, logger, contributions } = this.services;
    return {
      bus,
      logger,
      clock: this.clock,
      hasModelProviders: () => contributions.hasModelProviders,
      // The one place model clients come from: each is wrapped by the spend governor.
      resolveModel: (agent, providerId) => this.resolveModel(agent, providerId),
      memory: this.memory,
      builtinTools: () => this.services.builtinTools(),
      contributedTools: (agentId, taken) => contributions.toolsFor(agentId, taken),
      toolReplay: (agentId) => this.replays.get(agentId),
      sendOutbound: (envelope, report) =>
        sendOutbound(contributions.points, envelope, report, (message) => logger.warn(message)),
      executeCommand: (run) => executeCommand(contributions.points, run),
      toolTrace: (call) => toolCallTrace(contributions.points, call),
      hostCommands: this.services.hostCommands,
      // The ends of turns leave the agent file only once the event streams took them.
      whenSent: (done) => bus.whenSent(done),
      frames: {
        nextOrigin: () => bus.nextOrigin(),
        emitRepeat: (type, input, repeats) => void bus.emit(type, input, repeats),
      },
      updateConfig: async (agentId, next) => {
        const agent = this.services.findAgent(agentId);
        if (!agent) throw agentIdNotLoaded(agentId);
        await this.services.updateConfig(agent, next);
      },
    };
  }

  /** A model client for work done for an agent outside its turns (an eval judge), counted like its own calls. */
  modelClient(agent: GovernedAgent, providerId: string): Promise<ModelClient | undefined> {
    return this.resolveModel(agent, providerId);
  }

  /** The one place model clients come from: each is wrapped by the spend governor. */
  private async resolveModel(agent: GovernedAgent, providerId: string): Promise<ModelClient | undefined> {
    const client = await this.services.contributions.resolveModelClient(providerId, {
      agentId: agent.id,
      agentProviders: agent.config.providers ?? [],
      readCredential: (name) => this.services.readCredential(agent.id, name),
    });
    return client && this.governor.wrap(agent, providerId, client);
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
    // Forgotten memories past their keeping go; memories saved while no embedding model was set, or under
    // another one, get their vectors now.
    this.memory.loaded(agent);
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
    const agent = this.services.resolveAgent(idOrName);
    const runtime = this.runtimes.get(agent.id);
    if (!runtime) throw agentNotRunning(idOrName);
    return runtime;
  }

  /** By exact agent id (built-in tools); undefined when not loaded. */
  byId(agentId: string): AgentRuntime | undefined {
    return this.runtimes.get(agentId);
  }
}
