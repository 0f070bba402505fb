/**
 * bin/compile-cache.mjs, which bin/agtd.mjs calls before it imports the build: on a Node that has
 * `module.enableCompileCache` (≥ 22.1) a process that loads a module leaves V8's code for it in the folder,
 * and the next process is told the cache is on; on Node 20 nothing is written and start-up goes on.
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
