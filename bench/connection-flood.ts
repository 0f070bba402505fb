/**
 * The red-team flood at full scale: `clients` processes (bench/flood-client.mjs, one loopback address
 * each) open `sockets` idle connections in all to the mesh port of the built daemon (bin/agtd.mjs with
 * the mesh extension), then the main API's `GET /health` is called while they hold them. Reports the
 * most file descriptors the daemon held (sampled from /proc: what a flood would use up), the connections as the clients
 * see them, and /health's statuses and slowest answer. With the default
 * connection caps the mesh server keeps at most its budget and /health stays 200; `--uncapped` sets
 * `server.maxConnections` and `server.maxConnectionsPerAddress` to 1,000,000 to show the failure the caps
 * prevent (on a process whose open-file limit is below `sockets`).
 *
 * Alone: `node --import tsx bench/connection-flood.ts [sockets=21000] [clients=2] [--uncapped]`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, percentile } from './http.js';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const args = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
const SOCKETS = Number(args[0] ?? 21_000);
const CLIENTS = Number(args[1] ?? 2);
const UNCAPPED = process.argv.includes('--uncapped');

interface Held {
  open: number;
  connecting: number;
  closed: number;
}

async function startDaemon(dataDir: string): Promise<{ child: ChildProcess; apiPort: number; meshPort: number }> {
  const manifest = join(dataDir, 'extensions.json');
  writeFileSync(
    manifest,
    JSON.stringify({
      extensions: [
        {
          name: 'mesh',
          module: join(ROOT, 'extensions/mesh/index.ts'),
          enabled: true,
          config: { mdns: { enabled: false } },
        },
      ],
    }),
  );
  const settings = UNCAPPED ? { server: { maxConnections: 1_000_000, maxConnectionsPerAddress: 1_000_000 } } : {};
  writeFileSync(join(dataDir, 'settings.json'), JSON.stringify(settings));
  const [apiPort, meshPort] = [await freePort(), await freePort()];
  const child = spawn(process.execPath, [join(ROOT, 'bin/agtd.mjs')], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: dataDir,
      AGT_DAEMON_SETTINGS: join(dataDir, 'settings.json'),
      AGT_DAEMON_PORT: String(apiPort),
      MESH_PORT: String(meshPort),
      AGT_EXTENSIONS: manifest,
      AGT_LOG_LEVEL: 'error',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  await new Promise<void>((done, fail) => {
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      if (out.includes('agt mesh listening') && out.includes('agt daemon listening')) done();
    });
    child.once('exit', () => fail(new Error('the daemon exited')));
  });
  return { child, apiPort, meshPort };
}

/**
 * A flooding client; `held` resolves with its figures once nothing is connecting any more and the open
 * count stayed the same over two reports (the server has accepted or closed everything), or after 20 s.
 */
function flood(meshPort: number, address: string, count: number): { child: ChildProcess; held: Promise<Held> } {
  const child = spawn(
    process.execPath,
    [join(ROOT, 'bench/flood-client.mjs'), String(meshPort), address, String(count)],
    { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
  );
  const started = Date.now();
  const held = new Promise<Held>((done) => {
    let last: Held | undefined;
    child.on('message', (message: Held & { op: string }) => {
      if (message.op !== 'held') return;
      const steady = last !== undefined && message.connecting === 0 && message.open === last.open;
      last = message;
      if (steady || Date.now() - started > 20_000) done(message);
    });
  });
  return { child, held };
}

/**
 * The most file descriptors the daemon held while sampled every 50 ms, and its limit (Linux: /proc):
 * what a flood would use up. `stop()` ends the sampling and gives the figure.
 */
function sampleDescriptors(pid: number): { stop(): string } {
  let most = 0;
  const sample = () => {
    try {
      most = Math.max(most, readdirSync(`/proc/${pid}/fd`).length);
    } catch {
      // no /proc, or the process is gone
    }
  };
  const timer = setInterval(sample, 50);
  return {
    stop() {
      clearInterval(timer);
      sample();
      try {
        return `at most ${most} of ${/^Max open files\s+(\S+)/m.exec(readFileSync(`/proc/${pid}/limits`, 'utf8'))?.[1]}`;
      } catch {
        return 'unknown (no /proc)';
      }
    },
  };
}

/** `GET /health` of the main API, `rounds` times on new connections: statuses (0: no answer) and times. */
async function health(port: number, rounds: number): Promise<{ statuses: number[]; ms: number[] }> {
  const statuses: number[] = [];
  const ms: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    try {
      const answer = await fetch(`http://127.0.0.1:${port}/health`, {
        headers: { connection: 'close' },
        signal: AbortSignal.timeout(5_000),
      });
      statuses.push(answer.status);
      await answer.arrayBuffer();
    } catch {
      statuses.push(0);
    }
    ms.push(performance.now() - started);
  }
  return { statuses, ms };
}

const dataDir = mkdtempSync(join(tmpdir(), 'agt-bench-flood-'));
const daemon = await startDaemon(dataDir);
const sampler = sampleDescriptors(daemon.child.pid!);
const clients = Array.from({ length: CLIENTS }, (_, i) =>
  flood(daemon.meshPort, `127.0.0.${i + 2}`, Math.ceil(SOCKETS / CLIENTS)),
);
try {
  const during = health(daemon.apiPort, 50);
  const held = await Promise.all(clients.map((client) => client.held));
  const fds = sampler.stop();
  const { statuses, ms } = await during;
  const after = await health(daemon.apiPort, 20);
  const kept = held.reduce((sum, item) => sum + item.open, 0);
  const count = (list: number[]) =>
    Object.entries(
      list.reduce<Record<number, number>>((acc, status) => {
        acc[status] = (acc[status] ?? 0) + 1;
        return acc;
      }, {}),
    )
      .map(([status, n]) => `${status}×${n}`)
      .join(' ');
  process.stdout.write(
    `${UNCAPPED ? 'uncapped' : 'default caps'}: ${SOCKETS} sockets from ${CLIENTS} addresses; the daemon's file descriptors: ${fds}; ` +
      `open as the clients see them: ${kept} (per client: ${held.map((item) => item.open).join(', ')}; a handshake the server never accepted counts as open there)\n` +
      `main API /health while flooding: ${count(statuses)}, p99 ${percentile(ms, 99).toFixed(1)} ms, max ${Math.max(...ms).toFixed(1)} ms; ` +
      `with the sockets held: ${count(after.statuses)}, max ${Math.max(...after.ms).toFixed(1)} ms\n`,
  );
} finally {
  for (const client of clients) {
    if (client.child.connected) client.child.send({ op: 'stop' });
  }
  daemon.child.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
}
