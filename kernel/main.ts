/**
 * The `agtd` command: parses flags, starts the daemon, wires signals, exits when shut down. The daemon
 * module is imported only once the flags ask for a daemon: `--help` and `--version` load this file and
 * the variables' table, not the kernel (from the sources through tsx that was seconds).
 */
import { parseArgs } from 'node:util';
import { ENV_HELP } from './env.js';
import { StartupError } from './errors.js';
import { AGT_VERSION } from './version.js';

const HELP = `agtd: the agt agent runtime daemon

Usage: agtd [--host HOST] [--port PORT] [--settings FILE] [--extensions FILE] [--log-format pretty|json]

Options (each overrides its environment variable):
  --host HOST          listen address (AGT_DAEMON_HOST)
  --port PORT          listen port, 0 for any free port (AGT_DAEMON_PORT)
  --settings FILE      settings file; its folder is the data directory (AGT_DAEMON_SETTINGS)
  --extensions FILE    extension manifest (AGT_EXTENSIONS)
  --log-format FORMAT  pretty or json; default pretty on a terminal (AGT_LOG_FORMAT)
  -h, --help           this text
  -v, --version        the version

Environment:
${ENV_HELP.map(([name, text]) => `  ${name.padEnd(27)}${text}`).join('\n')}
`;

let markStarted!: () => void;
/**
 * Resolves once the daemon listens and its extensions started (never for `--help`, `--version` or a failed
 * start): bin/daemon-bundle.mjs writes V8's code cache of the start then.
 */
export const started = new Promise<void>((done) => (markStarted = done));

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      host: { type: 'string' },
      port: { type: 'string' },
      settings: { type: 'string' },
      extensions: { type: 'string' },
      'log-format': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'v' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(HELP);
    return;
  }
  if (values.version) {
    process.stdout.write(`${AGT_VERSION}\n`);
    return;
  }
  const env = { ...process.env };
  if (values.host !== undefined) env.AGT_DAEMON_HOST = values.host;
  if (values.port !== undefined) env.AGT_DAEMON_PORT = values.port;
  if (values.settings !== undefined) env.AGT_DAEMON_SETTINGS = values.settings;
  if (values.extensions !== undefined) env.AGT_EXTENSIONS = values.extensions;
  if (values['log-format'] !== undefined) {
    if (values['log-format'] !== 'pretty' && values['log-format'] !== 'json')
      throw new StartupError(`--log-format must be pretty or json, got "${values['log-format']}"`);
    env.AGT_LOG_FORMAT = values['log-format'];
  }

  // Signals are taken from the first moment: one that arrives while the daemon starts ends the start-up
  // at its next step and shuts it down as usual (pid file removed, one line logged), never the default
  // exit that leaves the pid file behind.
  const stop = new AbortController();
  let daemon: Awaited<ReturnType<typeof import('./daemon.js').startDaemon>> | undefined;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (daemon) void daemon.shutdown(signal);
      else if (!stop.signal.aborted) stop.abort(signal);
    });
  }
  const { startDaemon } = await import('./daemon.js');
  daemon = await startDaemon({ env, stopSignal: stop.signal });
  markStarted();
  const running = daemon;
  // One agent's failure never stops the daemon: log what escaped and keep serving.
  process.on('uncaughtException', (error) => running.app.log.error({ err: error }, 'uncaught exception'));
  process.on('unhandledRejection', (reason) => running.app.log.error({ err: reason }, 'unhandled rejection'));
  await running.closed;
  process.exit(0);
}

main().catch((error: unknown) => {
  if (error instanceof StartupError || (error as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    process.stderr.write(`agtd: ${(error as Error).message}\n`);
  } else {
    process.stderr.write(`agtd: failed to start: ${(error as Error).stack ?? String(error)}\n`);
  }
  process.exit(1);
});
