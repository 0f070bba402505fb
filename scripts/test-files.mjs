/**
 * Which files the test runner (scripts/test.mjs) runs: tap's `include` globs of package.json, matched in
 * the test build (`test/**\/*.test.ts` → `.test-build/test/**\/*.test.js`), so a new test file is picked
 * up without being listed anywhere; and which of them belong to the quick tier (`npm run test:quick`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/** A glob of tap's `include` (`**`, `*`) as a regular expression over `/`-separated paths. */
function globToRegExp(glob) {
  let source = '';
  for (let i = 0; i < glob.length; i += 1) {
    if (glob.startsWith('**/', i)) {
      source += '(?:.*/)?';
      i += 2;
    } else if (glob[i] === '*') source += '[^/]*';
    else source += glob[i].replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

function walk(dir, found = []) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (entry.name === 'node_modules' || entry.name === 'fixtures' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path, found);
    else if (entry.isFile()) found.push(path);
  }
  return found;
}

/** The built test files of `out` that tap's `include` globs (written for the `.ts` sources) name. */
export function testFiles(out, include) {
  const patterns = include.map((glob) => globToRegExp(glob.replace(/\.ts$/, '.js')));
  const roots = [...new Set(include.map((glob) => glob.split('/')[0]))];
  return roots
    .flatMap((root) => walk(join(out, root)))
    .filter((file) => patterns.some((pattern) => pattern.test(relative(out, file).split(sep).join('/'))));
}

/**
 * Not in the quick tier: what starts processes or engines or needs dist/ (a built daemon as a child, the
 * built `agt` CLI, dockerd,
 * dovecot, Chromium, MCP servers, SMTP), the channel adapters against their fake servers, or measures
 * scale; found from the source, so a new file is sorted without a list. The files named here are
 * in-process but take long.
 */
const SLOW_SOURCE =
  /spawnDaemon|runDaemon|agtInProcess|node:child_process|helpers\/(docker|dovecot|compute|mesh|mcp|smtp-sink|channels|wire-daemon|console-browser)\.js|chromium|bin\/agt/;
const SLOW_FILES = new Set([
  // Scale, restarts and fuzzing.
  'test/agents-scale.test.js',
  'test/agent-tables-loop.test.js',
  'test/tracked-folders-scale.test.js',
  'test/crash-recovery.test.js',
  'test/identity-routes.test.js',
  'test/fuzz-openapi.test.js',
  // The longest in-process files (sandbox workers, timers, restarts of agents).
  'test/agent-sql-processes.test.js',
  'test/agents-review.test.js',
  'test/runtime-lifecycle.test.js',
  'test/command-sandbox.test.js',
  'test/agent-sql-boundary.test.js',
  'test/agent-sql-schema.test.js',
  'test/agents-autostart.test.js',
  'test/runtime-timers.test.js',
  'test/security-fetch.test.js',
  'test/tracked-folders-boot.test.js',
  'test/runtime-control.test.js',
  'test/runtime-sandbox.test.js',
  'test/providers-resilience.test.js',
  'test/security-input.test.js',
  'test/http-limits.test.js',
  'test/runtime-durability.test.js',
  // In-process, but each boots many daemons (7-14 s): the quick tier stays within a minute without them.
  'test/extensions-contract-suite.test.js',
  'test/create-agent.test.js',
  'test/trust-config-ceiling.test.js',
  'test/credentials-locked.test.js',
  'test/agents-core.test.js',
  'test/runtime-dispatch.test.js',
  'test/agents-file.test.js',
  'test/events-stream.test.js',
  'test/runtime-tools.test.js',
  'test/loops-write.test.js',
  'test/agents-resources.test.js',
  'test/agent-identity-routes.test.js',
]);

/** Whether a test file's source starts processes or engines (not in the quick tier). */
export const startsProcesses = (source) => SLOW_SOURCE.test(source);

/**
 * What a file may change for its whole process that a batch (scripts/test-batch.mjs) cannot put back for
 * the next file: the working directory, umask, user or groups, process event listeners (signals, exit,
 * uncaught errors: tap adds and removes its own at times, so a diff cannot tell whose they are), an exit,
 * V8 flags (`v8.setFlagsFromString`), root-level beforeEach/afterEach (they would wrap the next files' tests). Such a file runs in a process of
 * its own. The environment needs no rule: the batch restores `process.env` after each file.
 */
const OWN_PROCESS_SOURCE =
  /process\.(chdir|umask|set(e?[ug]id|groups)|initgroups|on|once|addListener|prependListener|prependOnceListener)\(|^\s*process\.(exit|abort|reallyExit)\(|setFlagsFromString|^t\.(beforeEach|afterEach)\(/m;

/** Whether a test file's source changes process-wide state a batch cannot restore (it then runs alone). */
export const needsOwnProcess = (source) => OWN_PROCESS_SOURCE.test(source);

/** Whether a built test file belongs to `npm run test:quick` (`source` is its TypeScript). */
export function isQuick(name, source) {
  return !SLOW_FILES.has(name) && !SLOW_SOURCE.test(source);
}

export function quickFilter(root, out, files) {
  return files.filter((file) => {
    const name = relative(out, file).split(sep).join('/');
    let source = '';
    try {
      source = readFileSync(join(root, name.replace(/\.js$/, '.ts')), 'utf8');
    } catch {
      // No source beside: judged by name only.
    }
    return isQuick(name, source);
  });
}
