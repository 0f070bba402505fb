/**
 * `agt daemon start|status|logs` and `agt version`, with docker's habits: `start` runs `agtd` detached,
 * its output appended to `agtd.log` in the data directory, and returns once the daemon answers (or
 * says why it did not start); `status` says whether one answers and what it is; `logs [-f]` shows that
 * log file. The daemon gets this shell's environment, so the variables it reads (`AGT_DAEMON_PORT`,
 * `MESH_PORT`, `DOCKER_HOST`, …) apply as they would to `agtd` typed here.
 */
import { spawn } from 'node:child_process';
import { closeSync, createReadStream, existsSync, mkdirSync, openSync, readFileSync, statSync, watch } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiClient } from '../client.js';
import { dataDirOf, resolveConnection } from '../connection.js';
import type { Ctx } from '../context.js';
import { CliError, EXIT } from '../errors.js';
import { agtdPath } from './service.js';

export const LOG_FILE = 'agtd.log';
const START_WAIT_MS = 30_000;

interface Runtime {
  version: string;
  pid: number;
  uptimeMs: number;
  dataDir: string;
}

/** The running daemon's `/runtime`, or undefined when none answers at the URL. */
async function runtimeOf(client: ApiClient): Promise<Runtime | undefined> {
  try {
    return await client.get<Runtime>('/runtime');
  } catch (error) {
    if (error instanceof CliError && error.exitCode === EXIT.unreachable) return undefined;
    throw error;
  }
}

/** The last `lines` lines of a file (the whole file is read: the log of one start is small). */
function lastLines(path: string, lines: number): string {
  if (!existsSync(path)) return '';
  const all = readFileSync(path, 'utf8').split('\n');
  if (all.at(-1) === '') all.pop();
  return all
    .slice(-lines)
    .map((line) => `${line}\n`)
    .join('');
}

export async function start(ctx: Ctx): Promise<number | void> {
  const running = await runtimeOf(ctx.client);
  if (running) {
    ctx.out.result({ started: false, running: true, pid: running.pid, url: ctx.client.connection.url }, () =>
      ctx.out.line(`a daemon already answers at ${ctx.client.connection.url} (pid ${running.pid})`),
    );
    return;
  }
  const dataDir = dataDirOf(ctx.options);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const logPath = join(dataDir, LOG_FILE);
  const logFd = openSync(logPath, 'a', 0o600);
  const logStart = statSync(logPath).size;
  const env = {
    ...process.env,
    ...(ctx.options.settings ? { AGT_DAEMON_SETTINGS: resolve(ctx.options.settings) } : {}),
  };
  // A log file is no terminal: the daemon logs one JSON object per line unless told otherwise.
  const child = spawn(process.execPath, [agtdPath()], { detached: true, stdio: ['ignore', logFd, logFd], env });
  closeSync(logFd);
  let exited: number | null | undefined;
  child.once('exit', (code, signal) => (exited = code ?? (signal ? 128 : 1)));
  child.unref();
  const deadline = Date.now() + START_WAIT_MS;
  const urlFile = join(dataDir, 'daemon-url');
  for (;;) {
    if (exited !== undefined) {
      const said = readFileSync(logPath, 'utf8').slice(logStart).trim().split('\n').slice(-15).join('\n');
      throw new CliError(
        `agtd exited (code ${exited}) before it answered; its log (${logPath}) says:\n${said}`,
        EXIT.failed,
      );
    }
    // The daemon writes daemon-url once it listens; this connection finds it as every command does.
    const connection = resolveConnection(ctx.options);
    if (existsSync(urlFile)) {
      const runtime = await runtimeOf(new ApiClient(connection)).catch(() => undefined);
      if (runtime?.pid === child.pid) {
        ctx.out.result({ started: true, pid: child.pid, url: connection.url, dataDir, log: logPath }, () => {
          ctx.out.line(`agt daemon started (pid ${child.pid}) at ${connection.url}`);
          ctx.out.line(ctx.out.dim(`log: ${logPath} (agt daemon logs -f); stop: agt daemon stop`));
        });
        return;
      }
    }
    if (Date.now() > deadline) {
      throw new CliError(
        `agtd (pid ${child.pid}) did not answer within ${START_WAIT_MS / 1000} s; its log: ${logPath}`,
        EXIT.failed,
      );
    }
    await sleep(100);
  }
}

export async function status(ctx: Ctx): Promise<number | void> {
  const { connection } = ctx.client;
  const log = join(dataDirOf(ctx.options), LOG_FILE);
  const runtime = await runtimeOf(ctx.client);
  if (!runtime) {
    ctx.out.result({ running: false, url: connection.url, urlSource: connection.urlSource }, () =>
      ctx.out.line(
        `not running: no daemon answers at ${connection.url} (the address came from ${connection.urlSource}); agt daemon start starts one`,
      ),
    );
    return EXIT.unreachable;
  }
  ctx.out.result(
    {
      running: true,
      url: connection.url,
      pid: runtime.pid,
      version: runtime.version,
      dataDir: runtime.dataDir,
      uptimeMs: runtime.uptimeMs,
      log: existsSync(log) ? log : null,
    },
    () => {
      ctx.out.line(
        `running: pid ${runtime.pid}, version ${runtime.version}, at ${connection.url}, up ${Math.round(runtime.uptimeMs / 1000)} s`,
      );
      ctx.out.line(`data directory: ${runtime.dataDir}`);
      if (existsSync(log)) ctx.out.line(`log (agt daemon start): ${log}`);
    },
  );
}

export async function logs(ctx: Ctx, options: { follow?: boolean; tail?: string }): Promise<void> {
  const path = join(dataDirOf(ctx.options), LOG_FILE);
  if (!existsSync(path)) {
    throw new CliError(
      `no ${path}: only a daemon started with agt daemon start logs there (agtd in a terminal logs to it; a service: journalctl --user -u agtd)`,
      EXIT.failed,
    );
  }
  const tail = options.tail === undefined ? 100 : Number(options.tail);
  if (!Number.isInteger(tail) || tail < 0) throw new CliError('--tail (-n) takes a number of lines', EXIT.usage);
  process.stdout.write(lastLines(path, tail));
  if (!options.follow) return;
  let offset = statSync(path).size;
  const more = () =>
    new Promise<void>((done) => {
      const size = statSync(path).size;
      if (size < offset) offset = 0; // truncated: start over
      if (size === offset) return done();
      const stream = createReadStream(path, { start: offset, end: size - 1 });
      stream.on('data', (chunk) => process.stdout.write(chunk));
      stream.on('close', () => {
        offset = size;
        done();
      });
    });
  // Runs until interrupted: each change of the file prints what was appended.
  let reading = Promise.resolve();
  watch(path, () => (reading = reading.then(more)));
  await new Promise(() => {});
}

export async function version(ctx: Ctx, clientVersion: string): Promise<void> {
  const runtime = await runtimeOf(ctx.client).catch(() => undefined);
  const body = {
    client: clientVersion,
    daemon: runtime ? { version: runtime.version, url: ctx.client.connection.url } : null,
  };
  ctx.out.result(body, () => {
    ctx.out.line(`agt (client): ${clientVersion}`);
    ctx.out.line(
      runtime
        ? `agtd (daemon at ${ctx.client.connection.url}): ${runtime.version}`
        : `agtd: no daemon answers at ${ctx.client.connection.url}`,
    );
  });
}
