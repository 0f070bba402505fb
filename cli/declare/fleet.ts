/** `agt fleet status|move|drain|undrain`: the daemon's fleet, where each agent of it runs, planned moves (docs/fleet.md). */
import type { Command } from 'commander';
import { run } from '../run.js';

const fleetCommands = () => import('../commands/fleet.js');

export function declareFleet(agt: Command): void {
  const fleet = agt.command('fleet').description('several daemons as one on NATS JetStream (docs/fleet.md)');
  fleet
    .command('status')
    .description("this daemon's fleet, whether NATS is reachable, and which daemon runs each agent of the fleet")
    .action(run(async (ctx) => (await fleetCommands()).status(ctx)));
  fleet
    .command('move <agent> <daemon>')
    .description('move an agent to another daemon of the fleet (unload, then load the same file there)')
    .action(run(async (ctx, agent: string, daemon: string) => (await fleetCommands()).move(ctx, agent, daemon)));
  fleet
    .command('drain <daemon>')
    .description(
      "move every agent a daemon runs to the daemons --to names, spread evenly, and refuse it new agents (before the daemon's maintenance)",
    )
    .requiredOption('--to <daemons>', 'comma-separated daemons that take its agents')
    .action(
      run(async (ctx, daemon: string, options: { to: string }) => (await fleetCommands()).drain(ctx, daemon, options)),
    );
  fleet
    .command('undrain <daemon>')
    .description('let a drained daemon take new agents again')
    .action(run(async (ctx, daemon: string) => (await fleetCommands()).undrain(ctx, daemon)));
}
