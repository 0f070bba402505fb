/**
 * Turns a manifest's `module` into a file to import: a path relative to the manifest's folder, an
 * absolute path (or `file:` URL), or an npm package name looked up in `node_modules` folders from the
 * manifest's folder upwards (so a third-party extension installed next to the manifest is found).
 *
 * Package lookup is done here rather than with `createRequire().resolve` because that applies the
 * CommonJS conditions and refuses ESM-only packages (`exports: {import: ...}`), and `import.meta.resolve`
 * with a parent URL needs a flag on Node 20; the `exports` map itself is read by `resolve.exports`.
 */
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, extname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { exports as resolveExports } from 'resolve.exports';

/** Source twins: the manifest names `index.js` while the shipped files are TypeScript (run by tsx). */
const TS_TWINS: Record<string, string> = { '.js': '.ts', '.mjs': '.mts', '.cjs': '.cts' };

export class ModuleResolveError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ModuleResolveError';
  }
}

const isFile = (path: string) => existsSync(path) && statSync(path).isFile();
const isDir = (path: string) => existsSync(path) && statSync(path).isDirectory();

/** Whether `specifier` is a path (as opposed to a package name). */
export function isPathSpecifier(specifier: string): boolean {
  return (
    specifier.startsWith('file:') ||
    specifier === '.' ||
    specifier === '..' ||
    specifier.startsWith('./') ||
    specifier.startsWith('../') ||
    isAbsolute(specifier)
  );
}

/** A file, a TypeScript twin of a `.js` name, an extensionless name, or a folder (package or index). */
function resolvePath(path: string, shown: string): string {
  if (isFile(path)) return realpathSync(path);
  if (isDir(path)) {
    if (isFile(join(path, 'package.json'))) return resolvePackageEntry(path, '.', shown);
    for (const index of ['index.ts', 'index.js', 'index.mjs'])
      if (isFile(join(path, index))) return realpathSync(join(path, index));
    throw new ModuleResolveError(
      `cannot resolve module "${shown}": folder ${path} has no package.json and no index.ts or index.js`,
    );
  }
  const twin = TS_TWINS[extname(path)];
  if (twin && isFile(path.slice(0, -extname(path).length) + twin))
    return realpathSync(path.slice(0, -extname(path).length) + twin);
  if (extname(path) === '') {
    for (const ext of ['.ts', '.js', '.mjs']) if (isFile(path + ext)) return realpathSync(path + ext);
  }
  throw new ModuleResolveError(`cannot resolve module "${shown}": ${path} does not exist`);
}

/**
 * The file an `exports` map gives for `subpath` (`.` or `./sub/path`), by Node's rules (conditions,
 * subpath patterns, sugar forms): the `import` conditions first, then the `require` ones (a CommonJS
 * package can still default-export a definition). Null when the package does not export it.
 */
function exportTarget(manifest: Record<string, unknown>, subpath: string): string | null {
  for (const options of [{}, { require: true }]) {
    try {
      const found = resolveExports(manifest, subpath, options);
      if (found && found.length > 0) return found[0]!;
    } catch {
      // Not exported under these conditions; the next set may have it.
    }
  }
  return null;
}

function resolvePackageEntry(packageDir: string, subpath: string, shown: string): string {
  let manifest: { main?: unknown; exports?: unknown } & Record<string, unknown>;
  try {
    manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
  } catch (error) {
    throw new ModuleResolveError(
      `cannot resolve module "${shown}": cannot read ${join(packageDir, 'package.json')}: ${(error as Error).message}`,
    );
  }
  if (manifest.exports !== undefined && manifest.exports !== null) {
    const target = exportTarget(manifest, subpath);
    if (target === null)
      throw new ModuleResolveError(
        `cannot resolve module "${shown}": package ${packageDir} does not export "${subpath}"`,
      );
    return resolvePath(resolve(packageDir, target), shown);
  }
  if (subpath !== '.') return resolvePath(resolve(packageDir, subpath), shown);
  const main = typeof manifest.main === 'string' && manifest.main !== '' ? manifest.main : 'index.js';
  return resolvePath(resolve(packageDir, main), shown);
}

/** Splits `@scope/name/sub/path` into the package name and the `./sub/path` subpath. */
function splitPackageSpecifier(specifier: string): { name: string; subpath: string } | null {
  const parts = specifier.split('/');
  const count = specifier.startsWith('@') ? 2 : 1;
  if (parts.length < count || parts.slice(0, count).some((p) => p === '')) return null;
  const rest = parts.slice(count).join('/');
  return { name: parts.slice(0, count).join('/'), subpath: rest === '' ? '.' : `./${rest}` };
}

/**
 * The absolute file that `specifier` names, seen from the manifest at `manifestPath`.
 * Throws {@link ModuleResolveError} with a message naming what was looked for and where.
 */
export function resolveExtensionModule(specifier: string, manifestPath: string): string {
  const base = dirname(resolve(manifestPath));
  if (isPathSpecifier(specifier)) {
    const path = specifier.startsWith('file:') ? fileURLToPath(specifier) : resolve(base, specifier);
    return resolvePath(path, specifier);
  }
  const parsed = splitPackageSpecifier(specifier);
  if (!parsed)
    throw new ModuleResolveError(`cannot resolve module "${specifier}": not a path and not a valid package name`);
  for (let dir = base; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', parsed.name);
    if (isFile(join(candidate, 'package.json'))) return resolvePackageEntry(candidate, parsed.subpath, specifier);
    if (dirname(dir) === dir) break;
  }
  throw new ModuleResolveError(
    `cannot resolve module "${specifier}": package not found in any node_modules folder from ${base} upwards`,
  );
}
