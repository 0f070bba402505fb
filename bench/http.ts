/**
 * What the bench scripts share: the daemon token they start daemons with, a free loopback port, a plain
 * HTTP call (no keep-alive, JSON when the answer is JSON), percentiles and starting the built daemon.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const TOKEN = 'bench-token-0123456789abcdef';

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

export interface Reply {
  status: number;
  body: any;
}

export function call(port: number, method: string, path: string, body?: unknown, auth = true): Promise<Reply> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((done, fail) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent: false,
        headers: {
          ...(auth ? { authorization: `Bearer ${TOKEN}` } : {}),
          ...(payload !== undefined
            ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }
            : {}),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          let parsed: unknown = text;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            // not JSON
          }
          done({ status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.on('error', fail);
    req.end(payload);
  });
}

/** Runs a bench's `main`, then its cleanups newest first (each best effort), even when `main` failed. */
export async function runThenClean(main: () => Promise<void>, cleanups: Array<() => unknown>): Promise<void> {
  try {
    await main();
  } finally {
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch {
        // best effort
      }
    }
  }
}

export interface BuiltDaemon {
  port: number;
  child: ChildProcess;
  /** Resolves once the process is gone. */
  exited: Promise<unknown>;
}

/**
 * Starts the build in `dist` (with bin/v8-flags.mjs, as `npm start` does) on `dataDir`, whose
 * `settings.json` the caller wrote; resolves once `/health` answers. Killed by the bench's cleanups.
 */
export async function startBuiltDaemon(
  root: string,
  dist: string,
  dataDir: string,
  cleanups: Array<() => unknown>,
  nodeArgs: string[] = [],
): Promise<BuiltDaemon> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    ['--import', pathToFileURL(join(root, 'bin', 'v8-flags.mjs')).href, ...nodeArgs, ...buildEntry(dist)],
    {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: dataDir,
        AGT_DAEMON_SETTINGS: join(dataDir, 'settings.json'),
        AGT_DAEMON_TOKEN: TOKEN,
        AGT_DAEMON_PORT: String(port),
        MESH_PORT: String(await freePort()),
      },
      stdio: ['ignore', 'ignore', 'ignore'],
    },
  );
  const exited = new Promise((done) => child.once('exit', done));
  cleanups.push(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
    await exited;
  });
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the daemon exited with ${child.exitCode}`);
    try {
      if ((await call(port, 'GET', '/health', undefined, false)).status === 200) break;
    } catch {
      // not listening yet
    }
    await new Promise((done) => setTimeout(done, 20));
  }
  return { port, child, exited };
}

/**
 * The node arguments that run a build folder's daemon as `agtd` does: its one script through
 * bench/run-bundle.mjs when it has one (scripts/daemon-bundle.mjs), otherwise its `main` module.
 */
export function buildEntry(dir: string): string[] {
  const info = JSON.parse(readFileSync(join(dir, '.agt-build.json'), 'utf8')) as { main: string; bundle?: string };
  return info.bundle
    ? [join(fileURLToPath(new URL('.', import.meta.url)), 'run-bundle.mjs'), dir]
    : [join(dir, info.main)];
}
