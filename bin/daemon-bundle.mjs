// A performance trick: the daemon's one script (dist/agtd.cjs, scripts/daemon-bundle.mjs) is compiled through
// `vm.Script` with V8's code cache, so a start deserializes the code the last start compiled instead of
// parsing and compiling ~4 MB of JavaScript again (Node 20 keeps no such cache of ES modules).
//
// The cache is one file in the project's `.cache/compile`, beside the build and writable by whoever can write
// the build (code read from it runs in the daemon, so no other folder is taken), named for the script's
// path, size and modification time and Node's version, so a rebuilt script never meets an old cache (V8 itself
// checks only the source's length and its own version and flags, and refuses a mismatch). It is written
// once the daemon listens and its extensions started, and only when there was none or V8 refused it: it
// then holds the code of the start itself, the functions compiled so far. A cache that cannot be written
// (a read-only install) leaves start-up as without it; `NODE_DISABLE_COMPILE_CACHE=1` turns it off.
//
// What it buys: docs/performance.md, "Cold start on Node 20" (process CPU to the first 200 on `/health`).
// How it is tested: test/compile-cache.test.ts (a first run writes the cache, the next one uses it, a
// changed script does not) and every black-box test, which runs the daemon through this file.
// How to remove it: have bin/agtd.mjs import dist/kernel/main.js as before, delete this file,
// scripts/daemon-bundle.mjs and its call in scripts/build.mjs, and kernel/extensions/bundled.ts.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import vm from 'node:vm';

const root = fileURLToPath(new URL('..', import.meta.url));
const CACHE_PREFIX = 'agtd-';

const hash = (text, length) => createHash('sha256').update(text).digest('hex').slice(0, length);

/** The cache file for `file` as it is now, in `directory`: `agtd-<the script's path>-<its version>.v8`. */
function cacheFileFor(file, directory) {
  const { size, mtimeMs } = statSync(file);
  const version = hash(`${size}\0${mtimeMs}\0${process.version}\0${process.arch}`, 16);
  return join(directory, `${CACHE_PREFIX}${hash(file, 8)}-${version}.v8`);
}

/** Writes the script's code cache (atomically) and removes the caches of its older versions. Never throws. */
function writeCache(script, cacheFile) {
  try {
    const directory = dirname(cacheFile);
    mkdirSync(directory, { recursive: true });
    const temporary = `${cacheFile}.${process.pid}.tmp`;
    try {
      writeFileSync(temporary, script.createCachedData());
      renameSync(temporary, cacheFile);
    } finally {
      rmSync(temporary, { force: true });
    }
    const sameScript = cacheFile.slice(directory.length + 1, directory.length + 1 + CACHE_PREFIX.length + 9);
    for (const name of readdirSync(directory)) {
      const path = join(directory, name);
      if (name.startsWith(sameScript) && name.endsWith('.v8') && path !== cacheFile) rmSync(path, { force: true });
    }
  } catch {
    // A cache that cannot be written leaves start-up as it is.
  }
}

/**
 * Compiles the script, with the cache when there is one. The file's bytes and the cache are read here so that
 * they are garbage when the script runs (held through its start, ~7 MB would wait for a full collection).
 * The build writes the script in ASCII (scripts/daemon-bundle.mjs), so it is read as one-byte text, without
 * decoding. It is one function expression: CommonJS's own five parameters, then the script's URL,
 * `import.meta.resolve` and `import()` as seen from here.
 */
function compile(file, cacheFile) {
  let cachedData;
  if (cacheFile) {
    try {
      cachedData = readFileSync(cacheFile);
    } catch {
      // None yet.
    }
  }
  const script = new vm.Script(readFileSync(file, 'latin1'), { filename: file, cachedData });
  return { script, used: cachedData !== undefined && !script.cachedDataRejected };
}

/**
 * Runs the script `file` (what it exports: `started`, see kernel/main.ts) with the code cache in `directory`.
 * Returns what happened to the cache: `used`, `written` (none, or V8 refused it: written once started),
 * or `off`.
 */
export async function runDaemonBundle(file, directory = join(root, '.cache', 'compile')) {
  const cacheFile = process.env.NODE_DISABLE_COMPILE_CACHE ? undefined : cacheFileFor(file, directory);
  const { script, used } = compile(file, cacheFile);
  const module = { exports: {} };
  script.runInThisContext()(
    module.exports,
    createRequire(file),
    module,
    file,
    dirname(file),
    pathToFileURL(file).href,
    (specifier) => import.meta.resolve(specifier),
    // Its dynamic imports: resolved from here, bin/ beside dist/ in the project, so a bare package is found
    // in the same node_modules and a file URL is absolute.
    (specifier) => import(specifier),
  );
  if (!cacheFile) return 'off';
  if (used) return 'used';
  Promise.resolve(module.exports.started).then(
    () => setImmediate(() => writeCache(script, cacheFile)),
    () => {},
  );
  return 'written';
}
