/** `agt tools <agent> [ls|enable|disable|restrict|unrestrict] [name]`: an agent's tools, one at a time. */
import type { Command } from 'commander';
import { run } from '../run.js';

const tools = () => import('../commands/tools.js');

export function declareTools(agt: Command): Command {
  return agt
    .command('tools <agent> [action] [name]')
    .description(
      "an agent's tools (ls, the default), or change one: enable, disable, restrict (ask you first), unrestrict <name>",
    )
    .action(
      run(async (ctx, agent: string, action: string | undefined, name: string | undefined) =>
        (await tools()).tools(ctx, agent, action, name),
      ),
    );
}
