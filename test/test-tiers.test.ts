/**
 * The suite's tiers hold by rule (docs/testing.md): a test that boots a daemon in its own process
 * (`bootDaemon`) does so to reach the kernel's internals; one that only talks to the daemon as a client
 * would runs the built daemon instead (`runDaemon`: bin/agtd.mjs, dist/, the shipped extensions), so what
 * users run is what it tests. Shared helpers boot no in-process daemon at all.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import t from 'tap';
import { ROOT } from './helpers/daemon.js';

/**
 * What only an in-process boot gives: the kernel itself, its runtime hooks, and the in-process runtime
 * harness's own (turns held before their model call, the runtime service, an injected clock, a crash copy
 * of an open file, a model client that throws, no model at all, the fetch tool's resolver).
 */
const INTERNALS =
  /\bdaemon\.(kernel|app|shutdown|closed)\b|replaceRuntimeHooks|holdTurns\(|\bh\.service\b|\bclock\b|crashCopy\(|noModel|throws?:|fetchDns\./;
/** `bootDaemon`, or the runtime harness (test/fixtures/runtime/harness.ts), which boots with it. */
const BOOTS_IN_PROCESS = /\bbootDaemon\(|\bruntimeHarness\(/;

function sources(dir: string, found: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory() && entry.name !== 'node_modules' && entry.name !== 'fixtures') sources(path, found);
    else if (entry.isFile() && entry.name.endsWith('.ts')) found.push(path);
  }
  return found;
}

const files = [
  ...sources(join(ROOT, 'test')),
  ...readdirSync(join(ROOT, 'examples'), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .flatMap((e) => sources(join(ROOT, 'examples', e.name))),
];

t.test('a file booting the daemon in its process uses the kernel it reaches', async (t) => {
  const inProcess = files.filter(
    (file) => file.endsWith('.test.ts') && BOOTS_IN_PROCESS.test(readFileSync(file, 'utf8')),
  );
  t.ok(files.length > 50, 'the test files are found');
  for (const file of inProcess) {
    t.ok(
      INTERNALS.test(readFileSync(file, 'utf8')),
      `${relative(ROOT, file)}: boots in process but reaches no kernel internals: use runDaemon or wireDaemon (the built daemon)`,
    );
  }
});

t.test('shared helpers start built daemons only', async (t) => {
  const helpers = files.filter((file) => file.includes(`${join('test', 'helpers')}`) && !file.endsWith('daemon.ts'));
  t.ok(helpers.length > 5, 'the helpers are found');
  for (const file of helpers)
    t.notOk(BOOTS_IN_PROCESS.test(readFileSync(file, 'utf8')), `${relative(ROOT, file)} boots no in-process daemon`);
});
