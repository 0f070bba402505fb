/**
 * The `mesh` extension (docs/mesh.md): the mesh server (agent cards, health, the signed
 * inbound inbox, agent websites), mesh delivery of `msg_send` to DIDs and local handles (the `did:` and
 * `mesh:` outbound transport), LAN discovery over mDNS, and the Network routes under `/network`.
 */
import { defineExtension } from '@agt/contracts';
import { outboundTransports } from '@agt/contracts';
import { PeerDirectory } from './discovery.js';
import { buildMeshApp } from './mesh-app.js';
import { MeshServer } from './mesh-server.js';
import { MeshOptions } from './options.js';
import { MeshTransport } from './outbound.js';
import { inboxOfSenderKey } from './inbound.js';
import { addressBucket, RateLimiter } from './rate-limit.js';
import { registerNetworkRoutes, TAG } from './routes.js';
import { PushNotifier } from './a2a/push.js';
import { TaskStore } from './a2a/task-store.js';
import { TaskBook } from './a2a/tasks.js';
import { A2ATransport } from './a2a/outbound.js';

const VERSION = '1.0.0';

export default defineExtension({
  name: 'mesh',
  version: VERSION,
  contract: '1.0',
  prefix: '/network',
  routeGroups: [TAG],
  options: MeshOptions,
  register(ctx) {
    const options = ctx.config;
    // Per sender and agent, with the whole-inbox rate of each agent as its group; per address /64.
    const limiter = new RateLimiter({
      limit: options.rateLimit,
      windowMs: options.rateWindowMs,
      maxKeys: options.rateMaxKeys,
      group: { of: inboxOfSenderKey, limit: options.inboxRateLimit },
    });
    const addressLimiter = new RateLimiter({
      limit: options.addressRateLimit,
      windowMs: options.rateWindowMs,
      maxKeys: options.rateMaxKeys,
      bucketOf: (address) => addressBucket(address),
    });
    const peers = new PeerDirectory(ctx.settings, options.mdns, ctx.logger);
    // A2A tasks follow their turns on the bus (task id = turnId); a cancel that came first interrupts the turn when it
    // starts.
    const pushes = new PushNotifier(
      () => ctx.agents.fetch,
      ctx.agents.keys,
      (agentId) => ctx.agents.keys.identity(agentId)?.did,
      ctx.logger,
    );
    const book = new TaskBook(
      (agentId, turnId) => ctx.agents.turns?.interrupt(agentId, turnId),
      undefined,
      new TaskStore(() => ctx.agents.turns, ctx.logger),
      (task, event) => pushes.notify(task, event),
    );
    ctx.bus.subscribe((event) => book.apply(event));
    let transport: MeshTransport | undefined;
    const learn = (did: string, replyTo: string | undefined) => transport?.learn(did, replyTo);
    const server: MeshServer = new MeshServer(
      ctx,
      () =>
        buildMeshApp({
          agents: ctx.agents,
          inbox: ctx.inbox,
          limiter,
          addressLimiter,
          learn,
          maxBodyBytes: options.maxBodyBytes,
          apiTimeoutMs: options.apiTimeoutMs,
          version: VERSION,
          guards: ctx.serverGuards,
          guardPolicy: { publicNames: () => server.publicNames(), limits: options.serverLimits },
          baseUrl: () => server.baseUrl(),
          a2a: { book, waitMs: options.a2aWaitMs, ...(ctx.auth ? { auth: ctx.auth } : {}) },
        }),
      options.publicNames,
    );
    transport = new MeshTransport({
      agents: ctx.agents,
      inbox: ctx.inbox,
      limiter,
      learn,
      options,
      baseUrl: () => (server.status().running ? server.baseUrl() : null),
      peers: () => peers.urls(),
      logger: ctx.logger,
    });
    ctx.provide(outboundTransports, transport);
    const a2aTransport = new A2ATransport({ agents: ctx.agents, inbox: ctx.inbox, options, logger: ctx.logger });
    ctx.provide(outboundTransports, a2aTransport);
    registerNetworkRoutes(ctx.http, { server, peers, agents: ctx.agents, settings: ctx.settings });

    let started = false;
    const reconcile = () => {
      if (started) void server.reconcile();
    };
    // An agent with lan or public visibility widens the bind address; one that goes may narrow it.
    ctx.contribute.lifecycle({ loaded: reconcile, unloaded: reconcile });
    ctx.bus.subscribe((event) => {
      if (event.event_type === 'agent.config.changed') reconcile();
    });
    ctx.settings.onChange(reconcile);
    server.onChange((status) => void peers.follow(status));

    return {
      async start() {
        started = true;
        await server.reconcile();
      },
      // `agt status`, GET /runtime and the console show a mesh server that is wanted but down, and why.
      problem: () => server.problem(),
      async stop() {
        started = false;
        transport?.close();
        a2aTransport.close();
        await server.stop();
        await peers.stop();
      },
    };
  },
});
