/** `agt rm`, `agt restart`, `agt inspect`, `agt history`: one agent at a time (`agt ps -a` is in main.ts). */
import type { Command } from 'commander';
import { run } from '../run.js';

const agents = () => import('../commands/agents.js');

export function declareAgents(agt: Command): void {
  agt
    .command('rm <agent>')
    .description(
      'unload an agent and delete its file (asks first; --yes to skip). A tracked agent that is not loaded is found too',
    )
    .option('-y, --yes', 'do not ask')
    .action(run(async (ctx, agent: string, options: { yes?: boolean }) => (await agents()).rm(ctx, agent, options)));
  agt
    .command('restart <agent>')
    .description('stop and unload an agent, then load and start it from its file')
    .action(run(async (ctx, agent: string) => (await agents()).restart(ctx, agent)));
  agt
    .command('inspect <agent>')
    .description(
      "everything about an agent: config (with what the owner's ceiling capped), state, tools, adapters, MCP servers",
    )
    .action(run(async (ctx, agent: string) => (await agents()).inspect(ctx, agent)));
  agt
    .command('history <agent>')
    .description('the conversation (the loop stream), a page at a time: the newest page unless --page')
    .option('--loop <name>', 'which loop (default main)')
    .option('-n, --limit <n>', 'rows per page (1-500)', '50')
    .option('-p, --page <n>', 'page number, 1 is the oldest (default: the newest)')
    .action(
      run(async (ctx, agent: string, options: { loop?: string; limit: string; page?: string }) =>
        (await agents()).history(ctx, agent, options),
      ),
    );
}
