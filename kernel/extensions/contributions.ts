/**
 * What extensions contribute through `ctx.contribute` and `ctx.provide`, and how several contributions
 * combine (the rules are stated on each extension point in `contracts/`).
 */
import type {
  AgentLifecycleHooks,
  Detach,
  InboxSource,
  Logger,
  ModelClient,
  ModelClientProvider,
  ModelResolveContext,
  AgentView,
  InboundMessage,
  ToolContributor,
  ToolDefinition,
} from '@agt/contracts';
import { waitAtMost } from '../deadline.js';
import { ExtensionPoints } from './points.js';

interface Owned<T> {
  owner: string;
  value: T;
}

const HOOK_DEADLINE_MS = 10_000;

/** `work`'s value, or an error naming `what` after `ms`. */
const withDeadline = <T>(work: Promise<T> | T, ms: number, what: string): Promise<T> =>
  waitAtMost(work, ms, (): never => {
    throw new Error(`${what} exceeded ${ms} ms`);
  });

export class Contributions {
  private readonly modelProviders: Owned<ModelClientProvider>[] = [];
  private readonly toolContributors: Owned<ToolContributor>[] = [];
  private readonly inboxSources: Owned<InboxSource>[] = [];
  private readonly hooks: Owned<AgentLifecycleHooks>[] = [];
  private readonly attached = new Map<string, Array<{ owner: string; detach: Detach }>>();
  /** Typed extension points (`ctx.provide`/`ctx.use`, and the kernel's own in `contracts/points.ts`). */
  readonly points = new ExtensionPoints();

  constructor(private readonly logger: Logger) {}

  /** The contribution methods handed to one extension as `ctx.contribute`. */
  forExtension(owner: string) {
    return {
      modelClients: (value: ModelClientProvider) => void this.modelProviders.push({ owner, value }),
      tools: (value: ToolContributor) => void this.toolContributors.push({ owner, value }),
      inboxSource: (value: InboxSource) => void this.inboxSources.push({ owner, value }),
      lifecycle: (value: AgentLifecycleHooks) => void this.hooks.push({ owner, value }),
    };
  }

  /**
   * Drops everything an extension contributed (it failed or was stopped), and detaches its inbox
   * sources from the agents they were attached to; the detaching runs in the background.
   */
  withdraw(owner: string): void {
    this.points.withdraw(owner);
    for (const list of [
      this.modelProviders,
      this.toolContributors,
      this.inboxSources,
      this.hooks,
    ] as Owned<unknown>[][]) {
      for (let i = list.length - 1; i >= 0; i--) if (list[i]!.owner === owner) list.splice(i, 1);
    }
    for (const [agentId, list] of this.attached) {
      const mine = list.filter((entry) => entry.owner === owner);
      if (mine.length === 0) continue;
      this.attached.set(
        agentId,
        list.filter((entry) => entry.owner !== owner),
      );
      void this.runDetach(agentId, mine);
    }
  }

  get hasModelProviders(): boolean {
    return this.modelProviders.length > 0;
  }

  /**
   * First provider that returns a client for `providerId` wins, in load order. A provider that throws
   * (it knows the id but cannot serve it) does not stop the others; when none serves, its error is
   * thrown (the first one), so the turn says why.
   */
  async resolveModelClient(providerId: string, context: ModelResolveContext): Promise<ModelClient | undefined> {
    let failure: { error: unknown } | undefined;
    for (const { value } of this.modelProviders) {
      try {
        const client = await value.resolve(providerId, context);
        if (client) return client;
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
    return undefined;
  }

  /** All contributed tools for an agent; names in `taken` (built-ins) and earlier duplicates are skipped. */
  async toolsFor(agentId: string, taken: ReadonlySet<string>): Promise<ToolDefinition[]> {
    const lists = await Promise.all(
      this.toolContributors.map(async ({ owner, value }) => {
        try {
          return await withDeadline(value.toolsFor(agentId), HOOK_DEADLINE_MS, `${owner} toolsFor`);
        } catch (error) {
          this.logger.warn({ err: error, extension: owner, agentId }, 'tool contributor failed');
          return [];
        }
      }),
    );
    const seen = new Set(taken);
    const out: ToolDefinition[] = [];
    lists.forEach((tools, index) => {
      for (const tool of tools) {
        if (seen.has(tool.name)) {
          this.logger.warn(
            { extension: this.toolContributors[index]!.owner, tool: tool.name },
            'duplicate tool name skipped',
          );
          continue;
        }
        seen.add(tool.name);
        out.push(tool);
      }
    });
    return out;
  }

  /** Runs one lifecycle phase; load order for loaded/started, reverse for stopped/unloaded. */
  async runLifecycle(phase: keyof AgentLifecycleHooks, agent: AgentView): Promise<void> {
    const ordered = phase === 'loaded' || phase === 'started' ? this.hooks : [...this.hooks].reverse();
    for (const { owner, value } of ordered) {
      const hook = value[phase];
      if (!hook) continue;
      try {
        await withDeadline(hook.call(value, agent), HOOK_DEADLINE_MS, `${owner} ${phase} hook`);
      } catch (error) {
        this.logger.warn({ err: error, extension: owner, agentId: agent.id, phase }, 'lifecycle hook failed');
      }
    }
  }

  /** Attaches every inbox source to a started agent, in parallel. */
  async attachInboxSources(
    agent: AgentView,
    deliver: (message: InboundMessage) => Promise<{ messageId: number }>,
  ): Promise<void> {
    const results = await Promise.all(
      this.inboxSources.map(async ({ owner, value }) => {
        try {
          const detach = await withDeadline(value.attach(agent, deliver), HOOK_DEADLINE_MS, `${owner} attach`);
          return detach ? { owner, detach } : null;
        } catch (error) {
          this.logger.warn({ err: error, extension: owner, agentId: agent.id }, 'inbox source attach failed');
          return null;
        }
      }),
    );
    this.attached.set(
      agent.id,
      results.filter((r): r is { owner: string; detach: Detach } => r !== null),
    );
  }

  async detachInboxSources(agentId: string): Promise<void> {
    const list = this.attached.get(agentId) ?? [];
    this.attached.delete(agentId);
    await this.runDetach(agentId, list);
  }

  private async runDetach(agentId: string, list: Array<{ owner: string; detach: Detach }>): Promise<void> {
    await Promise.all(
      list.map(async ({ owner, detach }) => {
        try {
          await withDeadline(detach(), HOOK_DEADLINE_MS, `${owner} detach`);
        } catch (error) {
          this.logger.warn({ err: error, extension: owner, agentId }, 'inbox source detach failed');
        }
      }),
    );
  }
}
