/**
 * Start-up and shutdown of the daemon. Start-up: env, settings and data dir, pid file, token, app,
 * kernel modules, extensions, listen, extension start. Shutdown (API, SIGINT, SIGTERM, at any moment
 * of start-up too): refuse new requests, unload agents (per-agent deadline) while the event streams
 * still take the ends of their turns, close HTTP (3 s), stop extensions, release the pid file, log one
 * line; capped at 20 s.
 */
import { existsSync } from 'node:fs';
import { AgtError } from '@agt/contracts';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Contributions } from './extensions/contributions.js';
import { waitAtMost } from './deadline.js';
import { readEnv, type DaemonEnv } from './env.js';
import { StartupError } from './errors.js';
import { KernelBus } from './events/bus.js';
import { loadExtensions, type ExtensionHost } from './extensions/loader.js';
import { buildApp, type KernelApp } from './http/app.js';
import { AgentRelay } from './http/agent-forwarding.js';
import type { KdfCost } from './identity/kdf.js';
import { isLoopbackAddress } from './http/host-check.js';
import { requestAuth } from './http/guards.js';
import { acceptedByCredentialChecks } from './extensions/kernel-points.js';
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
  /**
   * Aborted when the daemon is asked to stop while it starts (SIGINT, SIGTERM; the reason names it):
   * start-up ends at its next step, the daemon shuts down as usual and `startDaemon` resolves with it
   * (its `closed` resolves once it is down; `url` is empty when it never listened).
   */
  stopSignal?: AbortSignal;
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
      connectionCaps: () => settings.current().server,
      ...(env.logFormat ? { logFormat: env.logFormat } : {}),
      guard: {
        token,
        localProof,
        behindProxy: env.behindProxy,
        allowedHosts: env.allowedHosts,
        boundPort: () => port,
        // Extensions' credentials (the console's sessions): read from the points at request time.
        otherCredential: (request) => acceptedByCredentialChecks(contributions.points, request),
      },
    });
    const contributions = new Contributions(app.log);
    const bus = new KernelBus(app.log);
    let resolveClosed!: () => void;
    const closed = new Promise<void>((done) => (resolveClosed = done));
    let shuttingDown: Promise<void> | undefined;
    let extensions: ExtensionHost | undefined;
    let urlFile: { remove(): void } | undefined;
    let url = '';
    /** Set when the stop came before start-up finished: the stop line says so. */
    let startingUp = true;

    const kernel = await composeKernel({
      env,
      settings,
      logger: app.log,
      bus,
      contributions,
      secrets: { token, localProof },
      boundPort: () => port,
      requestShutdown: (reason) => shutdown(reason),
      ...(options.kdfCost
        ? { kdfCost: options.kdfCost }
        : env.kdfLog2N
          ? { kdfCost: { N: 2 ** env.kdfLog2N, r: 8, p: 1 } }
          : {}),
    });

    const sequence = async (reason: string, capAt: number) => {
      const remaining = () => capAt - Date.now();
      bus.emit('daemon.stopping', { agentId: null, payload: { reason } });
      // The event streams stay open while the agents stop: the ends of the turns the shutdown stops
      // (`agent.error` `unloaded`) are written to them before they end. Closing the app first makes
      // every new request a 503 at once; the listener closes once the streams have ended.
      let agentsStopped!: () => void;
      kernel.eventStream.holdOpenUntil(new Promise<void>((done) => (agentsStopped = done)));
      const httpClosed = app.close().catch((error: unknown) => app.log.error({ err: error }, 'HTTP close failed'));
      try {
        for (const step of kernel.shutdownSteps.phase('agents')) {
          await within(
            remaining(),
            () => step.run(env.shutdownAgentTimeoutMs),
            () => app.log.warn(`${step.name} exceeded the shutdown cap`),
          );
        }
      } finally {
        agentsStopped();
      }
      await within(
        HTTP_CLOSE_DEADLINE_MS,
        () => httpClosed,
        () => app.log.warn('HTTP close exceeded 3 s; continuing'),
      );
      if (extensions) {
        const started = extensions;
        await within(
          remaining(),
          () => started.stopAll(Math.max(0, remaining())),
          () => app.log.warn('extension stop exceeded the shutdown cap'),
        );
      }
      for (const step of kernel.shutdownSteps.phase('final')) {
        await within(
          remaining(),
          () => step.run(remaining()),
          () => app.log.warn(`${step.name} exceeded the shutdown cap`),
        );
      }
    };

    function shutdown(reason: string): Promise<void> {
      shuttingDown ??= (async () => {
        const startedAt = Date.now();
        const capAt = startedAt + SHUTDOWN_CAP_MS;
        try {
          await within(
            SHUTDOWN_CAP_MS,
            () => sequence(reason, capAt),
            () => app.log.error('shutdown hit the 20 s cap'),
          );
        } catch (error) {
          app.log.error({ err: error }, 'shutdown step failed');
        } finally {
          urlFile?.remove();
          pidFile.release();
          // The one line that says the daemon is gone (whatever the cause and the moment).
          const when = startingUp ? ' during start-up' : '';
          app.log.info(
            { reason, durationMs: Date.now() - startedAt, ...(startingUp ? { duringStartup: true } : {}) },
            `agt daemon stopped (${reason}${when})`,
          );
          resolveClosed();
        }
      })();
      return shuttingDown;
    }
    const running = (): RunningDaemon => ({ app, kernel, url, port, shutdown, closed });
    /** A stop asked for during start-up (SIGINT, SIGTERM): start-up ends here and the daemon shuts down. */
    const stopAsked = () =>
      options.stopSignal?.aborted ? String(options.stopSignal.reason ?? 'stop requested') : undefined;
    const stopNow = (reason: string) => {
      void shutdown(reason);
      return running();
    };

    let stop = stopAsked();
    if (stop) return stopNow(stop);
    // One readable line per turn, tool call and owner wait (not subscribed at all above info).
    if (['info', 'debug', 'trace'].includes(env.logLevel))
      logActivity(bus, app.log, (id) => kernel.runtime.byId(id)?.agent.name);
    app.log.info({ dataDir: settings.dataDir }, `data directory ${settings.dataDir}`);
    // Requests for an agent another daemon of a fleet runs go there (the `agt.agent-forwarder` point).
    const relay = new AgentRelay({
      points: () => contributions.points,
      loadedHere: (reference) => loadedHere(kernel.registry, reference),
    });
    relay.install(app);
    const kernelPrefixes = await registerKernelRoutes(app, kernel);
    const manifestPath = env.extensionsManifest
      ? resolve(env.extensionsManifest)
      : join(PROJECT_ROOT, 'extensions.json');
    const host = {
      ...kernel,
      requests: relay.localRequests(app, token, () => port),
      auth: requestAuth(token),
      runtimeKey: { did: kernel.identity.runtimeDid, sign: (bytes: Uint8Array) => kernel.identity.runtimeSign(bytes) },
    };
    extensions = await loadExtensions(app, host, kernel.extensions, manifestPath, {
      required: Boolean(env.extensionsManifest),
      kernelPrefixes,
      env: processEnv,
      print,
    });
    stop = stopAsked();
    if (stop) return stopNow(stop);

    try {
      await app.listen({ host: env.host, port: env.port });
    } catch (error) {
      await app.close().catch(() => {});
      throw new StartupError(`cannot listen on ${env.host}:${env.port}: ${(error as Error).message}`, { cause: error });
    }
    port = (app.server.address() as AddressInfo).port;
    const urlHost = env.host.includes(':') ? `[${env.host}]` : env.host;
    url = `http://${urlHost}:${port}`;
    // Extensions' `register` runs inside listen (fastify loads plugins there): a stop asked meanwhile
    // ends start-up before the daemon says it listens.
    stop = stopAsked();
    if (stop) return stopNow(stop);
    // The `agt` client reads where this daemon listens from the data directory, as it reads the token;
    // written before the listening line, so whoever saw the line finds the file.
    urlFile = publishUrl(settings.dataDir, url, app.log);
    print(`agt daemon listening on ${url}`);
    // Extensions start while the daemon already serves; a stop asked for meanwhile does not wait for them.
    const signal = options.stopSignal;
    const asked = signal
      ? new Promise<void>((done) =>
          signal.aborted ? done() : signal.addEventListener('abort', () => done(), { once: true }),
        )
      : undefined;
    await (asked ? Promise.race([extensions.startAll(), asked]) : extensions.startAll());
    stop = stopAsked();
    if (stop) return stopNow(stop);
    startingUp = false;
    bus.emit('daemon.started', { agentId: null, payload: { version: kernel.version } });
    return running();
  } catch (error) {
    pidFile.release();
    throw error;
  }
}

/** Does `reference` name an agent loaded here (or several, which the local route answers with 409)? */
function loadedHere(registry: KernelServices['registry'], reference: string): boolean {
  try {
    registry.resolve(reference);
    return true;
  } catch (error) {
    return !(error instanceof AgtError && error.code === 'not_found');
  }
}
