/**
 * A real NATS server with JetStream for the fleet tests: Debian's `nats-server`, run in the foreground on
 * loopback with its store in a temp dir (no system service, nothing in /etc read). The port is the one the
 * server picks itself (`-p -1`), read from its log, so no other process can take it first. `stop()` kills it
 * and `start()` brings it back on the same port and store, for the tests of a daemon that loses NATS. When
 * the server is not installed (or cannot start) `startNats` resolves to a reason string, for the test to skip
 * saying why. `t.teardown` kills it and removes the temp dir.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DaemonClient, ROOT } from './daemon.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

const CANDIDATES = ['/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server'];

export interface NatsServer {
  /** `nats://127.0.0.1:PORT`. */
  url: string;
  port: number;
  /** Kills the server (clients lose it at once). */
  stop(): Promise<void>;
  /** Starts it again on the same port and store; resolves once it listens. */
  start(): Promise<void>;
  /** What it logged. */
  log(): string;
}

export interface NatsOptions {
  /** Clients must log in with this user and password. */
  user?: { name: string; password: string };
  /** The client port (default: one the server picks). */
  port?: number;
  /** More arguments (a cluster node's). */
  extra?: string[];
  /** What its log says once it serves (default: `Server is ready`). */
  ready?: RegExp;
}

function binary(): string | undefined {
  const found = CANDIDATES.find((path) => existsSync(path));
  if (found) return found;
  const which = spawnSync('sh', ['-c', 'command -v nats-server'], { encoding: 'utf8' });
  return which.status === 0 && which.stdout.trim() ? which.stdout.trim() : undefined;
}

/** Starts one JetStream server, or resolves why it cannot (the test skips with that reason). */
export async function startNats(t: Teardown, options: NatsOptions = {}): Promise<NatsServer | string> {
  const bin = binary();
  if (!bin) return 'nats-server is not installed (apt-get install nats-server; .ci/run installs it)';
  const dir = mkdtempSync(join(tmpdir(), 'agt-nats-'));
  let child: ChildProcess | undefined;
  let output = '';
  let port = options.port ?? -1;
  const auth = options.user ? ['--user', options.user.name, '--pass', options.user.password] : [];
  const extra = options.extra ?? [];
  const ready = options.ready ?? /Server is ready/;
  const launch = () =>
    new Promise<void>((resolve, reject) => {
      const proc = spawn(
        bin,
        ['-js', '-sd', join(dir, 'store'), '-a', '127.0.0.1', '-p', String(port), ...auth, ...extra],
        {
          cwd: dir,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      child = proc;
      const seen = (chunk: Buffer) => {
        output += chunk.toString();
        const match = /Listening for client connections on [^\s]*:(\d+)/.exec(output.slice(-4000));
        if (match && ready.test(output.slice(-4000))) {
          port = Number(match[1]);
          proc.stderr!.off('data', seen);
          proc.stderr!.on('data', (more: Buffer) => (output += more.toString()));
          resolve();
        }
      };
      proc.stderr!.on('data', seen);
      proc.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      proc.once('exit', (code) => reject(new Error(`nats-server exited (${code}): ${output.slice(-2000)}`)));
    });
  const stop = async () => {
    const proc = child;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const gone = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGKILL');
    await gone;
  };
  t.teardown(async () => {
    await stop();
    rmSync(dir, { recursive: true, force: true });
  });
  try {
    await launch();
  } catch (error) {
    return `nats-server could not start here: ${(error as Error).message}`;
  }
  return {
    get url() {
      return `nats://127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    stop,
    start: launch,
    log: () => output,
  };
}

/**
 * Resolves once the daemon's fleet extension has reached NATS (`GET /fleet` says `connected`): the daemon
 * serves before its extensions start, and connecting goes on in the background after that.
 */
export async function fleetJoined(d: DaemonClient, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    const status = await d.request('GET', '/fleet');
    if (status.status === 200 && status.body.connected === true) return;
    if (Date.now() > until)
      throw new Error(`the daemon at ${d.url} did not join the fleet: ${JSON.stringify(status.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * The shipped extensions.json with `fleet` enabled (and given `config`), module paths made absolute: the
 * daemons of a fleet test run every other extension as shipped.
 */
export function fleetManifest(config: Record<string, unknown> = {}): { extensions: unknown[] } {
  const { extensions } = JSON.parse(readFileSync(join(ROOT, 'extensions.json'), 'utf8')) as {
    extensions: Array<Record<string, unknown>>;
  };
  if (!extensions.some((entry) => entry.name === 'fleet'))
    throw new Error('fleetManifest: no fleet in extensions.json');
  return {
    extensions: extensions.map((entry) => ({
      ...entry,
      module: join(ROOT, String(entry.module)),
      ...(entry.name === 'fleet' ? { enabled: true, config } : {}),
    })),
  };
}

export interface NatsCluster {
  /** Every node's client URL. */
  urls: string[];
  nodes: NatsServer[];
}

/**
 * A JetStream cluster of `size` nodes on loopback, each with its own store in a temp dir. Ports are picked
 * free first (the routes must name them before the nodes start). Resolves once every node is ready and the
 * cluster has a JetStream meta leader, or to a reason string when nats-server cannot run here.
 */
export async function startNatsCluster(t: Teardown, size = 3): Promise<NatsCluster | string> {
  const ports = await Promise.all(Array.from({ length: size * 2 }, () => freeLoopbackPort()));
  const client = ports.slice(0, size);
  const cluster = ports.slice(size);
  const routes = cluster.map((port) => `nats://127.0.0.1:${port}`).join(',');
  const nodes: NatsServer[] = [];
  for (let index = 0; index < size; index += 1) {
    const node = await startNats(t, {
      port: client[index]!,
      extra: [
        '--server_name',
        `n${index + 1}`,
        '--cluster_name',
        'agt-test',
        '--cluster',
        `nats://127.0.0.1:${cluster[index]}`,
        '--routes',
        routes,
      ],
      ready: /Server is ready/,
    });
    if (typeof node === 'string') return node;
    nodes.push(node);
  }
  return { urls: nodes.map((node) => node.url), nodes };
}

async function freeLoopbackPort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
