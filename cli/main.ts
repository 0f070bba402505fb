/**
 * The `agt` command: a client of the daemon's HTTP API (it never imports the kernel; a
 * dependency-cruiser rule keeps it so). This file only declares the commands: each one's module is
 * imported when it runs, so `agt --help` loads commander and nothing else.
 */
import { Command, CommanderError, Option } from 'commander';
import { CliError, EXIT } from './errors.js';
import { allCommands, run } from './run.js';
import { declareAgents } from './declare/agents.js';
import { declareBackup } from './declare/backup.js';
import { declareCompletion } from './declare/completion.js';
import { declareConsole } from './declare/console.js';
import { declareEvals } from './declare/evals.js';
import { declareExtensions } from './declare/extensions.js';
import { declareFleet } from './declare/fleet.js';
import { declareMcp } from './declare/mcp.js';
import { declareOperate } from './declare/operate.js';
import { declareResources } from './declare/resources.js';
import { declareTools } from './declare/tools.js';

const VERSION = '0.2.0';

const commands = {
  status: () => import('./commands/status.js'),
  chat: () => import('./commands/chat.js'),
  observe: () => import('./commands/observe.js'),
  tasks: () => import('./commands/tasks.js'),
  manage: () => import('./commands/manage.js'),
  identity: () => import('./commands/identity.js'),
  providers: () => import('./commands/providers.js'),
  spend: () => import('./commands/spend.js'),
};

