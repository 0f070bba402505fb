/**
 * Test harness: boots a real daemon on port 0 with a temporary data directory, in this process
 * (`bootDaemon`) or as a child process (`spawnDaemon`), and talks real HTTP to it. Everything it
 * creates is removed by `t.teardown`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
// The kernel is imported when a test boots a daemon in its process (bootDaemon), not at this module's
// import: files that only spawn daemons, or use ROOT/tempDir, skip its ~0.6 s of CPU.
import type { RunningDaemon } from '../../kernel/daemon.js';
import type { AgentRuntimeHooks } from '../../kernel/agents/runtime-hooks.js';
import type { KdfCost } from '../../kernel/identity/kdf.js';
import { builtTwin, buildLayout } from '../../kernel/extensions/typescript.js';
import { openSse, type SseMessage } from './sse-client.js';

/**
 * The project folder. Run from the test build (`.test-build/`, scripts/build-tests.mjs: its marker names
 * the folder it was built from), still the project folder: paths built from ROOT name the sources, and
 * the daemon loads a source path's built twin.
 */
export const ROOT = projectRoot(resolve(fileURLToPath(new URL('../..', import.meta.url))));

function projectRoot(dir: string): string {
  const marker = join(dir, '.agt-build.json');
  if (!existsSync(marker)) return dir;
  const { sourceRoot } = JSON.parse(readFileSync(marker, 'utf8')) as { sourceRoot?: string };
  return resolve(dir, sourceRoot ?? '..');
}

/**
 * Imports a module by its file path, a `.ts` one included, from the sources as from the test build: a
 * project source file loads its built twin there (one copy of each module), and any other TypeScript
 * (a copy in a temp folder) is transpiled on the way in. A test importing a `.ts` path uses this.
 */
export async function importFile<T = Record<string, unknown>>(path: string): Promise<T> {
  const twin = builtTwin(path);
  // From the test build, other TypeScript goes through the suite's own hooks (scripts/test-hooks.mjs:
  // always an ES module, as a `.ts` file is in the sources), registered in this process once.
  if (/\.(m|c)?ts$/.test(twin) && buildLayout())
    await import(pathToFileURL(join(ROOT, 'scripts/test-register.mjs')).href);
  return (await import(pathToFileURL(twin).href)) as T;
}

interface Teardown {
  teardown(fn: () => unknown): void;
}

export function tempDir(t: Teardown, prefix = 'agt-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export interface BootOptions {
  env?: Record<string, string>;
  settings?: Record<string, unknown>;
  /** Extension manifest object; default: no extensions. Pass `'default'` for the project's extensions.json. */
  extensions?: { extensions: unknown[] } | 'default';
  dataDir?: string;
  /** The scrypt cost of passphrases written by this daemon; default a cheap one (2^10) so tests stay fast. */
  kdfCost?: KdfCost;
  /** Receives the listening lines the daemon (and its extensions) print; default: dropped. */
  print?: (line: string) => void;
  /** A spawned daemon runs as this user (through setpriv; the test runs as root); its folders must be theirs. */
  uid?: number;
}

const TEST_KDF: KdfCost = { N: 1024, r: 8, p: 1 };

/** The data dir and the allow-listed environment of a test daemon (in-process or a child), its manifest written. */
export function prepareEnv(t: Teardown, options: BootOptions) {
  const dataDir = options.dataDir ?? tempDir(t);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? dataDir,
    AGT_DAEMON_SETTINGS: join(dataDir, 'settings.json'),
    AGT_DAEMON_PORT: '0',
    AGT_LOG_LEVEL: 'silent',
    // The mesh extension's server: never the default port in tests.
    MESH_PORT: '0',
    ...options.env,
  };
  if (options.settings) writeFileSync(join(dataDir, 'settings.json'), JSON.stringify(options.settings));
  if (options.extensions !== 'default' && !env.AGT_EXTENSIONS) {
    // Beside, not inside, the data dir: a test may want the daemon to create the data dir itself.
    const manifest = join(tempDir(t, 'agt-manifest-'), 'extensions.test.json');
    writeFileSync(manifest, JSON.stringify(options.extensions ?? { extensions: [] }));
    env.AGT_EXTENSIONS = manifest;
  }
  return { dataDir, env };
}

