/**
 * `agt extensions [ls]`, `agt extensions on|off <name>` and `agt extensions config <name> [--set k=v] [--unset k]`:
 * the manifest's extensions, whether they run, and their options.
 */
import type { Command } from 'commander';
import { run } from '../run.js';

const extensions = () => import('../commands/extensions.js');

export function declareExtensions(agt: Command): Command {
  const group = agt
    .command('extensions')
    .description('the extensions of the manifest: state, and their options')
    .action(run(async (ctx) => (await extensions()).list(ctx)));
  group
    .command('ls')
    .alias('list')
    .description('every extension of the manifest: version, state, route prefix, error')
    .action(run(async (ctx) => (await extensions()).list(ctx)));
  group
    .command('off <name>')
    .description('turn an extension off now (it stops; its routes answer 503); kept across restarts')
    .action(run(async (ctx, name: string) => (await extensions()).setEnabled(ctx, name, false)));
  group
    .command('on <name>')
    .description('turn an extension on (it loads at the next start of the daemon); kept across restarts')
    .action(run(async (ctx, name: string) => (await extensions()).setEnabled(ctx, name, true)));
  group
    .command('config <name>')
    .description(
      "show an extension's options, or change them (validated; applied at once where the extension can, else at the next start)",
    )
    .option(
      '--set <assignment...>',
      'key.path=value (value parsed as JSON when it is JSON), e.g. types.telegram.apiRoot=http://127.0.0.1:8081',
    )
    .option('--unset <key...>', 'key.path back to its default')
    .action(
      run(async (ctx, name: string, options: { set?: string[]; unset?: string[] }) =>
        (await extensions()).config(ctx, name, options),
      ),
    );
  return group;
}
