/**
 * Every agent's adapters: started when the agent is attached (it loaded), reconciled with its
 * `adapters` config whenever that changes (start, stop or restart only what differs), with the set of
 * installed types, and when a credential or the owner identity changes (an adapter in `error` tries
 * again), stopped at unload and shutdown. Work for one agent is serialized; agents never wait on each other.
 */
import type { Deliver, Detach } from '@agt/contracts';
import type { Logger } from '@agt/contracts';
import type { AgentsService, AgentView } from '@agt/contracts';
import type { AdapterInbound } from './adapter.js';
import { receiveInbound } from './inbound.js';
import { AdapterInstance, type RecentError } from './instance.js';
import type { OwnerTaskBridge } from './owner-tasks.js';
import { replyBody } from './task-prompts.js';
import type { ChannelsOptions } from './options.js';
import type { AdapterTypeRegistry } from './types-registry.js';

export const DEFAULT_MAX_ATTACHMENT = 10 * 1024 * 1024;

interface AgentEntry {
  deliver: Deliver;
  /** `key`: what the instance was built from (the agent's config and the owner's options of its type). */
  instances: Map<string, { instance: AdapterInstance; key: string }>;
  queue: Promise<void>;
}

export interface AdapterReport {
  type: string;
  enabled: boolean;
  status: 'connected' | 'connecting' | 'disconnected' | 'error';
  error?: string;
  connectedAt?: number;
  restartCount: number;
  recentErrors: RecentError[];
}

interface Configured {
  enabled: boolean;
  config?: Record<string, unknown>;
  policy?: Record<string, unknown>;
  limits?: { max_attachment_size?: number };
}

export class ChannelManager {
  // A policy change applies to the next message without a reconnect: it is not part of an instance's key.
  private readonly agents = new Map<string, AgentEntry>();
  private stopping = false;
  /** Owner tasks on the platforms (set once by the extension; absent on a kernel without `ctx.agents.tasks`). */
  tasks: OwnerTaskBridge | undefined;

  constructor(
    private readonly deps: {
      agents: AgentsService;
      types: AdapterTypeRegistry;
      logger: Logger;
      options: ChannelsOptions;
    },
  ) {}

  /**
   * New owner options (the extension's `reconfigure`): every adapter built from options that changed
   * (its type's settings such as Telegram's `apiRoot`, or the reconnect timings) reconnects with them.
   */
  reconfigure(options: ChannelsOptions): Promise<void> {
    this.deps.options = options;
    return this.reconcileAll();
  }

  /** The instance key: the agent's adapter config and the owner's options that shape this type's instance. */
  private keyOf(type: string, config: Configured): string {
    const { reconnectBaseMs, reconnectMaxMs, connectTimeoutMs, types } = this.deps.options;
    return JSON.stringify([
      config.config ?? {},
      config.limits ?? {},
      types[type] ?? {},
      reconnectBaseMs,
      reconnectMaxMs,
      connectTimeoutMs,
    ]);
  }

  /** The inbox source's attach: the agent is loaded; its adapters start. */
  attach(agent: AgentView, deliver: Deliver): Detach {
    const entry: AgentEntry = { deliver, instances: new Map(), queue: Promise.resolve() };
    this.agents.set(agent.id, entry);
    void this.reconcile(agent.id);
    return async () => {
      if (this.agents.get(agent.id) === entry) this.agents.delete(agent.id);
      await this.serialized(entry, () => this.stopAll(entry));
    };
  }

  /** Brings the agent's running adapters in line with its config and the installed types. */
  reconcile(agentId: string): Promise<void> {
    const entry = this.agents.get(agentId);
    if (!entry) return Promise.resolve();
    return this.serialized(entry, async () => {
      const agent = this.deps.agents.list().find((candidate) => candidate.id === agentId);
      if (!agent || this.agents.get(agentId) !== entry || this.stopping) return;
      const wanted = (agent.config.adapters ?? {}) as Record<string, Configured>;
      for (const [type, running] of [...entry.instances]) {
        const config = wanted[type];
        const kind = this.deps.types.get(type);
        if (!config?.enabled || kind !== running.instance.kind || this.keyOf(type, config) !== running.key) {
          entry.instances.delete(type);
          await running.instance.stop();
        } else running.instance.settings.policy = config.policy;
      }
      for (const [type, config] of Object.entries(wanted)) {
        const kind = this.deps.types.get(type);
        if (!config?.enabled || !kind || entry.instances.has(type)) continue;
        const instance = new AdapterInstance(
          agentId,
          kind,
          {
            config: config.config ?? {},
            policy: config.policy,
            maxAttachmentSize: config.limits?.max_attachment_size ?? DEFAULT_MAX_ATTACHMENT,
          },
          {
            receive: (from, message) => this.receive(agentId, from, message),
            readCredential: (id, name) => this.deps.agents.readCredential(id, name),
            logger: this.deps.logger,
            options: (this.deps.options.types[type] ?? {}) as Record<string, unknown>,
            reconnectBaseMs: this.deps.options.reconnectBaseMs,
            reconnectMaxMs: this.deps.options.reconnectMaxMs,
            connectTimeoutMs: this.deps.options.connectTimeoutMs,
            connected: (connected) => this.tasks?.connected(connected),
            answerTask: async (from, press) =>
              this.tasks ? this.tasks.press(from, press) : { ok: false, message: 'Tasks are not offered here.' },
          },
        );
        entry.instances.set(type, { instance, key: this.keyOf(type, config) });
        instance.start();
      }
    });
  }

