#!/usr/bin/env node
/**
 * `npm run build` (also `prepare`, so `npm install` and `npm ci` build once): bundles the daemon with
 * esbuild into `dist/`, so production starts without a transpiler and loads a few files instead of the
 * ~1,100 of its dependencies (an ESM import of typebox alone reads ~700).
 *
 * - Entry points: the daemon command and module, every `contracts/` file (what an extension written in
 *   TypeScript imports from the sources: see kernel/extensions/typescript.ts), the `index.ts` of every
 *   folder in `extensions/` and each module the shipped `extensions.json` names inside the project. Each
 *   lands at its source path (`kernel/main.ts` → `dist/kernel/main.js`), so an extension module stays a
 *   module of its own; code-splitting puts what they share in `dist/chunks/`, so there is one copy of
 *   each class (an `AgtError` thrown by an extension is the kernel's `AgtError`) and a dynamic
 *   `import()` (a vendor SDK) becomes a chunk read only when first needed.
 * - Native and binary packages (libsql, esbuild) and pino (its transports start worker files by path)
 *   stay in node_modules.
 * - `import.meta.url` in a source file is rewritten to the URL its file would have in a file-by-file
 *   build (`dist/kernel/runtime/sandbox/lambda-runner.js`), and every file that is not TypeScript in the
 *   source folders (worker scripts, JSON) is copied to the same relative path: `new URL('./x.mjs',
 *   import.meta.url)` works in the bundle as in the sources.
 *
 * - `@agt/contracts` (the workspace package in `contracts/`) is resolved with its `agt-source` condition,
 *   so the kernel's `@agt/contracts` and every shipped extension's are the same `contracts/*.ts` files:
 *   one module in the bundle. The package's `default` condition points at
 *   `contracts/dist/`, a link this build makes to `dist/contracts/` (the contracts entry points): a
 *   JavaScript extension importing `@agt/contracts` in a built daemon gets those, which share the
 *   kernel's chunks.
 *
 * The source folders are walked, not listed file by file. The build goes to a temporary folder that
 * replaces `dist/` in one rename, so a daemon starting meanwhile sees the old build or the new one.
 * `dist/.agt-build.json` records when and from which folders it was built: `bin/agtd.mjs` runs the
 * sources through tsx instead when a source file is newer.
 *
 * - The console's web UI (extensions/console/ui/) is bundled for the browser by scripts/build-console.mjs
 *   into `dist/console/`, where the console extension serves it.
 *
 * Usage: node scripts/build.mjs [--quiet] [--out=FOLDER --without=lazy-rule,fastify-404-edit,daemon-bundle]
 */
import { build } from 'esbuild';
import { buildConsole } from './build-console.mjs';
import { buildDaemonBundle, DAEMON_BUNDLE } from './daemon-bundle.mjs';
import { FASTIFY_404_EDIT } from './fastify-404-edit.mjs';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { isBuiltin } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** Source folders, relative to the project root. */
export const SOURCE_DIRS = ['kernel', 'contracts', 'extensions'];
/**
 * The `agt` client (bin/agt.mjs runs dist/cli/index.js; its own folder, compared on its own by bin/agt.mjs)
 * and its `main`, which the tests run in their own process (test/helpers/cli-in-process.ts): the same chunks.
 */
const CLI = ['cli/index.ts', 'cli/main.ts'];
/** The daemon command and the daemon module (the benchmark starts the latter in a process of its own). */
const MAIN = 'kernel/main.ts';
const DAEMON = 'kernel/daemon.ts';
/** `ctx.serverGuards`, which `startTestExtension` (contracts/testing) imports from agt at run time. */
const SERVER_GUARDS = 'kernel/http/server-guards.ts';
/** Worker threads and child processes written in TypeScript (started by `new URL('./x.js', import.meta.url)`): entries of their own. */
const WORKERS = ['kernel/credentials/file-reader-child.ts', 'kernel/spend/token-count-worker.ts'];
export const OUT_DIR = 'dist';
export const BUILD_INFO = '.agt-build.json';
/**
 * Kept out of the bundle by name: native addons (dockerode's ssh2 and cpu-features among them), a binary,
 * and what starts files by path (pino's workers, tsx's loader). Every lazily imported package is kept out
 * too, by a rule rather than a list: see `lazyPackagesPlugin`.
 */
