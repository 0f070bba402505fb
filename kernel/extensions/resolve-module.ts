/**
 * Turns a manifest's `module` into a file to import: a path relative to the manifest's folder, an
 * absolute path (or `file:` URL), or an npm package name looked up in `node_modules` folders from the
 * manifest's folder upwards (so a third-party extension installed next to the manifest is found).
 *
 * Package resolution is done here rather than with `createRequire().resolve` because that applies the
 * CommonJS conditions and refuses ESM-only packages (`exports: {import: ...}`), and `import.meta.resolve`
 * with a parent URL needs a flag on Node 20.
 */
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, extname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Export conditions, in Node's order of preference for an `import`. */
const IMPORT_CONDITIONS = new Set(['import', 'node', 'default']);
const REQUIRE_CONDITIONS = new Set(['require', 'node', 'default']);
/** Source twins: the D3 manifest names `index.js` while the shipped files are TypeScript (run by tsx). */
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
  return specifier.startsWith('file:') || specifier === '.' || specifier === '..' || specifier.startsWith('./') ||
    specifier.startsWith('../') || isAbsolute(specifier);
}

/** A file, a TypeScript twin of a `.js` name, an extensionless name, or a folder (package or index). */
function resolvePath(path: string, shown: string): string {
  if (isFile(path)) return realpathSync(path);
  if (isDir(path)) {
    if (isFile(join(path, 'package.json'))) return resolvePackageEntry(path, '.', shown);
    for (const index of ['index.ts', 'index.js', 'index.mjs']) if (isFile(join(path, index))) return realpathSync(join(path, index));
    throw new ModuleResolveError(`cannot resolve module "${shown}": folder ${path} has no package.json and no index.ts or index.js`);
  }
  const twin = TS_TWINS[extname(path)];
  if (twin && isFile(path.slice(0, -extname(path).length) + twin)) return realpathSync(path.slice(0, -extname(path).length) + twin);
  if (extname(path) === '') {
    for (const ext of ['.ts', '.js', '.mjs']) if (isFile(path + ext)) return realpathSync(path + ext);
  }
  throw new ModuleResolveError(`cannot resolve module "${shown}": ${path} does not exist`);
}

/** Picks a target from an `exports` value (string, array or conditions object). */
function pickTarget(value: unknown, conditions: Set<string>): string | null {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    for (const item of value) {
      const target = pickTarget(item, conditions);
      if (target !== null) return target;
    }
    return null;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (!conditions.has(key)) continue;
      const target = pickTarget(inner, conditions);
      if (target !== null) return target;
    }
  }
  return null;
}

function resolvePackageEntry(packageDir: string, subpath: string, shown: string): string {
  let manifest: { main?: unknown; exports?: unknown };
  try {
    manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
  } catch (error) {
    throw new ModuleResolveError(`cannot resolve module "${shown}": cannot read ${join(packageDir, 'package.json')}: ${(error as Error).message}`);
  }
  if (manifest.exports !== undefined && manifest.exports !== null) {
    const exportsField = manifest.exports;
    const keyed = typeof exportsField === 'object' && !Array.isArray(exportsField) && Object.keys(exportsField).some((k) => k.startsWith('.'));
    const entry = keyed ? (exportsField as Record<string, unknown>)[subpath] : subpath === '.' ? exportsField : undefined;
    const target = pickTarget(entry, IMPORT_CONDITIONS) ?? pickTarget(entry, REQUIRE_CONDITIONS);
    if (target === null) throw new ModuleResolveError(`cannot resolve module "${shown}": package ${packageDir} does not export "${subpath}"`);
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
  if (!parsed) throw new ModuleResolveError(`cannot resolve module "${specifier}": not a path and not a valid package name`);
  for (let dir = base; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', parsed.name);
    if (isFile(join(candidate, 'package.json'))) return resolvePackageEntry(candidate, parsed.subpath, specifier);
    if (dirname(dir) === dir) break;
  }
  throw new ModuleResolveError(`cannot resolve module "${specifier}": package not found in any node_modules folder from ${base} upwards`);
}
