/**
 * bin/v8-flags.mjs, which bin/agtd.mjs imports first: the young generation stays at its initial 1 MB
 * semi-spaces however fast a process allocates. A Node whose V8 drops or renames the flag fails this test (then
 * measure again, or remove the file: its header says how). The control, the same allocation without the
 * flags, shows the allocation is enough to grow it.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { ROOT } from './helpers/daemon.js';

/** Allocates ~2 M short-lived objects with ~20,000 alive at a time; prints new space's size before and after. */
const ALLOCATE = `
import v8 from 'node:v8';
const newSpace = () => v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size;
const before = newSpace();
let live = [];
for (let i = 0; i < 2e6; i++) {
  live.push({ i });
  if (live.length > 20000) live = [];
}
console.log(JSON.stringify({ before, after: newSpace() }));
`;

const MB = 1024 * 1024;

function newSpaceSizes(flags: string[]): { before: number; after: number } {
  // A plain process: no loader of the test runner's (NODE_OPTIONS) allocating beside the loop.
  const { NODE_OPTIONS: _loaders, ...env } = process.env;
  const out = execFileSync(process.execPath, [...flags, '--input-type=module', '-e', ALLOCATE], {
    encoding: 'utf8',
    env,
  });
  return JSON.parse(out) as { before: number; after: number };
}

t.test('the young generation stays at its initial size with the flags, and grows without them', async (t) => {
  const flags = ['--import', pathToFileURL(join(ROOT, 'bin', 'v8-flags.mjs')).href];
  const kept = newSpaceSizes(flags);
  const grown = newSpaceSizes([]);
  // 1 MB semi-spaces: new space is one or both of them, 2 MB at most.
  t.ok(kept.after <= 2 * MB, `with the flags: ${kept.before} → ${kept.after} bytes`);
  t.ok(grown.after > kept.after, `without the flags: ${grown.before} → ${grown.after} bytes`);
});