export function program(): Command {
  const agt = new Command('agt')
    .description('Talk to the agt daemon: chat with agents, watch them, answer their approvals.')
    .version(VERSION, '-v, --version')
    .option(
      '--url <url>',
      'daemon URL (AGT_DAEMON_URL; AGT_DAEMON_HOST/PORT; else the daemon-url file in the data directory; else http://127.0.0.1:7385)',
    )
    .option('--token <token>', 'bearer token (AGT_DAEMON_TOKEN; else the daemon-token file in the data directory)')
    .option(
      '--settings <file>',
      "the daemon's settings file: its folder is the data directory (AGT_DAEMON_SETTINGS; else AGT_USER_DATA_DIR, XDG_CONFIG_HOME/agt, ~/.config/agt)",
    )
    .option('--json', 'machine-readable JSON output')
    .option('--no-color', 'no colours (also NO_COLOR; colours are only ever used on a terminal)')
    .showHelpAfterError('(agt --help lists the commands)')
    .addHelpText(
      'after',
      '\nExit codes: 0 ok, 1 the operation failed (API error, agent.error), 2 bad usage, 3 no daemon answers, 4 token refused.',
    );

  agt
    .command('status')
    .description('daemon, data directory, identity, extensions and agents with their state')
    .action(run(async (ctx) => (await commands.status()).status(ctx)));
  const agents = agt
    .command('agents')
    .alias('ps')
    .description('loaded agents with their runtime and display states (-a: also the tracked agent files not loaded)')
    .option('-a, --all', 'also the agents of the tracked folders that are not loaded')
    .action(run(async (ctx, options: { all?: boolean }) => (await commands.status()).agents(ctx, options)));
  agents
    .command('ls')
    .alias('list')
    .description('the same as agt agents (docker-style: agt agents ls -a)')
    .option('-a, --all', 'also the agents of the tracked folders that are not loaded')
    .action(run(async (ctx, options: { all?: boolean }) => (await commands.status()).agents(ctx, options)));
  agt
    .command('version')
    .description('the versions of this agt and of the daemon it talks to')
    .action(run(async (ctx) => (await import('./commands/daemon.js')).version(ctx, VERSION)));

  agt
    .command('chat <agent>')
    .description('chat with an agent: interactive, or one message with -m (exit 1 when the turn fails)')
    .option('-m, --message <text>', 'send one message, print the reply and exit')
    .option('--loop <name>', 'cognition loop (default main)')
    .action(
      run(async (ctx, agent: string, options: { message?: string; loop?: string }) =>
        (await commands.chat()).chat(ctx, agent, options),
      ),
    );

  agt
    .command('logs <agent>')
    .description("the agent's log rows (agt_logs), newest last; -f follows its rows, turns, tool calls and approvals")
    .option(
      '-f, --follow',
      "keep printing: new rows, and the agent's turns, tool calls, approvals and errors as they happen",
    )
    .option('-n, --tail <n>', 'only the last N rows (1-500; default 50)')
    .addOption(new Option('--lines <n>', 'same as --tail').hideHelp())
    .option('--since <when>', 'only rows since a duration ago (30s, 10m, 2h, 1d) or a date and time (ISO 8601)')
    .action(
      run(async (ctx, agent: string, options: { follow?: boolean; tail?: string; lines?: string; since?: string }) =>
        (await commands.observe()).logs(ctx, agent, options),
      ),
    );
  agt
    .command('events')
    .description('the live event stream (--json: one event per line)')
    .option('--agent <agent>', "only this agent's events")
    .option('--deltas', 'show streamed text deltas too')
    .action(
      run(async (ctx, options: { agent?: string; deltas?: boolean }) =>
        (await commands.observe()).events(ctx, options),
      ),
    );

  agt
    .command('approvals')
    .alias('tasks')
    .description('everything waiting for you across agents: approvals, asks, suspend prompts')
    .action(run(async (ctx) => (await commands.tasks()).approvals(ctx)));
  agt
    .command('approve <taskId>')
    .description('approve a pending tool call or budget task')
    .option('--agent <agent>', 'the agent (when task ids clash)')
    .option('--args <json>', 'run the tool with these arguments instead')
    .option('--amount <n>', "budget tasks: raise today's limit by this much (default: what the call needs)")
    .action(
      run(async (ctx, id: string, options: { agent?: string; args?: string; amount?: string }) =>
        (await commands.tasks()).resolveApproval(ctx, id, 'approve', options),
      ),
    );
  agt
    .command('deny <taskId>')
    .description('deny a pending tool call')
    .option('--agent <agent>', 'the agent (when task ids clash)')
    .option('-r, --reason <text>', 'why (the model is told)')
    .action(
      run(async (ctx, id: string, options: { agent?: string; reason?: string }) =>
        (await commands.tasks()).resolveApproval(ctx, id, 'deny', options),
      ),
    );
  agt
    .command('answer <requestId> <text...>')
    .description("answer an agent's question (the ask tool)")
    .option('--agent <agent>', 'the agent (when request ids clash)')
    .action(
      run(async (ctx, id: string, words: string[], options: { agent?: string }) =>
        (await commands.tasks()).answer(ctx, id, words.join(' '), options),
      ),
    );
  agt
    .command('resume <agent>')
    .description('answer a suspend prompt: resume the agent (or --stay suspended)')
    .option('--stay', 'keep it suspended')
    .option('--loop <name>', 'the loop whose prompt to answer')
    .action(
      run(async (ctx, agent: string, options: { stay?: boolean; loop?: string }) =>
        (await commands.tasks()).resume(ctx, agent, options),
      ),
    );

  agt
    .command('usage [agent]')
    .description(
      'tokens and cost of model calls: by agent (default), model or day; or one agent (agt usage Helper) with its budgets',
    )
    .option('--agent <agent>', 'one agent: its totals and budgets (the same as agt usage <agent>)')
    .option('--by <group>', 'model, day or agent')
    .option('--from <iso>', 'from this date or time (default: the start of the month)')
    .option('--to <iso>', 'to this date or time, exclusive (default: now)')
    .action(
      run(
        async (ctx, agent: string | undefined, options: { agent?: string; by?: string; from?: string; to?: string }) =>
          (await commands.spend()).usage(ctx, { ...options, agent: agent ?? options.agent }),
      ),
    );
  agt
    .command('budget <agent>')
    .description("show an agent's budgets, or set them (a number, or none to remove)")
    .option('--turn-tokens <n>', 'tokens per turn')
    .option('--day-tokens <n>', 'tokens per day')
    .option('--day-usd <usd>', 'USD per day')
    .option('--month-usd <usd>', 'USD per month')
    .option('--on-exceeded <action>', 'ask (an owner task) or fail')
    .action(
      run(async (ctx, agent: string, options: Record<string, string>) =>
        (await commands.spend()).budget(ctx, agent, options),
      ),
    );

  agt
    .command('create [name]')
    .description('create an agent from a template (needs an owner identity)')
    .option('--dir <dir>', 'folder of the new .agt file')
    .option('--template <id>', 'template id (default: standard)')
    .option('--provider <id>', 'app provider id (agt providers)')
    .option('--model <id>', 'model id')
    .option('--start', 'start it at once')
    .action(
      run(async (ctx, name: string | undefined, options: Record<string, string | boolean>) =>
        (await commands.manage()).create(ctx, name, options),
      ),
    );
  agt
    .command('start <agent>')
    .description('start an agent (an id, name or .agt path; loads it when needed)')
    .action(run(async (ctx, agent: string) => (await commands.manage()).start(ctx, agent)));
  agt
    .command('stop <agent>')
    .description('stop and unload an agent')
    .action(run(async (ctx, agent: string) => (await commands.manage()).stop(ctx, agent)));
  agt
    .command('load <file>')
    .description('load an agent file')
    .option('--require-review', 'refuse a file not reviewed on this machine')
    .action(
      run(async (ctx, file: string, options: { requireReview?: boolean }) =>
        (await commands.manage()).load(ctx, file, options),
      ),
    );
  agt
    .command('config <agent>')
    .description('print the agent config, or change it (--set key.path=value, --patch JSON merge patch)')
    .option('--set <assignment...>', 'key.path=value (value parsed as JSON when it is JSON)')
    .option('--patch <json>', 'a JSON Merge Patch of the config')
    .action(
      run(async (ctx, agent: string, options: { set?: string[]; patch?: string }) =>
        (await commands.manage()).config(ctx, agent, options),
      ),
    );

  const identity = agt
    .command('identity')
    .description('the owner identity: status, create, unlock')
    .action(run(async (ctx) => (await commands.identity()).identityStatus(ctx)));
  identity
    .command('status')
    .description('owner identity status')
    .action(run(async (ctx) => (await commands.identity()).identityStatus(ctx)));
  identity
    .command('create')
    .description('create the owner identity (shows the seed phrase once)')
    .option('--passphrase-file <file>', 'read the passphrase from this file (else asked on the terminal)')
    .action(
      run(async (ctx, options: { passphraseFile?: string }) =>
        (await commands.identity()).identityCreate(ctx, options),
      ),
    );
  identity
    .command('unlock')
    .description('unlock the owner identity with its passphrase')
    .option('--passphrase-file <file>', 'read the passphrase from this file (else asked on the terminal)')
    .action(
      run(async (ctx, options: { passphraseFile?: string }) =>
        (await commands.identity()).identityUnlock(ctx, options),
      ),
    );
  identity
    .command('confirm-backup')
    .description('record that the seed phrase was written down')
    .action(run(async (ctx) => (await commands.identity()).identityConfirmBackup(ctx)));

  const providers = agt
    .command('providers')
    .description('model providers of the daemon (settings)')
    .action(run(async (ctx) => (await commands.providers()).listProviders(ctx)));
  providers
    .command('list')
    .description('the configured providers')
    .action(run(async (ctx) => (await commands.providers()).listProviders(ctx)));
  providers
    .command('add <kind>')
    .description(
      'add (or replace) a provider: ollama, openai, anthropic, openrouter, or openai-compatible (llama.cpp, LM Studio, vLLM: --base-url required)',
    )
    .option('--id <id>', 'provider id (default: the kind)')
    .option('--name <name>', 'display name')
    .option('--base-url <url>', "endpoint (default: the kind's usual one; required for openai-compatible)")
    .option('--model <id>', 'default model')
    .addOption(new Option('--api-key-env <VAR>', 'environment variable of the daemon holding the key'))
    .action(
      run(async (ctx, kind: string, options: Record<string, string>) =>
        (await commands.providers()).addProvider(ctx, kind, options),
      ),
    );
  providers
    .command('remove <id>')
    .alias('rm')
    .description('remove a provider from the settings')
    .action(run(async (ctx, id: string) => (await commands.providers()).removeProvider(ctx, id)));
  providers
    .command('check <id>')
    .description("call the provider's server once (its models list, else a 1-token completion); exit 1 when it fails")
    .action(run(async (ctx, id: string) => (await commands.providers()).checkProvider(ctx, id)));
  providers
    .command('models <id>')
    .description("the models the provider's server lists (its /models endpoint)")
    .action(run(async (ctx, id: string) => (await commands.providers()).listModels(ctx, id)));

  // Each area with many commands declares them in its own file of cli/declare/ (one line here each).
  declareAgents(agt);
  declareBackup(agt);
  declareMcp(agt);
  declareResources(agt);
  declareEvals(agt);
  declareOperate(agt);
  declareCompletion(agt);
  declareTools(agt);
  declareExtensions(agt);
  declareConsole(agt);
  declareFleet(agt);

  for (const command of allCommands(agt)) command.exitOverride();
  return agt;
}

export async function main(argv: string[] = process.argv): Promise<void> {
  try {
    await program().parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version exit 0; a usage error was already printed by commander.
      process.exitCode = error.exitCode === 0 ? EXIT.ok : EXIT.usage;
      return;
    }
    if (error instanceof CliError) {
      // With --json the error is JSON too (on stderr: stdout stays the result): the daemon's code when it gave one.
      if (argv.includes('--json')) {
        process.stderr.write(
          `${JSON.stringify({ error: error.message, code: error.body?.code ?? null, exitCode: error.exitCode })}\n`,
        );
      } else {
        process.stderr.write(`agt: ${error.message}\n`);
      }
      process.exitCode = error.exitCode;
      return;
    }
    if ((error as Error)?.name === 'ExitPromptError') {
      process.exitCode = EXIT.ok;
      return;
    }
    process.stderr.write(`agt: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exitCode = EXIT.failed;
  }
}
