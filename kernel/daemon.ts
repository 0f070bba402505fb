/**
 * Start-up and shutdown of the daemon. Start-up: env, settings and data dir, pid file, token, app,
 * kernel modules, extensions, listen, extension start. Shutdown (API, SIGINT, SIGTERM): close HTTP
 * (3 s), unload agents (per-agent deadline), stop extensions, release the pid file; capped at 20 s.
 */
import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Contributions } from './contributions.js';
import { waitAtMost } from './deadline.js';
import { readEnv, type DaemonEnv } from './env.js';
import { StartupError } from './errors.js';
import { KernelBus } from './events/bus.js';
import { loadExtensions } from './extensions/loader.js';
import { buildApp, type KernelApp } from './http/app.js';
import type { KdfCost } from './identity/kdf.js';
import { isLoopbackAddress } from './http/host-check.js';
import { registerKernelRoutes } from './routes/index.js';
import { logActivity } from './runtime/activity-log.js';
import { composeKernel, type KernelServices } from './services.js';
import { claimPidFile } from './pidfile.js';
import { publishUrl } from './url-file.js';
import { loadToken, writeLocalProof } from './secret-files.js';
import { resolveSettingsPath, SettingsStore } from './settings.js';

/** The folder of agt's package.json (the shipped extensions.json is there), from the sources or a build in `dist/`. */
export const PROJECT_ROOT = findUp(dirname(fileURLToPath(import.meta.url)), 'package.json');

function findUp(from: string, name: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, name))) return dir;
    if (dirname(dir) === dir) return resolve(from, '..');
  }
}

export const HTTP_CLOSE_DEADLINE_MS = 3_000;
export const SHUTDOWN_CAP_MS = 20_000;

export interface DaemonOptions {
  /** Environment to read (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** The scrypt cost of owner and agent passwords written by this daemon (tests pass a cheap one). */
  kdfCost?: KdfCost;
  /** Where the listening lines go (default stdout). */
  print?: (line: string) => void;
}

export interface RunningDaemon {
  app: KernelApp;
  /** The kernel's services (tests reach the registry, the bus and the runtime through them). */
  kernel: KernelServices;
  url: string;
  port: number;
  /** Runs the shutdown sequence once; later calls return the same promise. */
  shutdown(reason: string): Promise<void>;
  /** Resolves when shutdown finished (by any cause). */
  closed: Promise<void>;
}

const isLoopbackHost = (host: string) => host === 'localhost' || isLoopbackAddress(host);

/** Runs `work` but gives up waiting after `ms` (the work itself may go on in the background). */
async function within(ms: number, work: () => Promise<void> | void, onTimeout: () => void): Promise<void> {
  await waitAtMost(Promise.resolve().then(work), ms, onTimeout);
}

export async function startDaemon(options: DaemonOptions = {}): Promise<RunningDaemon> {
  const processEnv = options.env ?? process.env;
  const env: DaemonEnv = readEnv(processEnv);
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  if (!isLoopbackHost(env.host) && !env.token) {
    throw new StartupError(
      `refusing to listen on ${env.host} without AGT_DAEMON_TOKEN: a non-loopback address needs an explicit token`,
    );
  }
  const settings = new SettingsStore(resolveSettingsPath(env, processEnv));
  const pidFile = claimPidFile(settings.dataDir);
  try {
    const { token } = loadToken(settings.dataDir, env.token);
    const localProof = writeLocalProof(settings.dataDir);
    let port = env.port;
    const app = await buildApp({
      logLevel: env.logLevel,
      ...(env.logFormat ? { logFormat: env.logFormat } : {}),
      guard: { token, localProof, behindProxy: env.behindProxy, allowedHosts: env.allowedHosts, boundPort: () => port },
    });
    const bus = new KernelBus(app.log);
    let resolveClosed!: () => void;
    const closed = new Promise<void>((done) => (resolveClosed = done));
    let shuttingDown: Promise<void> | undefined;

    const kernel = await composeKernel({
      env,
      settings,
      logger: app.log,
      bus,
      contributions: new Contributions(app.log),
      secrets: { token, localProof },
      boundPort: () => port,
      requestShutdown: (reason) => shutdown(reason),
      ...(options.kdfCost ? { kdfCost: options.kdfCost } : {}),
    });
    // One readable line per turn, tool call and owner wait (not subscribed at all above info).
    if (['info', 'debug', 'trace'].includes(env.logLevel)) logActivity(bus, app.log, (id) => kernel.runtime.byId(id)?.agent.name);
    app.log.info({ dataDir: settings.dataDir }, `data directory ${settings.dataDir}`);
    const kernelPrefixes = await registerKernelRoutes(app, kernel);
    const manifestPath = env.extensionsManifest ? resolve(env.extensionsManifest) : join(PROJECT_ROOT, 'extensions.json');
    const extensions = await loadExtensions(app, kernel, kernel.extensions, manifestPath, { required: Boolean(env.extensionsManifest), kernelPrefixes, env: processEnv, print });

    try {
      await app.listen({ host: env.host, port: env.port });
    } catch (error) {
      await app.close().catch(() => {});
      throw new StartupError(`cannot listen on ${env.host}:${env.port}: ${(error as Error).message}`, { cause: error });
    }
    port = (app.server.address() as AddressInfo).port;
    const urlHost = env.host.includes(':') ? `[${env.host}]` : env.host;
    const url = `http://${urlHost}:${port}`;
    // The `agt` client reads where this daemon listens from the data directory, as it reads the token;
    // written before the listening line, so whoever saw the line finds the file.
    const urlFile = publishUrl(settings.dataDir, url, app.log);
    print(`agt daemon listening on ${url}`);
    await extensions.startAll();
    bus.emit('daemon.started', { agentId: null, payload: { version: kernel.version } });

    const sequence = async (reason: string, capAt: number) => {
      const remaining = () => capAt - Date.now();
      bus.emit('daemon.stopping', { agentId: null, payload: { reason } });
      await within(HTTP_CLOSE_DEADLINE_MS, () => app.close(), () => app.log.warn('HTTP close exceeded 3 s; continuing'));
      for (const step of kernel.shutdownSteps.phase('agents')) {
        await within(remaining(), () => step.run(env.shutdownAgentTimeoutMs), () => app.log.warn(`${step.name} exceeded the shutdown cap`));
      }
      await within(remaining(), () => extensions.stopAll(Math.max(0, remaining())), () => app.log.warn('extension stop exceeded the shutdown cap'));
      for (const step of kernel.shutdownSteps.phase('final')) {
        await within(remaining(), () => step.run(remaining()), () => app.log.warn(`${step.name} exceeded the shutdown cap`));
      }
    };

    function shutdown(reason: string): Promise<void> {
      shuttingDown ??= (async () => {
        const capAt = Date.now() + SHUTDOWN_CAP_MS;
        try {
          await within(SHUTDOWN_CAP_MS, () => sequence(reason, capAt), () => app.log.error('shutdown hit the 20 s cap'));
        } catch (error) {
          app.log.error({ err: error }, 'shutdown step failed');
        } finally {
          urlFile.remove();
          pidFile.release();
          resolveClosed();
        }
      })();
      return shuttingDown;
    }
    return { app, kernel, url, port, shutdown, closed };
  } catch (error) {
    pidFile.release();
    throw error;
  }
}
