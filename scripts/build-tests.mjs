#!/usr/bin/env node
/**
 * The test build (`npm test` makes it before the suite): every TypeScript file of the project's source
 * folders, tests included, transpiled file by file with esbuild (no bundling, types dropped) into
 * `.test-build/` at the same relative path (`test/health.test.ts` → `.test-build/test/health.test.js`),
 * so each test process runs plain JavaScript instead of loading tsx and transforming ~500 modules
 * (importing the kernel: ~0.4 s of CPU instead of ~3.9 s).
 *
 * One tree, one copy of each module: a test and the daemon it boots in its process import the same
 * `.test-build/kernel/…` and `.test-build/contracts/…` files, so classes (`AgtError`) and test-only knobs
 * (a module's exported timing constant a test changes) have a single home.
 * - `@agt/contracts` resolves inside the tree: `.test-build/node_modules/@agt/contracts` links to
 *   `.test-build/contracts`, whose package.json (written here) maps the package's two entry points to their `.js`
 *   files.
 * - `.agt-build.json` marks the tree as a build of the sources in `..` (kernel/extensions/typescript.ts):
 *   a module named by its source path (`<root>/extensions/mcp/index.ts` in a manifest, a fixture) loads its
 *   twin here, and a TypeScript file outside the tree loads through tsx, redirected here for the project's
 *   modules. test/helpers/daemon.ts's `ROOT` is the project folder, not this one.
 * - Files that are not TypeScript (worker scripts, JSON, fixtures) are copied, and the TypeScript of
 *   `test/fixtures/` and `examples/` is copied beside its JavaScript, so `new URL('./x.mjs', import.meta.url)` and a
 *   fixture named by its `.ts` path work here as in the sources.
 * - Source maps (linked files) point at the sources; scripts/test.mjs runs a failing file again with
 *   --enable-source-maps (not every file: reading the maps cost ~0.2 s of CPU per file).
 *
 * Only changed files are written again (compared by content), so a rebuild costs ~1 s.
 * Usage: node scripts/build-tests.mjs [--quiet]; `runTestBuild()` from scripts/test.mjs.
 */
import { transform } from 'esbuild';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const TEST_BUILD_DIR = '.test-build';
/** Folders transpiled (the marker's `sources`: their files load from here when named by source path). */
export const TEST_SOURCE_DIRS = ['kernel', 'contracts', 'extensions', 'cli', 'test', 'examples'];
const BUILD_INFO = '.agt-build.json';
/** TypeScript that is also copied as is: fixtures and examples a test hands to the daemon by their `.ts` path. */
const COPY_TS_UNDER = [`test${sep}fixtures${sep}`, `examples${sep}`];
const copiedAsIs = (rel) => COPY_TS_UNDER.some((dir) => rel.startsWith(dir));

const isTypeScript = (name) => name.endsWith('.ts') && !name.endsWith('.d.ts');
const posix = (path) => path.split(sep).join('/');

function walk(dir, found = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    // A fixture's node_modules (a package a test installs) is copied too; the project's is not walked.
    if (entry.name.startsWith('.') || (entry.name === 'node_modules' && !dir.includes(`test${sep}fixtures`))) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path, found);
    else if (entry.isFile()) found.push(path);
  }
  return found;
}

/** Writes `content` unless the file already holds it (keeps mtimes, and the work, of unchanged files). */
function writeIfChanged(file, content) {
  try {
    const bytes = Buffer.isBuffer(content) ? content : Buffer.from(content);
    if (statSync(file).size === bytes.length && readFileSync(file).equals(bytes)) return false;
  } catch {
    // Not there yet.
  }
  mkdirSync(dirname(file), { recursive: true });
  // Whole or not at all: another `npm test` in this checkout may be importing the file right now.
  const partial = `${file}.tmp-${process.pid}`;
  writeFileSync(partial, content);
  renameSync(partial, file);
  return true;
}

