/**
 * The daemon as one CommonJS script, `dist/agtd.cjs`: the kernel and every extension module of the project,
 * what `agtd` runs (bin/daemon-bundle.mjs runs it with V8's code cache; docs/performance.md, "The build").
 * Built beside the ES modules of scripts/build.mjs, with the same plugins (the bundling rule for lazily
 * imported packages, `import.meta.url` as in a file-by-file build, the dependency edits), so a package is
 * bundled or left in node_modules the same way in both. Why one script: Node 20 keeps no compiled code
 * of ES modules between processes, and a script compiled through `vm.Script` can be given V8's code cache.
 *
 * - Each extension module of the project is registered with kernel/extensions/bundled.ts under the path of
 *   its file in dist/, and evaluated only when the loader asks for it (an extension the manifest leaves off
 *   is never evaluated).
 * - `import.meta.url` and `import.meta.resolve`, which a CommonJS script has not, are parameters the runner
 *   passes: the script's URL, and the runner's own `import.meta.resolve`.
 * - So is `import()`: every dynamic import in the script calls the runner's (`__agtImport`), which Node's
 *   loader resolves as from the script's own folder (bare packages from the project's node_modules,
 *   absolute URLs). Why: Node 20 loses a `vm.Script`'s dynamic import callback in code taken from V8's
 *   code cache ("A dynamic import callback was not specified"), and gives a script none without
 *   `--experimental-vm-modules`. The text `import(` is replaced after the build, except where it opens
 *   a template's placeholder (`import(${`: code written into a string for another process).
 * - A package left in node_modules is then imported lazily as from the ES modules; a static import of one
 *   becomes `require`, so such a package must load with `require` (checked here: the build fails on an
 *   ES-module-only one).
 */
import { build } from 'esbuild';
import { isAscii } from 'node:buffer';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire, isBuiltin } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';

/** The script, relative to the build folder. */
export const DAEMON_BUNDLE = 'agtd.cjs';
/** The parameters the runner passes the script, after CommonJS's own five (bin/daemon-bundle.mjs). */
export const BUNDLE_PARAMETERS = ['__agtScriptUrl', '__agtResolve', '__agtImport'];
/**
 * The script is written as one function expression of those parameters, which the runner compiles as it is:
 * wrapped at run time instead, its 4.5 MB text would be copied once more at every start, a string only a
 * full collection frees (12 MB more RSS at the first `/health` when it had not run yet).
 */
const WRAPPER = {
  // Strict, as the ES modules it is built from are (esbuild's CommonJS output does not say so itself).
  banner: `(function (exports, require, module, __filename, __dirname, ${BUNDLE_PARAMETERS.join(', ')}) {'use strict';`,
  footer: '})',
};
/** A dynamic `import(` in the script's text, not opening a template placeholder. */
const DYNAMIC_IMPORT = /(?<![\w$.])import\((?!\$\{)/g;

const posix = (path) => path.split(sep).join('/');

/**
 * Builds `DAEMON_BUNDLE` into `outDir`. `root` is the project, `main` the daemon command's source, `modules`
 * the extension modules of the project (absolute `.ts` paths), `options` esbuild's shared options.
 */
export async function buildDaemonBundle({ root, outDir, main, modules, options }) {
  const entry = [
    `import { registerBundledModules } from './kernel/extensions/bundled.ts';`,
    `import { fileUrl } from 'agt-build-root';`,
    `import { fileURLToPath } from 'node:url';`,
    'registerBundledModules({',
    ...modules.map((file) => {
      const source = `./${posix(relative(root, file))}`;
      const built = source.slice(2).replace(/\.ts$/, '.js');
      return `  [fileURLToPath(fileUrl(${JSON.stringify(built)}))]: () => import(${JSON.stringify(source)}),`;
    }),
    '});',
    `export { started } from ${JSON.stringify(`./${posix(main)}`)};`,
  ].join('\n');
  const { metafile } = await build({
    ...options,
    stdin: { contents: entry, resolveDir: root, sourcefile: 'agtd-bundle-entry.js', loader: 'js' },
    outfile: join(outDir, DAEMON_BUNDLE),
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    // Kept as `import()`: Node's loader then reads a lazily imported package as it does for the ES modules.
    supported: { 'dynamic-import': true },
    // Licence comments in a file of their own (agtd.cjs.LEGAL.txt): one non-ASCII letter in them made the
    // whole script a two-byte string, twice the memory and a slow UTF-8 decode at every start.
    legalComments: 'linked',
    define: { 'import.meta.url': BUNDLE_PARAMETERS[0], 'import.meta.resolve': BUNDLE_PARAMETERS[1] },
    banner: { js: WRAPPER.banner },
    footer: { js: WRAPPER.footer },
    metafile: true,
  });
  checkRequiredPackages(root, metafile);
  const script = join(outDir, DAEMON_BUNDLE);
  const text = readFileSync(script, 'utf8').replace(DYNAMIC_IMPORT, `${BUNDLE_PARAMETERS[2]}(`);
  // The runner reads the script as one-byte text (bin/daemon-bundle.mjs); esbuild escapes what is not ASCII
  // in code, and the licence comments, which it does not, are in a file of their own.
  if (!isAscii(Buffer.from(text))) throw new Error(`${DAEMON_BUNDLE}: the script is not ASCII`);
  writeFileSync(script, text);
  return metafile;
}

/** Whether `file` is an ES module to Node (`.mjs`, or `.js` under a package.json of `"type": "module"`). */
function isEsModule(file) {
  if (file.endsWith('.mjs')) return true;
  if (!file.endsWith('.js')) return false;
  for (let dir = dirname(file); dirname(dir) !== dir; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) return JSON.parse(readFileSync(manifest, 'utf8')).type === 'module';
  }
  return false;
}

/** Fails when the script `require`s a package that only an ES module import can load (Node 20 has no `require` of ES modules). */
function checkRequiredPackages(root, metafile) {
  const require = createRequire(join(root, 'package.json'));
  const required = new Set(
    Object.values(metafile.inputs)
      .flatMap((input) => input.imports)
      .filter((i) => i.external && (i.kind === 'import-statement' || i.kind === 'require-call'))
      .map((i) => i.path)
      .filter((path) => !isBuiltin(path) && !/^(\.|\/|node:)/.test(path)),
  );
  const refused = [];
  for (const specifier of required) {
    try {
      if (isEsModule(require.resolve(specifier))) refused.push(specifier);
    } catch (error) {
      refused.push(`${specifier} (${error?.code ?? error})`);
    }
  }
  if (refused.length > 0)
    throw new Error(
      `${DAEMON_BUNDLE}: the script would require packages that load only as ES modules: ${refused.join(', ')}`,
    );
}
