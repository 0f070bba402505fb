/**
 * A real Docker engine for the compute tests: Debian's `dockerd`, started by the test itself as root
 * with its own data root, exec root and socket in a temporary folder, no iptables and no bridge (so it
 * changes nothing on the host), and stopped at teardown. When it cannot run here (not root, not
 * installed, no static busybox for the base image) `startDockerEngine` resolves to the reason, and the
 * test skips saying it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, closeSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { isStaticElf } from '../../extensions/compute/image.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export interface DockerEngine {
  /** `unix:///tmp/agt-dk-.../docker.sock`: the compute option `dockerHost`. */
  host: string;
  socketPath: string;
  /** Calls the engine API (`GET /containers/json`, ...) and resolves its status and JSON body. */
  api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** What dockerd wrote. */
  log(): string;
}

const DOCKERD = ['/usr/sbin/dockerd', '/usr/bin/dockerd'];
export const STATIC_BUSYBOX = '/bin/busybox';

function api(socketPath: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        socketPath,
        method,
        path,
        headers: payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {},
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = text ? JSON.parse(text) : null;
          } catch {
            // Not JSON (`OK` of /_ping).
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error(`docker API ${method} ${path}: no answer`)));
    req.once('error', reject);
    req.end(payload);
  });
}

function exited(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => (clearTimeout(timer), resolve(true)));
  });
}

/** Starts a private dockerd; resolves the engine, or the reason it cannot run here. */
export async function startDockerEngine(t: Teardown): Promise<DockerEngine | string> {
  if (process.getuid?.() !== 0) return 'dockerd needs root (CI runs as root)';
  const dockerd = DOCKERD.find((path) => existsSync(path));
  if (!dockerd) return "dockerd is not installed (.ci/run installs Debian's docker.io)";
  if (!existsSync(STATIC_BUSYBOX) || !(await isStaticElf(STATIC_BUSYBOX)))
    return 'no static busybox at /bin/busybox for the base image (.ci/run installs busybox-static)';
  // A short path: the socket's must stay under 108 bytes.
  const dir = mkdtempSync('/tmp/agt-dk-');
  const socketPath = join(dir, 'docker.sock');
  const logFile = join(dir, 'dockerd.log');
  const out = openSync(logFile, 'a');
  const child = spawn(
    dockerd,
    [
      `--host=unix://${socketPath}`,
      `--data-root=${join(dir, 'data')}`,
      `--exec-root=${join(dir, 'exec')}`,
      `--pidfile=${join(dir, 'dockerd.pid')}`,
      '--iptables=false',
      '--ip6tables=false',
      '--bridge=none',
      '--storage-driver=overlay2',
    ],
    { stdio: ['ignore', out, out], detached: true },
  );
  closeSync(out);
  const log = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  t.teardown(async () => {
    // A network's bridge interface belongs to the host, not to the data root removed below: networks a
    // test made are removed first, or every run leaves a bridge holding one of the default address pools
    // (31 runs exhausted them here: "could not find an available, non-overlapping IPv4 address pool").
    const networks = await api(socketPath, 'GET', '/networks').catch(() => undefined);
    for (const network of Array.isArray(networks?.body) ? networks.body : []) {
      if (!['bridge', 'host', 'none'].includes(network.Name))
        await api(socketPath, 'DELETE', `/networks/${network.Id}`).catch(() => undefined);
    }
    // dockerd stops its containers and unmounts their layers on SIGTERM; SIGKILL only if it hangs.
    child.kill('SIGTERM');
    if (!(await exited(child, 20_000))) {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Gone already.
      }
      await exited(child, 5_000);
    }
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  });
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null)
      return `dockerd exited at start (${child.exitCode}): ${log().split('\n').slice(-5).join(' | ')}`;
    if (existsSync(socketPath)) {
      const pong = await api(socketPath, 'GET', '/_ping').catch(() => undefined);
      if (pong?.status === 200) break;
    }
    if (Date.now() > deadline) return `dockerd did not answer within 30 s: ${log().split('\n').slice(-5).join(' | ')}`;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    host: `unix://${socketPath}`,
    socketPath,
    api: (method, path, body) => api(socketPath, method, path, body),
    log,
  };
}