export const EXTERNAL = [
  'libsql',
  '@libsql/*',
  'esbuild',
  'pino',
  'quickjs-emscripten',
  '@jitl/*',
  'tsx',
  'tsx/*',
  'dockerode',
];
/** esbuild's metafile of the last build, in dist/: test/build-lazy-imports.test.ts reads the lazy imports off it. */
export const METAFILE = '.agt-metafile.json';

/** The condition of `contracts/package.json` that names the TypeScript sources (tsx and tap pass it too). */
export const SOURCE_CONDITION = 'agt-source';

const isTypeScript = (name) => name.endsWith('.ts') && !name.endsWith('.d.ts');
const posix = (path) => path.split(sep).join('/');

function walk(dir, found = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path, found);
    else if (entry.isFile()) found.push(path);
  }
  return found;
}

/** Modules the shipped manifest names by a path inside the source folders. */
function manifestModules() {
  const file = join(ROOT, 'extensions.json');
  if (!existsSync(file)) return [];
  const { extensions = [] } = JSON.parse(readFileSync(file, 'utf8'));
  return extensions
    .map((entry) => entry?.module)
    .filter((module) => typeof module === 'string' && (module.startsWith('./') || module.startsWith('../')))
    .map((module) => resolve(ROOT, module))
    .map((path) => (existsSync(path) ? path : path.replace(/\.js$/, '.ts')))
    .filter(
      (path) =>
        isTypeScript(path) &&
        existsSync(path) &&
        SOURCE_DIRS.some((dir) => !relative(join(ROOT, dir), path).startsWith('..')),
    );
}

/** Rewrites `import.meta.url` to the URL the file would have in a file-by-file build. */
const fileUrlPlugin = {
  name: 'agt-file-url',
  setup(build) {
    const helper = 'agt-build-root';
    build.onResolve({ filter: new RegExp(`^${helper}$`) }, () => ({ path: helper, namespace: helper }));
    build.onLoad({ filter: /.*/, namespace: helper }, () => ({
      loader: 'js',
      resolveDir: ROOT,
      // This module's own import.meta.url is that of the chunk it ends up in: the build's root is the
      // nearest folder above holding the build marker.
      contents: `
        import { existsSync } from 'node:fs';
        import { dirname, join } from 'node:path';
        import { fileURLToPath, pathToFileURL } from 'node:url';
        let root;
        export function fileUrl(relativePath) {
          if (root === undefined) {
            let dir = dirname(fileURLToPath(import.meta.url));
            while (!existsSync(join(dir, ${JSON.stringify(BUILD_INFO)}))) {
              const up = dirname(dir);
              if (up === dir) throw new Error('agt: ${BUILD_INFO} not found above ' + fileURLToPath(import.meta.url));
              dir = up;
            }
            root = pathToFileURL(dir + '/');
          }
          return new URL(relativePath, root).href;
        }`,
    }));
    build.onLoad({ filter: /\.ts$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      if (!source.includes('import.meta.url')) return undefined;
      const built = posix(relative(ROOT, args.path)).replace(/\.ts$/, '.js');
      return {
        loader: 'ts',
        contents:
          `import { fileUrl as __agtFileUrl } from '${helper}';\n` +
          source.replace(/\bimport\.meta\.url\b/g, `__agtFileUrl(${JSON.stringify(built)})`),
      };
    });
  },
};

/** Edits of a dependency's code in the bundle, each a performance trick in a file of its own saying what it buys. */
const DEPENDENCY_EDITS = [FASTIFY_404_EDIT];
const dependencyEditsPlugin = (without) => ({
  name: 'agt-dependency-edits',
  setup(build) {
    for (const { file, edits } of DEPENDENCY_EDITS.filter((edit) => !without.includes(edit.name))) {
      build.onLoad({ filter: file }, (args) => {
        let source = readFileSync(args.path, 'utf8');
        for (const [passage, replacement] of edits) {
          if (source.split(passage).length !== 2)
            throw new Error(
              `${args.path}: a passage scripts/build.mjs edits is not there as written (DEPENDENCY_EDITS)`,
            );
          source = source.replace(passage, () => replacement);
        }
        return { loader: 'js', contents: source };
      });
    }
  },
});