export type Request = (
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<{ status: number; body: any; headers: Headers }>;

/** What a test has of any daemon it started: its URL, data dir and token, and real HTTP to it. */
export interface DaemonClient {
  url: string;
  dataDir: string;
  token: string;
  /** Real HTTP with the bearer token; `body` objects are sent as JSON. */
  request: Request;
}

/** A daemon booted in the test's process, its kernel within reach: for tests of kernel internals. */
export interface TestDaemon extends DaemonClient {
  daemon: RunningDaemon;
}

/** Real HTTP to `url` with the bearer `token`; `body` objects are sent as JSON, JSON answers parsed. */
export function httpClient(url: string, token: string): Request {
  return async (method, path, body, headers = {}) => {
    const init: RequestInit = { method, headers: { authorization: `Bearer ${token}`, ...headers } };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
    }
    const response = await fetch(url + path, init);
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // Not JSON: keep the text.
    }
    return { status: response.status, body: parsed, headers: response.headers };
  };
}

export async function bootDaemon(t: Teardown, options: BootOptions = {}): Promise<TestDaemon> {
  const { dataDir, env } = prepareEnv(t, options);
  const { startDaemon } = await import('../../kernel/daemon.js');
  const daemon = await startDaemon({ env, print: options.print ?? (() => {}), kdfCost: options.kdfCost ?? TEST_KDF });
  t.teardown(() => daemon.shutdown('test teardown'));
  const token = env.AGT_DAEMON_TOKEN ?? readFileSync(join(dataDir, 'daemon-token'), 'utf8').trim();
  const request = httpClient(daemon.url, token);
  return { daemon, url: daemon.url, dataDir, token, request };
}

/**
 * The shipped extensions.json with some extensions' `config` replaced (by name) and its module paths made
 * absolute, for a test that needs an option only the manifest carries (the mesh's retry timing, say) while
 * every other extension stays as shipped.
 */
export function shippedManifest(configs: Record<string, Record<string, unknown>> = {}): { extensions: unknown[] } {
  const { extensions } = JSON.parse(readFileSync(join(ROOT, 'extensions.json'), 'utf8')) as {
    extensions: Array<Record<string, unknown>>;
  };
  for (const name of Object.keys(configs))
    if (!extensions.some((entry) => entry.name === name))
      throw new Error(`shippedManifest: no extension ${name} in extensions.json`);
  return {
    extensions: extensions.map((entry) => ({
      ...entry,
      module: resolve(ROOT, String(entry.module)),
      ...(configs[String(entry.name)] ? { config: configs[String(entry.name)] } : {}),
    })),
  };
}

export interface SpawnedDaemon extends DaemonClient {
  child: ChildProcess;
  /** The environment it was started with (a restart reuses it). */
  env: Record<string, string>;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
  /** Sends `signal` (default SIGTERM) and resolves with the exit code once the process is gone. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** Stops it (SIGTERM) and starts it again on the same data dir and environment, `env` added. */
  restart(env?: Record<string, string>): Promise<SpawnedDaemon>;
}

/**
 * Starts the daemon as users start it: `bin/agtd.mjs` (`npm start`, `agtd`) running the build in dist/, with
 * the shipped extensions.json unless `options.extensions` names another manifest. The black-box tier:
 * every test that talks to a daemon as a client would uses this (docs/testing.md).
 */
export function runDaemon(t: Teardown, options: BootOptions = {}, args: string[] = []): Promise<SpawnedDaemon> {
  return spawnDaemon(t, { extensions: 'default', ...options }, args);
}

/**
 * Starts `bin/agtd.mjs` as a child (no extensions unless `options.extensions`); resolves once it printed its listening
 * line (or exited).
 */
