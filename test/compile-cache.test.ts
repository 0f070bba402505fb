/**
 * bin/compile-cache.mjs, which bin/agtd.mjs calls before it runs the build: on a Node that has
 * `module.enableCompileCache` (≥ 22.1) a process that loads a module leaves V8's code for it in the folder,
 * and the next process is told the cache is on; on Node 20 nothing is written and start-up goes on. And
 * bin/daemon-bundle.mjs, which runs the daemon's one script with V8's code cache on every Node.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import module from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { ROOT } from './helpers/daemon.js';

const supported = typeof (module as { enableCompileCache?: unknown }).enableCompileCache === 'function';

/** A plain process (no loader of the test runner's) that turns the cache on, then imports `file`. */
function run(cache: string, file: string): string {
  const { NODE_OPTIONS: _loaders, NODE_COMPILE_CACHE: _set, ...env } = process.env;
  const script = `import { enableCompileCache } from ${JSON.stringify(pathToFileURL(join(ROOT, 'bin', 'compile-cache.mjs')).href)};
console.log(enableCompileCache(${JSON.stringify(cache)}));
await import(${JSON.stringify(pathToFileURL(file).href)});`;
  return execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', env }).trim();
}

t.test('the compile cache is written where Node has it, and nothing happens where it does not', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'agt-compile-cache-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const cache = join(dir, 'cache');
  const file = join(dir, 'module.mjs');
  writeFileSync(file, `export const answer = ${'[1, 2, 3].map((x) => x * 2).length + '.repeat(200)}0;\n`);
  const first = run(cache, file);
  if (!supported) {
    t.equal(first, 'unsupported', `Node ${process.version} has no compile cache`);
    t.notOk(existsSync(cache), 'no folder made');
    return;
  }
  t.equal(first, 'enabled');
  const written = readdirSync(cache, { recursive: true }).length;
  t.ok(written > 0, `the cache holds ${written} entries after the first process`);
  t.equal(run(cache, file), 'enabled', 'the next process uses the same folder');
});

/** A plain process that runs `script` as bin/agtd.mjs runs the daemon's one script; prints what happened to the cache. */
function runScript(cache: string, script: string, env: Record<string, string> = {}): string {
  const { NODE_OPTIONS: _loaders, NODE_COMPILE_CACHE: _set, NODE_DISABLE_COMPILE_CACHE: _off, ...rest } = process.env;
  const code = `import { runDaemonBundle } from ${JSON.stringify(pathToFileURL(join(ROOT, 'bin', 'daemon-bundle.mjs')).href)};
console.log(await runDaemonBundle(${JSON.stringify(script)}, ${JSON.stringify(cache)}));`;
  return execFileSync(process.execPath, ['--input-type=module', '-e', code], {
    encoding: 'utf8',
    env: { ...rest, ...env },
  }).trim();
}

t.test(
  "the daemon's one script: its code cache is written once started, used next time, never for another version",
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'agt-code-cache-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const cache = join(dir, 'cache');
    const script = join(dir, 'agtd.cjs');
    // What the script does at start (functions compiled then land in the cache), its `started`, and a
    // dynamic import through the runner, as the build writes every `import()` of the daemon's script
    // (scripts/daemon-bundle.mjs): it works in code taken from the cache too.
    // Written as the build writes the daemon's: one function expression of the runner's parameters.
    const body = (
      answer: number,
    ) => `(function (exports, require, module, __filename, __dirname, __agtScriptUrl, __agtResolve, __agtImport) {
const work = () => [1, 2, 3].map((x) => x * ${answer}).length;
exports.started = __agtImport('node:os').then((os) => { if (!os.platform()) throw new Error('no platform'); work(); });
console.log('ran ${answer}');
})`;
    writeFileSync(script, body(2));

    t.equal(runScript(cache, script), 'ran 2\nwritten', 'the first run compiles and writes the cache');
    const files = readdirSync(cache);
    t.equal(files.length, 1, `one cache file: ${files.join(', ')}`);
    t.equal(runScript(cache, script), 'ran 2\nused', 'the next run takes the compiled code from it');
    t.equal(runScript(cache, script, { NODE_DISABLE_COMPILE_CACHE: '1' }), 'ran 2\noff', 'turned off: not read');

    // A rebuilt script of the same length: V8 alone would take the old code (it checks only the length).
    writeFileSync(script, body(3));
    t.equal(runScript(cache, script), 'ran 3\nwritten', 'a changed script runs its own code and writes its own cache');
    t.same(readdirSync(cache).length, 1, 'the old version’s cache is removed');
    t.equal(runScript(cache, script), 'ran 3\nused');
  },
);
