/**
 * `startTestDaemon`: the real agt daemon, in this process, on 127.0.0.1 port 0, with a temporary data
 * folder and a manifest naming the given extension modules. It needs the agt package itself: the
 * checkout this package lives in (a workspace of agt), else `agt` installed beside `@agt/contracts`
 * (`npm install --save-dev agt`). The daemon is imported by path at run time, in the form of this file:
 * from the TypeScript sources when this runs as TypeScript (tsx), from agt's build (`dist/`) otherwise.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Settings } from '../settings.js';
import { httpClient, type TestRequest } from './http-client.js';

/**
 * One manifest entry: a module path (absolute, or relative to the working folder) or package name, or the full entry.
 *
 * @public
 */
export type TestDaemonExtension =
  | string
  | {
      module: string;
      /** Default: the `name` the module's definition gives (the module is imported once to read it). */
      name?: string;
      enabled?: boolean;
      config?: Record<string, unknown>;
    };

/** @public */
export interface TestDaemonOptions {
  extensions?: TestDaemonExtension[];
  /** The daemon's settings file (default none). */
  settings?: Settings;
  /** More environment variables for the daemon (and `ctx.env`); PATH and HOME are passed on. */
  env?: Record<string, string>;
  /** The daemon's log level (default `silent`). */
  logLevel?: string;
}

/** @public */
export interface TestDaemon {
  url: string;
  /** The bearer token every route but `/health` needs (`request` sends it). */
  token: string;
  dataDir: string;
  /** Real HTTP to `url` with the token. */
  request: TestRequest;
  /** Shuts the daemon down (the full shutdown: agents unloaded, extensions stopped) and removes its folders. */
  stop(): Promise<void>;
}

interface DaemonModule {
  startDaemon(options: {
    env?: NodeJS.ProcessEnv;
    print?: (line: string) => void;
    kdfCost?: { N: number; r: number; p: number };
  }): Promise<{ url: string; shutdown(reason: string): Promise<void> }>;
}

const ownUrl = import.meta.url;

/**
 * A module of the agt package by its path without extension (`kernel/daemon`): the checkout this package
 * is part of, else an installed `agt` (its build). Also used by `startTestExtension` for the kernel's
 * `ctx.serverGuards`.
 */
export function agtModuleUrl(path: string): string {
  const fromSources = ownUrl.endsWith('.ts');
  // <agt>/contracts/testing/test-daemon.ts, or <agt>/dist/contracts/testing/test-daemon.js in the build.
  const sibling = new URL(`../../${path}${fromSources ? '.ts' : '.js'}`, ownUrl);
  if (existsSync(fileURLToPath(sibling))) return sibling.href;
  for (const from of [`${process.cwd()}/`, fileURLToPath(ownUrl)]) {
    let manifest: string;
    try {
      manifest = createRequire(from).resolve('agt/package.json');
    } catch {
      continue;
    }
    const built = join(dirname(manifest), `dist/${path}.js`);
    if (existsSync(built)) return pathToFileURL(built).href;
  }
  throw new Error(
    'startTestDaemon needs the agt package: run it inside the agt checkout, or install agt beside @agt/contracts (npm install --save-dev agt)',
  );
}

/** The daemon module of the agt package: the one this package is part of, else an installed `agt`. */
const daemonModuleUrl = () => agtModuleUrl('kernel/daemon');

/**
 * A manifest `module` the daemon can resolve from a temporary folder: a path made absolute (relative
 * ones from the working folder); a package name resolved to its file from here (the node_modules
 * folders above this package), or else left for the daemon to look up.
 */
function absoluteModule(module: string): string {
  if (module.startsWith('file:')) return fileURLToPath(module);
  if (isAbsolute(module)) return module;
  if (module.startsWith('./') || module.startsWith('../')) return resolve(module);
  try {
    return fileURLToPath(import.meta.resolve(module));
  } catch {
    return module;
  }
}

async function entryOf(extension: TestDaemonExtension) {
  const given = typeof extension === 'string' ? { module: extension } : extension;
  const module = absoluteModule(given.module);
  let name = given.name;
  if (name === undefined) {
    let loaded: { default?: { name?: unknown } };
    try {
      loaded = (await import(isAbsolute(module) ? pathToFileURL(module).href : module)) as typeof loaded;
    } catch (error) {
      throw new Error(
        `startTestDaemon: cannot import ${given.module} to read its name (${(error as Error).message}); give the entry's name`,
        { cause: error },
      );
    }
    if (typeof loaded.default?.name !== 'string')
      throw new Error(`startTestDaemon: ${given.module} has no default export with a name; give the entry's name`);
    name = loaded.default.name;
  }
  return { name, module, enabled: given.enabled ?? true, config: given.config ?? {} };
}

/**
 * Boots the real daemon with `extensions`; stop it with `stop()` (in tap: `t.teardown(daemon.stop)`).
 *
 * @public
 */
export async function startTestDaemon(options: TestDaemonOptions = {}): Promise<TestDaemon> {
  const { startDaemon } = (await import(daemonModuleUrl())) as DaemonModule;
  const entries = await Promise.all((options.extensions ?? []).map(entryOf));
  const dataDir = mkdtempSync(join(tmpdir(), 'agt-test-daemon-'));
  const manifestDir = mkdtempSync(join(tmpdir(), 'agt-test-manifest-'));
  const removeFolders = () => {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(manifestDir, { recursive: true, force: true });
  };
  const manifest = join(manifestDir, 'extensions.json');
  writeFileSync(manifest, JSON.stringify({ extensions: entries }));
  if (options.settings) writeFileSync(join(dataDir, 'settings.json'), JSON.stringify(options.settings));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? dataDir,
    ...options.env,
    AGT_DAEMON_SETTINGS: join(dataDir, 'settings.json'),
    AGT_DAEMON_PORT: '0',
    AGT_LOG_LEVEL: options.logLevel ?? 'silent',
    AGT_EXTENSIONS: manifest,
  };
  let daemon: Awaited<ReturnType<DaemonModule['startDaemon']>>;
  try {
    // A cheap scrypt cost for passphrases: tests that create an identity stay fast.
    daemon = await startDaemon({ env, print: () => {}, kdfCost: { N: 1024, r: 8, p: 1 } });
  } catch (error) {
    removeFolders();
    throw error;
  }
  const token = env.AGT_DAEMON_TOKEN ?? readFileSync(join(dataDir, 'daemon-token'), 'utf8').trim();
  let stopping: Promise<void> | undefined;
  return {
    url: daemon.url,
    token,
    dataDir,
    request: httpClient(daemon.url, { authorization: `Bearer ${token}` }),
    stop: () => (stopping ??= daemon.shutdown('test done').finally(removeFolders)),
  };
}
