#!/usr/bin/env node
/**
 * Runs several test files in one process, one after the other (scripts/test.mjs `--batch`): tap's import,
 * the helpers (and, for in-process files, the kernel's modules and a first daemon's start) are paid once
 * per batch instead of once per file (~0.5 s of CPU for a file that only spawns daemons, ~1.5 s for one
 * that boots them in process). Each file is imported inside a root-level test that waits for it to load,
 * and the next file only once the tests the previous one queued have run: a file's top-level code never
 * runs during another file's tests.
 *
 * Between two files the process is put back as a file found it where that can be done: the root-level
 * teardowns a file registered (`t.teardown` on tap's root, its helpers' daemons, servers and temp dirs
 * among them) run once its tests have, not at the end of the batch, and `process.env` is restored. What
 * cannot be put back (the working directory, umask, user, process event listeners, root-level
 * beforeEach/afterEach) keeps a file out of batches (scripts/test-files.mjs `needsOwnProcess`).
 * Each file's tests sit between a `test file <path>` point and an `end of test file <path>` point of the
 * root, so the runner can tell which file of a failed batch failed and run it alone, and a comment gives
 * its seconds and CPU seconds (this process's and its reaped children's: the daemons it stopped).
 * Usage: node scripts/test-batch.mjs <built test file>...
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';

/** CPU seconds of this process and of the children it reaped (stat(5) fields 14-17); null without /proc. */
function cpuSeconds() {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    return fields.slice(11, 15).reduce((sum, ticks) => sum + Number(ticks), 0) / 100;
  } catch {
    return null;
  }
}

for (const file of process.argv.slice(2)) {
  const name = relative(process.cwd(), file);
  const begun = { at: performance.now(), cpu: cpuSeconds() };
  const env = { ...process.env };
  const teardowns = [];
  // Helpers register a file's teardowns on whatever `t` they are given, often the root: collected here.
  t.teardown = t.after = (fn) => void teardowns.push(fn);
  await t.test(`test file ${name}`, async (t) => {
    await import(pathToFileURL(file).href);
    t.pass('loaded');
  });
  await t.test(`end of test file ${name}`, async (t) => {
    for (let fn = teardowns.pop(); fn; fn = teardowns.pop()) await fn();
    for (const key of Object.keys(process.env)) if (!(key in env)) delete process.env[key];
    Object.assign(process.env, env);
    t.pass('its root teardowns ran, its environment is restored');
  });
  const cpu = cpuSeconds();
  const spent = cpu === null || begun.cpu === null ? '' : ` cpu ${(cpu - begun.cpu).toFixed(2)}`;
  t.comment(`agt batch: ${name} seconds ${((performance.now() - begun.at) / 1000).toFixed(2)}${spent}`);
}
