#!/usr/bin/env node
/**
 * Runs several test files in one process, one after the other (scripts/test.mjs `--batch`): the files
 * that need no process of their own (the quick tier: unit and in-process daemons) pay tap's import, the
 * kernel's modules and a first daemon's start once per batch instead of once per file (~1.5 s of CPU
 * each). Each file is imported inside a root-level test that waits for it to load, and the next file only
 * once the tests the previous one queued have run: a file's top-level code never runs during another
 * file's tests. What files share is the process (module state, environment, its root teardowns run at
 * the end): a file that fails in a batch is run alone by the runner.
 * Usage: node scripts/test-batch.mjs <built test file>...
 */
import { relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';

for (const file of process.argv.slice(2)) {
  await t.test(`test file ${relative(process.cwd(), file)}`, async (t) => {
    await import(pathToFileURL(file).href);
    t.pass('loaded');
  });
}
