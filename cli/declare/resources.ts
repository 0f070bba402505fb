/**
 * An agent's resources: `agt credentials …` (sealed values: set from stdin, never printed), `agt files …`
 * (its stored files), `agt memory …` (its long-term memory) and `agt adapters …` (its channel adapters).
 */
import type { Command } from 'commander';
import { run } from '../run.js';

const credentials = () => import('../commands/credentials.js');
const files = () => import('../commands/files.js');
const adapters = () => import('../commands/adapters.js');
const memory = () => import('../commands/memory.js');

export function declareResources(agt: Command): void {
  const cred = agt
    .command('credentials')
    .alias('creds')
    .description("an agent's sealed credentials: names and state, never values");
  cred
    .command('ls <agent>')
    .alias('list')
    .description('the credentials (set, sealed, locked, length) and whether the envelope is locked')
    .action(run(async (ctx, agent: string) => (await credentials()).list(ctx, agent)));
  cred
    .command('set <agent> <name>')
    .description(
      'set a credential from stdin (one trailing newline dropped), or asked hidden on a terminal; never an argument',
    )
    .option(
      '--replace',
      'while locked: discard the old sealed value unread and keep the new one pending until it unlocks',
    )
    .action(
      run(async (ctx, agent: string, name: string, options: { replace?: boolean }) =>
        (await credentials()).set(ctx, agent, name, options),
      ),
    );
  cred
    .command('rm <agent> <name>')
    .alias('remove')
    .description('delete a credential (works while locked)')
    .action(run(async (ctx, agent: string, name: string) => (await credentials()).remove(ctx, agent, name)));
  cred
    .command('unlock <agent>')
    .description("unlock a password-protected agent's credentials (the password from stdin, or asked on a terminal)")
    .action(run(async (ctx, agent: string) => (await credentials()).unlock(ctx, agent)));
  cred
    .command('lock <agent>')
    .description("lock a password-protected agent's credentials again")
    .action(run(async (ctx, agent: string) => (await credentials()).lock(ctx, agent)));

  const file = agt.command('files').description("an agent's stored files (what its fs_* tools see)");
  file
    .command('ls <agent> [prefix]')
    .alias('list')
    .description('the files (under a folder)')
    .action(run(async (ctx, agent: string, prefix: string | undefined) => (await files()).list(ctx, agent, prefix)));
  file
    .command('cat <agent> <path>')
    .description("print a file (its bytes as stored; --json: the route's answer)")
    .action(run(async (ctx, agent: string, path: string) => (await files()).cat(ctx, agent, path)));
  file
    .command('put <agent> <path> [local]')
    .description('store a file from a local file, or from stdin when none (or -) is given; at most 5 MB')
    .option('--readonly', "the agent's own fs tools cannot change or delete it")
    .option('--mime <type>', 'MIME type')
    .action(
      run(
        async (
          ctx,
          agent: string,
          path: string,
          local: string | undefined,
          options: { readonly?: boolean; mime?: string },
        ) => (await files()).put(ctx, agent, path, local, options),
      ),
    );
  file
    .command('rm <agent> <path>')
    .alias('remove')
    .description('delete a file')
    .action(run(async (ctx, agent: string, path: string) => (await files()).remove(ctx, agent, path)));
  file
    .command('mv <agent> <from> <to>')
    .description('rename a file')
    .action(run(async (ctx, agent: string, from: string, to: string) => (await files()).move(ctx, agent, from, to)));

  const mem = agt
    .command('memory')
    .alias('mem')
    .description("an agent's long-term memory: list, search, add, forget, pin, consolidate (docs/memory.md)");
  mem
    .command('ls <agent>')
    .alias('list')
    .description('the memories, newest first, with the embedding state (* pinned)')
    .option('--kind <kind>', 'fact, episode, summary or instruction')
    .option('--pinned', 'only pinned ones')
    .option('--forgotten', 'the forgotten ones (kept 30 days)')
    .option('-n, --limit <n>', 'how many (1-500)')
    .action(
      run(
        async (ctx, agent: string, options: { kind?: string; pinned?: boolean; forgotten?: boolean; limit?: string }) =>
          (await memory()).list(ctx, agent, options),
      ),
    );
  mem
    .command('search <agent> <query>')
    .description('hybrid search (full-text, and vectors with an embedding model); says when it is full-text only')
    .option('-n, --limit <n>', 'how many (1-500)')
    .action(
      run(async (ctx, agent: string, query: string, options: { limit?: string }) =>
        (await memory()).search(ctx, agent, query, options),
      ),
    );
  mem
    .command('add <agent> [text]')
    .description('save a memory (the text from stdin when none or - is given); a credential value is refused')
    .option('--kind <kind>', 'fact (default), episode, summary or instruction')
    .option('--pin', 'recall it in every turn')
    .action(
      run(async (ctx, agent: string, text: string | undefined, options: { kind?: string; pin?: boolean }) =>
        (await memory()).add(ctx, agent, text, options),
      ),
    );
  mem
    .command('rm <agent> <id>')
    .alias('forget')
    .description('forget a memory (out of every search; kept as forgotten for 30 days)')
    .option('--purge', 'delete it at once')
    .action(
      run(async (ctx, agent: string, id: string, options: { purge?: boolean }) =>
        (await memory()).remove(ctx, agent, id, options),
      ),
    );
  mem
    .command('pin <agent> <id>')
    .description('recall this memory in every turn')
    .option('--off', 'unpin it')
    .action(
      run(async (ctx, agent: string, id: string, options: { off?: boolean }) =>
        (await memory()).pin(ctx, agent, id, options.off !== true),
      ),
    );
  mem
    .command('consolidate <agent>')
    .description("merge duplicates and update stale memories now, on the agent's model (pinned ones untouched)")
    .action(run(async (ctx, agent: string) => (await memory()).consolidate(ctx, agent)));
  mem
    .command('changelog <agent>')
    .description('what consolidation changed and refused, newest first')
    .option('--limit <n>', 'at most this many rows (default 100)')
    .action(
      run(async (ctx, agent: string, options: { limit?: string }) => (await memory()).changelog(ctx, agent, options)),
    );

  const adapter = agt
    .command('adapters')
    .description("channel adapters (Telegram, Slack, Discord, email): types, an agent's adapters and their status")
    .action(run(async (ctx) => (await adapters()).list(ctx, undefined)));
  adapter
    .command('ls [agent]')
    .alias('list')
    .description("the adapter types and the agents using them; or one agent's adapters")
    .action(run(async (ctx, agent: string | undefined) => (await adapters()).list(ctx, agent)));
  adapter
    .command('status <agent> [type]')
    .description("an agent's adapters with their errors and recent failures")
    .action(run(async (ctx, agent: string, type: string | undefined) => (await adapters()).status(ctx, agent, type)));
  adapter
    .command('set <agent> <type>')
    .description('configure an adapter (merged into what the agent has): it starts or restarts to match')
    .option('--config <json>', "the adapter's settings as a JSON object (merged)")
    .option('--set <key=value...>', 'one setting (value parsed as JSON when it is JSON)')
    .option('--policy <json>', 'who may talk to it: {dm, groups, allow_from}')
    .option('--max-attachment-size <bytes>', 'largest attachment')
    .option('--disable', 'configured but off')
    .action(
      run(async (ctx, agent: string, type: string, options: Record<string, any>) =>
        (await adapters()).set(ctx, agent, type, options),
      ),
    );
  adapter
    .command('remove <agent> <type>')
    .alias('rm')
    .description('remove an adapter from the agent (its sealed credentials stay)')
    .action(run(async (ctx, agent: string, type: string) => (await adapters()).remove(ctx, agent, type)));
  adapter
    .command('restart <agent> <type>')
    .description('disconnect and connect again (after its credential was set, say)')
    .action(run(async (ctx, agent: string, type: string) => (await adapters()).restart(ctx, agent, type)));
}