  reconcileAll(): Promise<void> {
    return Promise.all([...this.agents.keys()].map((id) => this.reconcile(id))).then(() => undefined);
  }

  /** Adapters in `error` of this agent (all agents when undefined), or of one type, try again. */
  retryErrored(agentId?: string, type?: string): void {
    for (const [id, entry] of this.agents) {
      if (agentId !== undefined && id !== agentId) continue;
      for (const { instance } of entry.instances.values()) {
        if (instance.status === 'error' && (type === undefined || instance.type === type))
          void this.serialized(entry, () => instance.restart());
      }
    }
  }

  /** The agent's adapters that are connected now. */
  connected(agentId: string): AdapterInstance[] {
    const entry = this.agents.get(agentId);
    return entry
      ? [...entry.instances.values()].map(({ instance }) => instance).filter((i) => i.status === 'connected')
      : [];
  }

  instance(agentId: string, type: string): AdapterInstance | undefined {
    return this.agents.get(agentId)?.instances.get(type)?.instance;
  }

  async restart(agentId: string, type: string): Promise<boolean> {
    const entry = this.agents.get(agentId);
    const running = entry?.instances.get(type);
    if (!entry || !running) return false;
    await this.serialized(entry, () => running.instance.restart());
    return true;
  }

  /** What `GET /agents/{id}/adapters` shows: every configured type, running or not. */
  report(agent: AgentView): AdapterReport[] {
    const wanted = (agent.config.adapters ?? {}) as Record<string, Configured>;
    return Object.keys(wanted)
      .sort()
      .map((type) => this.reportOne(agent, type, wanted[type]!));
  }

  reportOne(agent: AgentView, type: string, config: { enabled: boolean }): AdapterReport {
    const instance = this.instance(agent.id, type);
    if (!instance) {
      const installed = this.deps.types.get(type) !== undefined;
      return {
        type,
        enabled: Boolean(config.enabled),
        status: config.enabled && !installed ? 'error' : 'disconnected',
        ...(config.enabled && !installed ? { error: `no adapter type "${type}" is installed` } : {}),
        restartCount: 0,
        recentErrors: [],
      };
    }
    return {
      type,
      enabled: Boolean(config.enabled),
      status: instance.status,
      ...(instance.error ? { error: instance.error } : {}),
      ...(instance.connectedAt !== undefined ? { connectedAt: instance.connectedAt } : {}),
      restartCount: instance.restartCount,
      recentErrors: [...instance.recentErrors],
    };
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const entries = [...this.agents.values()];
    this.agents.clear();
    await Promise.all(entries.map((entry) => this.serialized(entry, () => this.stopAll(entry))));
  }

  private async receive(agentId: string, instance: AdapterInstance, message: AdapterInbound): Promise<void> {
    const entry = this.agents.get(agentId);
    if (!entry || entry.instances.get(instance.type)?.instance !== instance) return;
    // A reply to a posted owner task is an answer to it (or a refusal), never an inbox row.
    const receipt = await this.tasks?.reply(instance, { ...message, text: replyBody(message) });
    if (receipt !== undefined) {
      // Not awaited: an adapter may hold its inbound side until this returns (the email adapter's mailbox
      // lock), and a reply's send may need that side (looking up the mail answered).
      void instance
        .connectedAdapter()
        ?.send({
          chatId: message.chatId,
          text: receipt,
          ...(message.threadId ? { threadId: message.threadId } : {}),
          replyToId: message.messageId,
          outboxId: 0,
          chunk: 0,
        })
        .catch((error: unknown) =>
          this.deps.logger.debug(
            { agentId, adapter: instance.type, err: error instanceof Error ? error.message : String(error) },
            'owner task receipt not sent',
          ),
        );
      return;
    }
    await receiveInbound(this.deps.agents, entry.deliver, instance, message);
  }

  private async stopAll(entry: AgentEntry): Promise<void> {
    const running = [...entry.instances.values()];
    entry.instances.clear();
    await Promise.all(running.map(({ instance }) => instance.stop()));
  }

  private serialized(entry: AgentEntry, work: () => Promise<void>): Promise<void> {
    const next = entry.queue.then(work, work).catch((error: unknown) => {
      this.deps.logger.warn(
        { err: error instanceof Error ? error.message : String(error) },
        'channels: reconcile failed',
      );
    });
    entry.queue = next;
    return next;
  }
}
