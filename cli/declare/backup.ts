/**
 * `agt backup`, `agt restore`, `agt backups [run]`, `agt export`, `agt import`: copies of agent files and Letta Agent Files
 * (docs/backups.md).
 */
import type { Command } from 'commander';
import { run } from '../run.js';

const backup = () => import('../commands/backup.js');

export function declareBackup(agt: Command): void {
  agt
    .command('backup <agent>')
    .description("a consistent copy of the agent's file while it runs (integrity-checked)")
    .option(
      '--to <path>',
      'an existing folder or a path ending in / (a folder, made when its parent exists), else the new file itself; default <backups dir>/<agent id>/',
    )
    .option('--seal', 'encrypt the copy to the owner identity (.agt.sealed)')
    .action(
      run(async (ctx, agent: string, options: { to?: string; seal?: boolean }) =>
        (await backup()).backup(ctx, agent, options),
      ),
    );
  agt
    .command('restore <file>')
    .description('restore a backup (plain or sealed) as a loaded agent; never over an existing file')
    .option(
      '--to <path>',
      'where the restored .agt goes: a folder (existing, or ending in /) or the new file (default: the agents folder)',
    )
    .option('--as-new', 'a new agent id and identity (DID) instead of the original ones')
    .option('--name <name>', "with --as-new: the copy's name")
    .option('--start', 'start it once loaded')
    .action(
      run(async (ctx, file: string, options: { to?: string; asNew?: boolean; start?: boolean; name?: string }) =>
        (await backup()).restore(ctx, file, options),
      ),
    );
  const backups = agt
    .command('backups')
    .description('the backup files in the backups folder (settings backups.dir, else <data dir>/backups)')
    .action(run(async (ctx) => (await backup()).listBackups(ctx)));
  backups
    .command('run')
    .description('run the scheduled backup now (every loaded agent and tracked agent file) and wait for it')
    .action(run(async (ctx) => (await backup()).runBackups(ctx)));
  agt
    .command('export <agent>')
    .description('export an agent to another format: af (Letta Agent File)')
    .requiredOption('--format <format>', 'af')
    .option('-o, --output <file>', 'write to this file (default: stdout)')
    .action(
      run(async (ctx, agent: string, options: { format: string; output?: string }) =>
        (await backup()).exportAgent(ctx, agent, options),
      ),
    );
  agt
    .command('import <file>')
    .description('create an agent from a Letta Agent File (.af)')
    .option('--dir <dir>', 'folder of the new .agt file')
    .option('--name <name>', "the new agent's name (default the .af file's)")
    .option('--start', 'start it at once')
    .action(
      run(async (ctx, file: string, options: { dir?: string; start?: boolean; name?: string }) =>
        (await backup()).importAgent(ctx, file, options),
      ),
    );
}