export async function spawnDaemon(t: Teardown, options: BootOptions = {}, args: string[] = []): Promise<SpawnedDaemon> {
  const { dataDir, env } = prepareEnv(t, options);
  // Passphrase files at the cheapest cost the daemon accepts: an unlock costs ~1 ms instead of ~0.3 s.
  env.AGT_KDF_COST ??= '10';
  if (options.uid !== undefined && env.AGT_EXTENSIONS) chownSync(dirname(env.AGT_EXTENSIONS), options.uid, options.uid);
  return startChild(t, dataDir, env, args, options.uid);
}

async function startedEvent(url: string, token: string, ms = 60_000): Promise<void> {
  const stream = await openSse(`${url}/events?since=0`, { authorization: `Bearer ${token}` });
  try {
    await new Promise<void>((done, fail) => {
      const timer = setTimeout(
        () => fail(new Error(`the daemon at ${url} did not say daemon.started within ${ms} ms`)),
        ms,
      );
      const seen = (message: SseMessage) => {
        if (message.event !== 'daemon.started') return;
        clearTimeout(timer);
        done();
      };
      stream.messages.forEach(seen);
      stream.onMessage(seen);
      void stream.ended.then(() =>
        fail(new Error(`the daemon at ${url} closed its event stream before daemon.started`)),
      );
    });
  } finally {
    stream.close();
  }
}

async function startChild(
  t: Teardown,
  dataDir: string,
  env: Record<string, string>,
  args: string[],
  uid?: number,
): Promise<SpawnedDaemon> {
  // As another user through setpriv, which execs node: signals reach the daemon.
  const node = [process.execPath, join(ROOT, 'bin/agtd.mjs'), ...args];
  const argv = uid === undefined ? node : ['setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', ...node];
  const child = spawn(argv[0]!, argv.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk) => (out += chunk));
  child.stderr!.on('data', (chunk) => (err += chunk));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const running = () => child.exitCode === null && child.signalCode === null;
  t.teardown(async () => {
    if (running()) {
      child.kill('SIGKILL');
      await exited;
    }
  });
  const url = await new Promise<string>((done) => {
    const check = () => {
      const match = /agt daemon listening on (http:\/\/\S+)/.exec(out);
      if (match) done(match[1]!);
    };
    child.stdout!.on('data', check);
    void exited.then(() => done(''));
  });
  // The black-box tier tests the build: a daemon that fell back to the sources would test something else.
  if (/running the TypeScript sources/.test(err))
    throw new Error(`agtd ran the sources, not dist/ (rebuild: npm test does): ${err.trim()}`);
  const token = url ? (env.AGT_DAEMON_TOKEN ?? readFileSync(join(dataDir, 'daemon-token'), 'utf8').trim()) : '';
  // The listening line comes before the extensions start (the daemon serves meanwhile); a test begins
  // once they have, as an in-process boot does: `daemon.started`, replayed from the stream's start.
  if (url) await startedEvent(url, token);
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (running()) child.kill(signal);
    return exited;
  };
  return {
    child,
    env,
    url,
    dataDir,
    token,
    request: httpClient(url, token),
    stdout: () => out,
    stderr: () => err,
    exited,
    stop,
    restart: async (more = {}) => {
      await stop();
      return startChild(t, dataDir, { ...env, ...more }, args, uid);
    },
  };
}

/**
 * Makes the daemon's runtime behave as `hooks` (what the registry calls at load, config change, unload
 * and start) until the returned function restores it; members set to undefined are taken away.
 */
export function replaceRuntimeHooks(
  daemon: RunningDaemon,
  hooks: Partial<Record<keyof AgentRuntimeHooks, unknown>>,
): () => void {
  const runtime = daemon.kernel.runtime as unknown as Record<string, unknown>;
  const names = Object.keys(hooks);
  Object.assign(runtime, hooks);
  return () => {
    for (const name of names) delete runtime[name];
  };
}
