/** `agt fleet status`: the daemon's fleet and where each agent of it runs (docs/fleet.md). */
import type { Command } from 'commander';
import { run } from '../run.js';

const fleetCommands = () => import('../commands/fleet.js');

export function declareFleet(agt: Command): void {
  const fleet = agt.command('fleet').description('several daemons as one on NATS JetStream (docs/fleet.md)');
  fleet
    .command('status')
    .description("this daemon's fleet, whether NATS is reachable, and which daemon runs each agent of the fleet")
    .action(run(async (ctx) => (await fleetCommands()).status(ctx)));
}
