/**
 * The `channels` extension: agents reached on chat platforms. Each agent's
 * `adapters.<type>` config runs one adapter (Telegram, Slack, Discord, email, or a type another extension
 * adds through `channels.adapter-types`) from the moment the agent loads until it unloads; inbound messages
 * pass the agent's policy into its inbox, and `msg_send` to `<type>:<chat id>` goes out through the
 * outbox transport; what an agent waits on (approvals, asks) is posted to the owner's own accounts with
 * buttons (owner-tasks.ts). Routes: `GET /channels` and `/agents/{id}/adapters`.
 */
import type { OutboundEnvelope } from '@agt/contracts';
import { outboundTransports, parentIdOf } from '@agt/contracts';
import { defineExtension } from '@agt/contracts';
import { channelAdapterTypes } from './adapter.js';
import { BUILTIN_ADAPTER_TYPES } from './adapters/index.js';
import { ChannelManager } from './manager.js';
import { ChannelsOptions } from './options.js';
import { OwnerTaskBridge } from './owner-tasks.js';
import { channelsTransport, type ThreadIds } from './outbound.js';
import { registerAgentAdapterRoutes, registerChannelRoutes } from './routes.js';
import { TAG } from './schemas.js';
import { AdapterTypeRegistry } from './types-registry.js';

const stringOf = (value: unknown) =>
  typeof value === 'string' && value !== '' ? value : typeof value === 'number' ? String(value) : undefined;

export default defineExtension({
  name: 'channels',
  version: '1.0.0',
  contract: '1.0',
  prefix: '/channels',
  agentRoutes: 'adapters',
  routeGroups: [TAG],
  options: ChannelsOptions,
  register(ctx) {
    const types = new AdapterTypeRegistry();
    for (const type of BUILTIN_ADAPTER_TYPES) types.add(type);
    // The owner's options in force: `reconfigure` replaces them (ctx.config keeps the start-up value).
    let options = ctx.config;
    const manager = new ChannelManager({ agents: ctx.agents, types, logger: ctx.logger, options });
    const stopping = new AbortController();
    // Owner tasks (approvals, budget stops, asks, suspends) posted to the owner's own accounts: owner-tasks.ts.
    const tasks = ctx.agents.tasks;
    const bridge = tasks
      ? new OwnerTaskBridge({
          tasks,
          owners: () => options.owners,
          connected: (agentId) => manager.connected(agentId),
          logger: ctx.logger,
        })
      : undefined;
    manager.tasks = bridge;

    ctx.provide(channelAdapterTypes, types);
    ctx.contribute.inboxSource({ name: 'channels', attach: (agent, deliver) => manager.attach(agent, deliver) });

    // A reply names the message it answers in `data` (`parent_id`: the inbox row; or the platform's own
    // `reply_to_id` / `thread_id`): the parent row's chat fills an address without a chat id.
    // Only a parent that came in through the same adapter type: another platform's ids mean nothing here.
    const parentOf = async (envelope: OutboundEnvelope) => {
      const id = parentIdOf(envelope);
      if (id === undefined) return undefined;
      const row = await ctx.inbox.get(envelope.agentId, id);
      const type = envelope.address.slice(0, envelope.address.indexOf(':')).toLowerCase();
      return row && row.source === `channel:${type}` ? ((row.data ?? {}) as Record<string, unknown>) : undefined;
    };
    const transport = channelsTransport({
      types: () => types.list(),
      instance: (agentId, type) => manager.instance(agentId, type),
      threadOf: async (envelope): Promise<ThreadIds> => {
        const data = (envelope.data ?? {}) as Record<string, unknown>;
        const parent = await parentOf(envelope);
        const threadId = stringOf(data.thread_id) ?? stringOf(parent?.thread_id);
        const replyToId = stringOf(data.reply_to_id) ?? stringOf(parent?.message_id);
        const chat = stringOf(parent?.reply_to);
        return { ...(threadId ? { threadId } : {}), ...(replyToId ? { replyToId } : {}), ...(chat ? { chat } : {}) };
      },
      // Read at each send, so a reconfigure applies to the next one.
      get sendAttempts() {
        return options.sendAttempts;
      },
      get retryBaseMs() {
        return options.reconnectBaseMs;
      },
      get retryMaxMs() {
        return options.reconnectMaxMs;
      },
      get maxRetryAfterMs() {
        return options.maxRetryAfterMs;
      },
      signal: stopping.signal,
    });
    ctx.provide(outboundTransports, transport);

    registerChannelRoutes(ctx.http, types, manager, ctx.agents);
    if (ctx.agentHttp) registerAgentAdapterRoutes(ctx.agentHttp, types, manager, ctx.agents);

    const offTypes = types.onChange(() => void manager.reconcileAll());
    const offBus = ctx.bus.subscribe((event) => {
      if (event.event_type === 'agent.config.changed' && event.agent_id) void manager.reconcile(event.agent_id);
      else if (event.event_type === 'credential.changed' && event.agent_id) {
        const name = (event.payload as { name: string }).name;
        if (name.startsWith('adapter:')) manager.retryErrored(event.agent_id, name.split(':')[1]);
      } else if (event.event_type === 'identity.changed') manager.retryErrored();
    });
    return {
      async reconfigure(next) {
        options = next;
        await manager.reconfigure(next);
      },
      async stop() {
        offBus();
        offTypes();
        bridge?.stop();
        stopping.abort(new Error('channels stopped'));
        await manager.stop();
      },
    };
  },
});
