/**
 * npm MCP server packages in the data directory's `mcp-servers/`: installed once through
 * `POST /mcp/packages`, then run with node from there (no download when an agent starts). npm runs as a
 * child with the owner's npm settings and nothing of an agent's (`npm-env.ts`), `--ignore-scripts` (an
 * install runs no package code), one operation at a time, with a time limit. Its output is logged as one
 * summary line (npm's own `added N packages` line), each output line only at debug level.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import type { ExtensionEnv } from '@agt/contracts';
import type { Logger } from '@agt/contracts';
import { installBusy, installFailed, packageMissing } from './errors.js';
import { globalNpmrc, npmChildEnv } from './npm-env.js';

/** An npm package name (scoped or not): never a path. */
const PACKAGE_NAME = /^(@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;

export interface InstalledPackage {
  name: string;
  version: string | null;
  /** The script a `npm` registration runs, relative to the package folder. */
  bin: string | null;
}

function readJson(path: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** The package's bin entry: the only one, or the one named like the package. */
function binOf(pkg: Record<string, unknown>, name: string): string | null {
  const bin = pkg.bin;
  if (typeof bin === 'string') return bin;
  if (bin && typeof bin === 'object') {
    const entries = Object.entries(bin as Record<string, unknown>).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string',
    );
    const short = name.split('/').pop();
    return (entries.find(([key]) => key === short) ?? entries[0])?.[1] ?? null;
  }
  return null;
}

export function packageInfo(dir: string, name: string): InstalledPackage | undefined {
  if (!PACKAGE_NAME.test(name)) return undefined;
  const pkg = readJson(join(dir, 'node_modules', name, 'package.json'));
  if (!pkg) return undefined;
  return { name, version: typeof pkg.version === 'string' ? pkg.version : null, bin: binOf(pkg, name) };
}

/** Absolute path of the installed package's bin script, kept inside the package folder; undefined when none. */
export function installedBin(dir: string, name: string): string | undefined {
  const info = packageInfo(dir, name);
  if (!info?.bin) return undefined;
  const root = join(dir, 'node_modules', name);
  const script = resolve(root, info.bin);
  try {
    const real = realpathSync(script);
    const realRoot = realpathSync(root);
    if (!real.startsWith(realRoot + sep)) return undefined;
    return real;
  } catch {
    return undefined;
  }
}

/** One install or removal, as `GET /mcp/packages` shows it. */
export interface PackageOperation {
  spec: string;
  action: 'install' | 'uninstall';
  status: 'running' | 'done' | 'failed';
  error?: string;
  startedAt: number;
  finishedAt?: number;
}

const RECENT_OPERATIONS = 10;

export class McpPackages {
  private busy = false;
  private readonly operations: PackageOperation[] = [];
  private readonly children = new Set<ReturnType<typeof spawn>>();
  /** The owner's global npmrc, asked from npm once. */
  private globalConfig: Promise<string | undefined> | undefined;

  constructor(
    readonly dir: string,
    private readonly env: ExtensionEnv,
    private readonly logger: Logger,
    private readonly timeoutMs: number,
  ) {}

  /** The packages `npm install` put at the top of `mcp-servers/`. */
  list(): InstalledPackage[] {
    const manifest = readJson(join(this.dir, 'package.json'));
    const deps = Object.keys((manifest?.dependencies as Record<string, string> | undefined) ?? {}).sort();
    return deps.map((name) => packageInfo(this.dir, name) ?? { name, version: null, bin: null });
  }

  /** The latest installs and removals, newest first. */
  recent(): PackageOperation[] {
    return [...this.operations].reverse();
  }

  /** Installs `spec` (a name, `name@range`, or a local tarball or folder); answers what was added. */
  async install(spec: string): Promise<InstalledPackage> {
    const before = new Set(this.list().map((p) => p.name));
    await this.npm(['install', spec], spec);
    const after = this.list();
    const added =
      after.find((p) => !before.has(p.name)) ?? after.find((p) => spec === p.name || spec.startsWith(`${p.name}@`));
    if (!added) throw installFailed(spec, 'npm finished but no package was added to mcp-servers/');
    return added;
  }

  async remove(name: string): Promise<void> {
    if (!PACKAGE_NAME.test(name) || !this.list().some((p) => p.name === name)) throw packageMissing(name);
    await this.npm(['uninstall', name], name);
  }

  /** Kills a running npm (extension stop). */
  stop(): void {
    for (const child of this.children) killGroup(child.pid);
  }

  private async npm(args: string[], spec: string): Promise<void> {
    if (this.busy) throw installBusy();
    this.busy = true;
    const operation: PackageOperation = {
      spec,
      action: args[0] === 'install' ? 'install' : 'uninstall',
      status: 'running',
      startedAt: Date.now(),
    };
    this.operations.push(operation);
    if (this.operations.length > RECENT_OPERATIONS) this.operations.shift();
    try {
      await this.run(args, spec);
      operation.status = 'done';
    } catch (error) {
      operation.status = 'failed';
      operation.error = (error as Error).message;
      throw error;
    } finally {
      operation.finishedAt = Date.now();
      this.busy = false;
    }
  }

  private async run(args: string[], spec: string): Promise<void> {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const manifest = join(this.dir, 'package.json');
    if (!existsSync(manifest))
      writeFileSync(
        manifest,
        JSON.stringify(
          { name: 'agt-mcp-servers', private: true, description: 'MCP servers installed by agt (POST /mcp/packages)' },
          null,
          2,
        ),
      );
    const env = npmChildEnv(this.env, this.env.names?.() ?? []);
    // `--prefix` would move the global npmrc under mcp-servers/: name the owner's (its cafile, proxy, registry).
    this.globalConfig ??= globalNpmrc(env, this.dir);
    const globalConfig = await this.globalConfig;
    const full = [
      ...args,
      '--prefix',
      this.dir,
      '--global=false',
      '--ignore-scripts',
      '--no-audit',
      '--no-fund',
      '--no-update-notifier',
      '--loglevel=http',
      ...(globalConfig ? ['--globalconfig', globalConfig] : []),
    ];
    this.logger.info({ spec, command: `npm ${args[0]}` }, `mcp: npm ${args[0]} ${spec} started`);
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn('npm', full, { cwd: this.dir, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    } catch (error) {
      throw installFailed(spec, (error as Error).message);
    }
    this.children.add(child);
    const tail: string[] = [];
    let lines = 0;
    let summary: string | undefined;
    const onLine = (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n')) {
        const text = line.trim().slice(0, 300);
        if (!text) continue;
        lines++;
        tail.push(text);
        if (tail.length > 8) tail.shift();
        // npm's closing line ("added 91 packages in 3s", "removed 1 package", "up to date").
        if (/^(added|removed|changed|up to date)\b/.test(text)) summary = text;
        this.logger.debug({ spec }, `mcp: npm: ${text}`);
      }
    };
    child.stdout!.on('data', onLine);
    child.stderr!.on('data', onLine);
    const code = await new Promise<number | string>((done) => {
      const timer = setTimeout(() => {
        killGroup(child.pid);
        done('timeout');
      }, this.timeoutMs);
      child.once('error', (error) => {
        clearTimeout(timer);
        done(error.message);
      });
      child.once('close', (status) => {
        clearTimeout(timer);
        done(status ?? -1);
      });
    });
    this.children.delete(child);
    if (code !== 0) {
      const why =
        code === 'timeout'
          ? `npm took longer than ${this.timeoutMs} ms`
          : typeof code === 'string'
            ? code
            : `npm exited with code ${code}: ${
                tail
                  .filter((l) => /err/i.test(l))
                  .slice(-3)
                  .join(' | ') || tail.slice(-2).join(' | ')
              }`;
      this.logger.warn({ spec }, `mcp: npm ${args[0]} ${spec} failed: ${why}`);
      throw installFailed(spec, why);
    }
    this.logger.info({ spec, npmLines: lines }, `mcp: npm ${args[0]} ${spec} done${summary ? `: ${summary}` : ''}`);
  }
}

/** npm runs in its own process group: this ends it and whatever it started. */
function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Gone already.
  }
}
