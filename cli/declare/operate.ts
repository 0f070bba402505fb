/**
 * Running the daemon and acting through agents: `agt tracked …`, `agt daemon start|status|logs|stop`, `agt service
 * install`, `agt exec` (a command where the agent's commands run), `agt send` (a message from an agent).
 */
import type { Command } from 'commander';
import { run } from '../run.js';

const operate = () => import('../commands/operate.js');
const service = () => import('../commands/service.js');
const daemonCommands = () => import('../commands/daemon.js');

export function declareOperate(agt: Command): void {
  const tracked = agt
    .command('tracked')
    .description('tracked folders: their agent files can be started by name, autostart at boot and are watched')
    .action(run(async (ctx) => (await operate()).trackedList(ctx)));
  tracked
    .command('ls')
    .alias('list')
    .description('the tracked folders, whether each exists and how many agent files it holds')
    .action(run(async (ctx) => (await operate()).trackedList(ctx)));
  tracked
    .command('add <folder>')
    .description('track a folder (its agents are not started now; at boot, or with agt start)')
    .action(run(async (ctx, folder: string) => (await operate()).trackedAdd(ctx, folder)));
  tracked
    .command('rm <folder>')
    .alias('remove')
    .description('stop tracking a folder (its agents stay loaded; nothing is deleted)')
    .action(run(async (ctx, folder: string) => (await operate()).trackedRemove(ctx, folder)));

  const daemon = agt.command('daemon').description('the daemon process: start, status, logs, stop');
  daemon
    .command('start')
    .description(
      'start agtd in the background (its output appended to agtd.log in the data directory) and wait until it answers',
    )
    .action(run(async (ctx) => (await daemonCommands()).start(ctx)));
  daemon
    .command('status')
    .description(
      'whether a daemon answers, its pid, version, uptime, data directory and log (exit 3 when none answers)',
    )
    .action(run(async (ctx) => (await daemonCommands()).status(ctx)));
  daemon
    .command('logs')
    .description('the log of the daemon agt daemon start started (agtd.log in the data directory); -f follows it')
    .option('-f, --follow', 'keep printing what the daemon logs')
    .option('-n, --tail <n>', 'only the last N lines (default 100)')
    .action(
      run(async (ctx, options: { follow?: boolean; tail?: string }) => (await daemonCommands()).logs(ctx, options)),
    );
  daemon
    .command('stop')
    .description('stop the daemon (agents are unloaded; only from this machine) and wait until it is gone')
    .option('--no-wait', 'return once the daemon accepted')
    .action(run(async (ctx, options: { wait: boolean }) => (await operate()).daemonStop(ctx, options)));

  const svc = agt.command('service').description('run the daemon as a systemd user service');
  svc
    .command('install')
    .description('write a systemd user unit for agtd (in $XDG_CONFIG_HOME/systemd/user); it is never enabled for you')
    .option('--print', 'print the unit instead of writing it')
    .option('--force', 'replace an existing unit file')
    .option('--port <port>', 'the API port (AGT_DAEMON_PORT)')
    .action(
      run(async (ctx, options: { print?: boolean; force?: boolean; port?: string }) =>
        (await service()).install(ctx, options),
      ),
    );
  svc
    .command('uninstall')
    .description('delete the unit file written by agt service install (stop and disable it first)')
    .action(run(async (ctx) => (await service()).uninstall(ctx)));

  agt
    .command('exec <agent> <command...>')
    .description(
      "run a shell command where the agent's commands run (its compute container, or its host sandbox): agt exec A -- ls -la",
    )
    .action(run(async (ctx, agent: string, command: string[]) => (await operate()).exec(ctx, agent, command)));

  agt
    .command('send <agent> <recipient> <text...>')
    .description(
      "send a message from an agent's outbox, as its msg_send tool would (default over the mesh: a DID or a handle)",
    )
    .option('--channel <name>', 'mesh, or a channel adapter type', 'mesh')
    .option('--subject <text>', 'subject')
    .option('--data <json>', 'extra transport fields (JSON object)')
    .option('--wait', 'wait until it is delivered or failed (at most 30 s)')
    .action(
      run(
        async (
          ctx,
          agent: string,
          recipient: string,
          text: string[],
          options: { channel: string; subject?: string; data?: string; wait?: boolean },
        ) => (await operate()).send(ctx, agent, recipient, text.join(' '), options),
      ),
    );
}
