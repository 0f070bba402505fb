/**
 * Module hooks of the test build's processes (registered by scripts/test-register.mjs through tap's
 * `--import`): the suite runs JavaScript from `.test-build/`, and these keep a `.ts` file named by path
 * working there without tsx in every process.
 *
 * - resolve: a project source file (`<root>/test/fixtures/x/index.ts`, `<root>/contracts/errors.ts`) is
 *   its built twin in the tree, so a test importing a source path shares the tree's module (one
 *   `AgtError`); a `.ts` copy inside the tree is its `.js` beside it. A `./y.js` import from a `.ts`
 *   file outside both (a test's temp copy) that does not exist is tried as `./y.ts`.
 * - load: any other `.ts` file is transpiled with esbuild (types dropped, as tsx does), loaded lazily.
 */
import { existsSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

let build;
export function initialize(data) {
  build = data;
}

const TS = /\.(m|c)?ts$/;
const JS_FOR = { '.ts': '.js', '.mts': '.mjs', '.cts': '.cjs' };

function twinOf(file) {
  const ext = TS.exec(file)?.[0];
  if (!ext || file.endsWith('.d.ts')) return undefined;
  const inTree = relative(build.buildRoot, file);
  if (!inTree.startsWith('..')) {
    const sibling = file.slice(0, -ext.length) + JS_FOR[ext];
    return existsSync(sibling) ? sibling : undefined;
  }
  const inside = relative(build.sourceRoot, file);
  if (
    inside.startsWith('..') ||
    inside.split(sep).includes('node_modules') ||
    !build.sources.includes(inside.split(sep)[0])
  )
    return undefined;
  const twin = join(build.buildRoot, inside.slice(0, -ext.length) + JS_FOR[ext]);
  return existsSync(twin) ? twin : undefined;
}

export async function resolve(specifier, context, nextResolve) {
  let resolved;
  try {
    resolved = await nextResolve(specifier, context);
  } catch (error) {
    if (
      error?.code !== 'ERR_MODULE_NOT_FOUND' ||
      !context.parentURL ||
      !TS.test(context.parentURL) ||
      !/\.(m|c)?js$/.test(specifier)
    )
      throw error;
    resolved = await nextResolve(specifier.replace(/js$/, 'ts'), context);
  }
  if (!resolved.url.startsWith('file:')) return resolved;
  const twin = twinOf(fileURLToPath(resolved.url));
  return twin ? { url: pathToFileURL(twin).href, format: 'module', shortCircuit: true } : resolved;
}

let esbuild;
export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !TS.test(url) || url.endsWith('.d.ts')) return nextLoad(url, context);
  esbuild ??= await import('esbuild');
  const { readFile } = await import('node:fs/promises');
  const file = fileURLToPath(url);
  const { code } = await esbuild.transform(await readFile(file, 'utf8'), {
    loader: 'ts',
    format: url.endsWith('.cts') ? 'cjs' : 'esm',
    target: 'node20',
    supported: { 'import-attributes': true },
    sourcemap: 'inline',
    sourcefile: file,
  });
  return { format: url.endsWith('.cts') ? 'commonjs' : 'module', source: code, shortCircuit: true };
}