async function transpile(file, out) {
  const source = readFileSync(file, 'utf8');
  const rel = posix(relative(ROOT, file));
  const target = join(out, rel.replace(/\.ts$/, '.js'));
  const mapName = `${target.split(sep).pop()}.map`;
  const result = await transform(source, {
    loader: 'ts',
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Node 20.10+ reads `import x from './y.json' with { type: 'json' }`: keep the attribute.
    supported: { 'import-attributes': true },
    sourcemap: 'external',
    sourcefile: posix(relative(dirname(target), file)),
    sourcesContent: false,
  });
  let written = writeIfChanged(target, `${result.code}//# sourceMappingURL=${mapName}\n`);
  written = writeIfChanged(`${target}.map`, result.map) || written;
  return written;
}

/** `@agt/contracts` inside the tree: a package.json for `.test-build/contracts` and the link to it. */
function linkContracts(out) {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'contracts/package.json'), 'utf8'));
  // The same two entry points as contracts/package.json: a deep path fails here as it does for a third party.
  const exports = { '.': './index.js', './testing': './testing/index.js' };
  writeIfChanged(
    join(out, 'contracts/package.json'),
    `${JSON.stringify({ name: pkg.name, version: pkg.version, type: 'module', private: true, exports }, null, 2)}\n`,
  );
  const link = join(out, 'node_modules/@agt/contracts');
  const target = process.platform === 'win32' ? join(out, 'contracts') : '../../contracts';
  try {
    if (lstatSync(link).isSymbolicLink()) return;
    rmSync(link, { recursive: true, force: true });
  } catch {
    // Not there yet.
  }
  mkdirSync(dirname(link), { recursive: true });
  symlinkSync(target, link, 'junction');
}

export async function runTestBuild({ quiet = false } = {}) {
  const started = Date.now();
  const out = join(ROOT, TEST_BUILD_DIR);
  const files = TEST_SOURCE_DIRS.filter((dir) => existsSync(join(ROOT, dir))).flatMap((dir) => walk(join(ROOT, dir)));
  const expected = new Set();
  let changed = 0;
  const jobs = [];
  for (const file of files) {
    const rel = relative(ROOT, file);
    if (isTypeScript(file)) {
      const js = rel.replace(/\.ts$/, '.js');
      expected.add(js).add(`${js}.map`);
      jobs.push(transpile(file, out).then((written) => (changed += written ? 1 : 0)));
      if (!copiedAsIs(rel)) continue;
    }
    if ((file.endsWith('.md') && !copiedAsIs(rel)) || rel === join('contracts', 'package.json')) continue;
    expected.add(rel);
    if (writeIfChanged(join(out, rel), readFileSync(file))) changed += 1;
  }
  await Promise.all(jobs);
  expected.add(join('contracts', 'package.json'));
  linkContracts(out);
  // Outputs whose source is gone (a renamed test must not run on as a stale copy).
  let removed = 0;
  for (const dir of TEST_SOURCE_DIRS) {
    if (!existsSync(join(out, dir))) continue;
    for (const file of walk(join(out, dir))) {
      // Only when the source is really gone (not merely created after this build listed the folders).
      const rel = relative(out, file);
      const source = join(ROOT, rel.replace(/\.js\.map$/, '.ts').replace(/\.js$/, '.ts'));
      if (!expected.has(rel) && !existsSync(source) && !existsSync(join(ROOT, rel)) && !/\.tmp-\d+$/.test(rel)) {
        rmSync(file, { force: true });
        removed += 1;
      }
    }
  }
  writeIfChanged(
    join(out, BUILD_INFO),
    `${JSON.stringify({ sourceRoot: '..', sources: TEST_SOURCE_DIRS, test: true }, null, 2)}\n`,
  );
  if (!quiet)
    process.stdout.write(
      `agt: test build: ${files.length} files, ${changed} written, ${removed} removed, in ${Date.now() - started} ms (${TEST_BUILD_DIR}/)\n`,
    );
  return { out, changed, removed };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  runTestBuild({ quiet: process.argv.includes('--quiet') }).catch((error) => {
    process.stderr.write(`agt: test build failed: ${error?.stack ?? error}\n`);
    process.exit(1);
  });
}
