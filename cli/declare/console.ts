/** `agt console`: a one-time login link to the daemon's web console (docs/console.md). */
import type { Command } from 'commander';
import { run } from '../run.js';

const consoleCommands = () => import('../commands/console.js');

export function declareConsole(agt: Command): void {
  agt
    .command('console')
    .description("a one-time link that logs a browser into the daemon's web console (valid 60 s, single use)")
    .option('--open', 'open it in the default browser too')
    .action(run(async (ctx, options: { open?: boolean }) => (await consoleCommands()).openConsole(ctx, options)));
}