/**
 * The bundling rule for third-party packages: what the daemon imports only statically is bundled (a start
 * reads a few files instead of the ~1,100 of its dependencies); a package it imports lazily anywhere
 * (`await import('pkg')`: vendor SDKs, exporters, mail and chat clients, read when a feature is first used)
 * stays in node_modules with all its imports, static ones included, and is loaded by Node's own loader exactly
 * as from the sources. Why: most such packages are CommonJS, and esbuild splits a lazily imported CommonJS
 * module into a chunk whose only export is `default`, so the named exports the code uses (`prom.Registry`,
 * `OTLPTraceExporter`, grammy's `Bot`) came out undefined in dist/ while the sources worked. All of a
 * package's imports go the same way so that it exists once (the A2A server's error classes must be the
 * ones the handler throws). Keeping them external costs nothing at start: docs/performance.md, "Bundling".
 * test/build-lazy-imports.test.ts loads each lazy import the way dist/ does and checks the names used.
 */
const isPackageSpecifier = (specifier) => !/^(\.|\/|node:|data:|file:)/.test(specifier) && !isBuiltin(specifier);
/** `@scope/name/sub` → `@scope/name`; `name/sub` → `name`. */
export const packageName = (specifier) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');
/** The workspace's own package: always bundled, one copy shared by the kernel and the extensions. */
const WORKSPACE_PACKAGE = '@agt/contracts';

/** The packages the sources import lazily, read off a build of the project's own files only (~0.2 s). */
async function lazilyImportedPackages(entryPoints) {
  const { metafile } = await build({
    entryPoints,
    bundle: true,
    write: false,
    splitting: true,
    format: 'esm',
    platform: 'node',
    outdir: ROOT,
    packages: 'external',
    conditions: [SOURCE_CONDITION],
    metafile: true,
    logLevel: 'silent',
  });
  return new Set(
    Object.values(metafile.inputs)
      .flatMap((input) => input.imports)
      .filter((i) => i.kind === 'dynamic-import' && i.external && isPackageSpecifier(i.path))
      .map((i) => packageName(i.path))
      .filter((name) => name !== WORKSPACE_PACKAGE),
  );
}

function lazyPackagesPlugin(lazy) {
  return {
    name: 'agt-lazy-packages',
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, (args) =>
        lazy.has(packageName(args.path)) ? { path: args.path, external: true } : undefined,
      );
    },
  };
}

/**
 * `contracts/dist` → `../dist/contracts`: where the `default` condition of `@agt/contracts` points (an
 * `exports` target cannot leave its package folder). Made once; a link to elsewhere is replaced, a real
 * folder there is left alone.
 */
function linkContractsBuild() {
  const link = join(ROOT, 'contracts', 'dist');
  const target = process.platform === 'win32' ? join(ROOT, OUT_DIR, 'contracts') : `../${OUT_DIR}/contracts`;
  let current;
  try {
    current = lstatSync(link);
  } catch {
    // Not there yet.
  }
  if (current && !current.isSymbolicLink()) return;
  if (current && readlinkSync(link) === target) return;
  if (current) rmSync(link, { force: true });
  symlinkSync(target, link, 'junction');
}

/**
 * `outDir` and `without` exist for A/B measurements (docs/performance.md): a build into another folder without the
 * lazy-packages rule (`lazy-rule`) or the dependency edit (`fastify-404-edit`), for bench/start-profile.ts to start
 * beside dist/.
 */
