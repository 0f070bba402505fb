/**
 * The `fleet` extension (docs/fleet.md): several daemons as one, on NATS JetStream. Off by default; with
 * settings `fleet` it offers the kernel's agent placement (one runtime per agent across the fleet, records
 * in a JetStream KV bucket with compare-and-set and TTL heartbeats) and the agent forwarder (requests for
 * an agent another daemon runs go there over NATS request/reply) and the event scope `fleet` (every
 * daemon's events in one JetStream stream, `GET /events?scope=fleet`), the message carrier (messages
 * between the fleet's agents over JetStream) and, with option `replicate`, the agent replication (agent files
 * in a JetStream object store, for failover without a shared file system), and serves `/fleet`. Without
 * settings `fleet` it offers nothing and the daemon runs alone, as without the extension.
 */
import {
  agentFileVouchers,
  agentForwarder,
  agentPlacement,
  agentReplication,
  defineExtension,
  eventScopes,
  messageCarriers,
} from '@agt/contracts';
import { Fleet } from './fleet.js';
import { FleetOptions } from './options.js';
import { registerHandoffRoutes } from './handoff-routes.js';
import { registerRoutes, TAG } from './routes.js';

export default defineExtension({
  name: 'fleet',
  version: '0.1.0',
  contract: '1.0',
  prefix: '/fleet',
  routeGroups: [TAG],
  options: FleetOptions,
  register(ctx) {
    const settings = ctx.settings.current().fleet;
    const fleet = settings ? new Fleet(ctx, settings, ctx.config) : undefined;
    registerRoutes(ctx.http, () => fleet);
    registerHandoffRoutes(ctx.http, () => fleet);
    if (fleet) {
      ctx.provide(agentPlacement, fleet.placement);
      ctx.provide(agentForwarder, fleet.relay);
      ctx.provide(eventScopes, fleet.events);
      ctx.provide(messageCarriers, fleet.messages);
      ctx.contribute.inboxSource({ name: 'fleet', attach: (agent, deliver) => fleet.messages.attach(agent, deliver) });
      if (fleet.replicator) ctx.provide(agentReplication, fleet.replicator);
      if (fleet.vouches) ctx.provide(agentFileVouchers, fleet.vouches);
    }
    return {
      start() {
        // Connecting goes on in the background: loads wait for it (at most a few seconds) or answer 503.
        fleet?.connect();
      },
      stop: () => fleet?.stop(),
      problem: () =>
        fleet
          ? fleet.problem()
          : 'settings `fleet` are not set: the daemon runs alone (set them and restart to join a fleet)',
    };
  },
});
