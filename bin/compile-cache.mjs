// A performance trick: V8's compiled code of the modules a start loads (the build's ~2.5 MB) is kept on disk
// and reused by the next start, through `module.enableCompileCache` (Node ≥ 22.1). Node 20 has no such
// call: it starts as before. Node checks each entry against its module's source, so a rebuilt file is
// compiled again; a cache that cannot be written (a read-only install) leaves start-up as it was. The cache
// is written when the process exits normally (a daemon killed with SIGKILL leaves the old one).
//
// Where: `.cache/compile` in the project (beside the build, owned by whoever built it), or the folder in
// `NODE_COMPILE_CACHE` when set (Node reads that variable itself).
// What it buys: on Node 22.23, cold start CPU to the first 200 on `/health` 400 → 350 ms (median of 9
// alternating starts, bare fastify 190; docs/performance.md, "Tricks kept and removed").
// How it is tested: test/compile-cache.test.ts (on a Node that has the call, a start writes the cache and
// the next start reads it back; on Node 20, nothing is written).
// How to remove it: delete this file, its call in bin/agtd.mjs and test/compile-cache.test.ts.
import module from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Turns the cache on where Node has it; returns Node's status (`enabled`, `already_enabled`, `failed`, `disabled`), or `unsupported`. Never throws. */
export function enableCompileCache(directory = join(root, '.cache', 'compile')) {
  if (typeof module.enableCompileCache !== 'function') return 'unsupported';
  try {
    const { status } = module.enableCompileCache(directory);
    const named = Object.entries(module.constants.compileCacheStatus).find(([, value]) => value === status);
    return named ? named[0].toLowerCase() : String(status);
  } catch {
    return 'failed';
  }
}