export async function runBuild({ quiet = false, outDir = OUT_DIR, without = [] } = {}) {
  const started = Date.now();
  const files = SOURCE_DIRS.filter((dir) => existsSync(join(ROOT, dir))).flatMap((dir) => walk(join(ROOT, dir)));
  const extensionIndexes = existsSync(join(ROOT, 'extensions'))
    ? readdirSync(join(ROOT, 'extensions'), { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => join(ROOT, 'extensions', entry.name, 'index.ts'))
        .filter((path) => existsSync(path))
    : [];
  const entryPoints = [
    ...new Set([
      join(ROOT, MAIN),
      join(ROOT, DAEMON),
      join(ROOT, SERVER_GUARDS),
      ...WORKERS.map((worker) => join(ROOT, worker)),
      ...CLI.map((file) => join(ROOT, file)).filter((path) => existsSync(path)),
      ...files.filter((file) => isTypeScript(file) && posix(relative(ROOT, file)).startsWith('contracts/')),
      ...extensionIndexes,
      ...manifestModules(),
    ]),
  ];
  const assets = files.filter((file) => !isTypeScript(file) && !file.endsWith('.md'));

  const out = join(ROOT, outDir);
  const staging = `${out}.tmp-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  let metafile;
  try {
    // What the ES modules and the daemon's one script (scripts/daemon-bundle.mjs) share.
    const shared = {
      external: EXTERNAL,
      conditions: [SOURCE_CONDITION],
      sourcemap: 'linked',
      sourcesContent: false,
      minifyWhitespace: true,
      minifySyntax: true,
      plugins: [
        ...(without.includes('lazy-rule') ? [] : [lazyPackagesPlugin(await lazilyImportedPackages(entryPoints))]),
        fileUrlPlugin,
        dependencyEditsPlugin(without),
      ],
      logLevel: 'warning',
    };
    ({ metafile } = await build({
      ...shared,
      entryPoints,
      outdir: staging,
      outbase: ROOT,
      entryNames: '[dir]/[name]',
      chunkNames: 'chunks/[name]-[hash]',
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      // Bundled CommonJS dependencies call `require` for Node's built-ins.
      banner: {
        js: "import { createRequire as __agtCreateRequire } from 'node:module'; const require = __agtCreateRequire(import.meta.url);",
      },
      metafile: true,
    }));
    const extensionModules = [...new Set([...extensionIndexes, ...manifestModules()])].filter((file) =>
      posix(relative(ROOT, file)).startsWith('extensions/'),
    );
    if (!without.includes('daemon-bundle'))
      await buildDaemonBundle({ root: ROOT, outDir: staging, main: MAIN, modules: extensionModules, options: shared });
    // Its output paths name the staging folder: they are written as the dist/ paths they become.
    writeFileSync(
      join(staging, METAFILE),
      JSON.stringify(metafile).replaceAll(`"${posix(relative(ROOT, staging))}/`, `"${posix(outDir)}/`),
    );
    for (const file of assets) {
      const target = join(staging, relative(ROOT, file));
      mkdirSync(dirname(target), { recursive: true });
      cpSync(file, target);
    }
    // The console extension's web UI (browser bundle, size-checked): dist/console/.
    await buildConsole(join(staging, 'console'));
    const info = {
      // The project, seen from the build folder (`..` for dist/; a build elsewhere for an A/B names it too).
      sourceRoot: posix(relative(out, ROOT)),
      sources: SOURCE_DIRS,
      main: MAIN.replace(/\.ts$/, '.js'),
      ...(without.includes('daemon-bundle') ? {} : { bundle: DAEMON_BUNDLE }),
      daemon: DAEMON.replace(/\.ts$/, '.js'),
      builtAt: started,
    };
    writeFileSync(join(staging, BUILD_INFO), `${JSON.stringify(info, null, 2)}\n`);
    const old = `${out}.old-${process.pid}`;
    if (existsSync(out)) renameSync(out, old);
    renameSync(staging, out);
    rmSync(old, { recursive: true, force: true });
    if (outDir === OUT_DIR) linkContractsBuild();
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    throw error;
  }
  if (!quiet) {
    const outputs = Object.keys(metafile.outputs).filter((name) => !name.endsWith('.map'));
    process.stdout.write(
      `agt: built ${entryPoints.length} entry points (${outputs.length} files, ${assets.length} copied) into ${outDir}/ in ${Date.now() - started} ms\n`,
    );
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const option = (name) => process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
  runBuild({
    quiet: process.argv.includes('--quiet'),
    outDir: option('out') ?? OUT_DIR,
    without: option('without')?.split(',') ?? [],
  }).catch((error) => {
    process.stderr.write(`agt: build failed: ${error?.stack ?? error}\n`);
    process.exit(1);
  });
}
