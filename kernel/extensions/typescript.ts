/**
 * Extension modules written in TypeScript when the daemon runs built (`dist/`, see scripts/build.mjs).
 *
 * - A module of the project's own sources (the shipped `./extensions/providers/index.ts`) has a built
 *   twin in `dist/`: that one is imported, so the shipped manifest works from the sources (tests, tsx) and
 *   from the build alike, and no transpiler is loaded.
 * - Any other `.ts` module (a third-party extension shipped as TypeScript) loads tsx first, once. Its
 *   imports of the project's sources (`contracts/index.js`) are then redirected to their built twins, so
 *   the extension and the kernel share one copy of each class (`AgtError`).
 *
 * Running from the sources (tests, `node --import tsx`), no build marker is found above this module and
 * all of this is a no-op: a TypeScript loader is already there.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const BUILD_INFO = '.agt-build.json';
const TS_EXTENSION = /\.(m|c)?ts$/;
const JS_FOR: Record<string, string> = { '.ts': '.js', '.mts': '.mjs', '.cts': '.cjs' };

export interface BuildLayout {
  /** The build folder (`dist/`). */
  buildRoot: string;
  /** The project folder the build was made from. */
  sourceRoot: string;
  /** Source folders (relative to `sourceRoot`) mirrored in the build. */
  sources: string[];
}

let layout: BuildLayout | null | undefined;

/** The build this module runs from, or `null` when it runs from the sources. */
export function buildLayout(): BuildLayout | null {
  if (layout !== undefined) return layout;
  layout = null;
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const marker = join(dir, BUILD_INFO);
    if (existsSync(marker)) {
      try {
        const info = JSON.parse(readFileSync(marker, 'utf8')) as { sourceRoot?: string; sources?: string[] };
        layout = { buildRoot: dir, sourceRoot: resolve(dir, info.sourceRoot ?? '..'), sources: info.sources ?? [] };
      } catch {
        // An unreadable marker: behave as from the sources.
      }
      break;
    }
    if (dirname(dir) === dir) break;
  }
  return layout;
}

/** Whether `file` is a TypeScript module (`.ts`, `.mts`, `.cts`). */
export const isTypeScriptFile = (file: string) => TS_EXTENSION.test(file) && !file.endsWith('.d.ts');

/**
 * The built twin of a project source file (`<root>/extensions/x/index.ts` → `<root>/dist/extensions/x/index.js`)
 * when running built and the build has one; otherwise `file` itself.
 */
export function builtTwin(file: string, build: BuildLayout | null = buildLayout()): string {
  if (!build || !isTypeScriptFile(file)) return file;
  const inside = relative(build.sourceRoot, file);
  if (inside.startsWith('..') || inside.split(sep).includes('node_modules')) return file;
  if (!build.sources.includes(inside.split(sep)[0]!)) return file;
  const ext = TS_EXTENSION.exec(file)![0];
  const twin = join(build.buildRoot, inside.slice(0, -ext.length) + JS_FOR[ext]);
  return existsSync(twin) ? twin : file;
}

/**
 * Resolve hook (runs in the loader thread, after tsx's): a project source file with a built twin is
 * loaded from the build. Plain JavaScript, handed over as a `data:` URL.
 */
const REDIRECT_HOOK = `
import { existsSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
let build;
export function initialize(data) { build = data; }
const JS_FOR = { '.ts': '.js', '.mts': '.mjs', '.cts': '.cjs', '.js': '.js', '.mjs': '.mjs' };
export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  if (!build || !resolved.url.startsWith('file:')) return resolved;
  const file = fileURLToPath(resolved.url);
  const inside = relative(build.sourceRoot, file);
  if (inside.startsWith('..') || inside.split(sep).includes('node_modules') || !build.sources.includes(inside.split(sep)[0])) return resolved;
  const ext = /\\.(m|c)?(t|j)s$/.exec(file)?.[0];
  if (!ext) return resolved;
  const twin = join(build.buildRoot, inside.slice(0, -ext.length) + JS_FOR[ext]);
  return existsSync(twin) ? { url: pathToFileURL(twin).href, format: 'module', shortCircuit: true } : resolved;
}
`;

let typescript: Promise<void> | undefined;

/**
 * Makes `.ts` modules importable: loads tsx (and the redirect to the build) the first time a built daemon
 * meets one; a no-op from the sources.
 */
export function ensureTypeScript(): Promise<void> {
  const build = buildLayout();
  if (!build) return Promise.resolve();
  typescript ??= (async () => {
    const { register } = await import('tsx/esm/api');
    register();
    // Registered after tsx, so it runs first and post-processes what tsx resolved.
    const { register: registerHooks } = await import('node:module');
    registerHooks(`data:text/javascript,${encodeURIComponent(REDIRECT_HOOK)}`, { data: build });
  })();
  return typescript;
}
