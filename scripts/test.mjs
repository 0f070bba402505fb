#!/usr/bin/env node
/**
 * `npm test` (docs/testing.md): builds dist/ (the daemons the suite spawns as child processes run it) and
 * the test build (`.test-build/`, scripts/build-tests.mjs: the sources and tests as JavaScript), then runs
 * every test file of the tree as a plain `node` process, `--jobs` at a time (default: two more than the cores:
 * a file spends part of its time waiting on the daemons, browsers and engines it starts; on 2 cores, with 203
 * files, 4 at a time ran the suite in 272 s where 3 took 329 s), more while cores sit idle, slowest first by the
 * last run's times (a fresh clone: scripts/test-durations.json). Beside the suite, at a lower CPU priority: the
 * type-check (tsc, incremental, its state in `.cache/agt/`, outside node_modules so `npm ci` keeps it), the import
 * boundaries (dependency-cruiser with .dependency-cruiser.cjs) and the API report of @agt/contracts
 * (scripts/api-report.mjs), and format and lint (Biome, biome.jsonc; about 2 s). It fails when any of them fails.
 *
 * Why not `tap` itself: its runner starts each test process with two module-hook loaders (process info
 * and mocks; ~1 s of CPU per process on Node 20, more than the tests of most files) and, after `npm ci`,
 * with @tapjs/typescript's loader too (its test class is rebuilt during the first run). The files are
 * still tap tests (`import t from 'tap'`, TAP output, TAP_TIMEOUT); `npx tap test/x.test.ts` runs one from
 * the sources through tsx as before.
 *
 * A file that fails because it imports a `.ts` file by path without tests/helpers' `importFile()` is run
 * again once with scripts/test-register.mjs's hooks (and the runner says so), so such a test still counts.
 *
 * Usage: node scripts/test.mjs [--quick] [--no-checks] [--jobs=N] [--batch=N | --no-batch] [test files, as sources or
 * built]
 *   --quick      the unit and in-process files only (no child daemons, engines or scale): `npm run test:quick`
 *   --no-checks  skip the type-check, import boundaries, API report and format/lint
 *   --batch=N    files N to a process (default 4 when no file is named; see worker() below)
 *   --no-batch   every file in a process of its own
 *   --max-jobs=N files at once at most while cores sit idle (default: two more than --jobs; --jobs alone: --jobs)
 *   --save-durations  write each file's seconds of this full run into scripts/test-durations.json (the order of
 *                a first run)
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, setPriority } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runBuild } from './build.mjs';
import { runTestBuild, TEST_BUILD_DIR } from './build-tests.mjs';
import { leftSince, orphans } from './leftover-processes.mjs';
import { needsOwnProcess, quickFilter, testFiles } from './test-files.mjs';

const ROOT = join(fileURLToPath(new URL('.', import.meta.url)), '..');
const bin = (name) => join(ROOT, 'node_modules/.bin', name);
// The type-check runs TypeScript 7 (the native compiler, package alias `typescript-7`): the same errors as
// TypeScript 6 in 40% of its CPU time (16 s against 41 s for this tree), CPU the suite's files
// then have. TypeScript 6 stays the `typescript` package: dependency-cruiser parses through its JavaScript API.
// Beside the suite it runs single-threaded (`--singleThreaded`): its parallel checkers redo shared work and
// spin waiting on a machine the suite keeps busy (cold, this tree: 5-6 s of CPU against 9-12 s quiet and
// ~40 s at load 25); the suite has the cores, and the check still ends long before it.
const tsc = join(ROOT, 'node_modules/typescript-7/bin/tsc');
const exitCode = (child) =>
  new Promise((done) => child.once('close', (code, signal) => done(code ?? (signal ? 1 : 0))));
const TIMES_FILE = join(ROOT, TEST_BUILD_DIR, '.times.json');
const DURATIONS_FILE = join(ROOT, 'scripts/test-durations.json');
const CACHE_DIR = join(ROOT, '.cache/agt');

const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const quick = flag('--quick');
const checks = !flag('--no-checks') && !quick;
const tapConfig = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).tap ?? {};
const jobsArg = Number(args.find((arg) => arg.startsWith('--jobs='))?.slice(7));
const jobs = jobsArg || availableParallelism() + 2;
// More files start while cores sit idle (files waiting on a TTL, a browser, an engine): up to this many at once.
const maxJobs = Number(args.find((arg) => arg.startsWith('--max-jobs='))?.slice(11)) || (jobsArg ? jobs : jobs + 2);
const timeoutSeconds = Number(tapConfig.timeout) || 120;
const started = Date.now();
// Orphans of this checkout already running (a detached daemon of the developer's): not the run's leftovers.
const orphansBefore = orphans(ROOT);

/**
 * CPU seconds of the processes this runner has reaped (user + system, each with its own reaped
 * descendants: the daemons, browsers and npm a file starts), from /proc/self/stat; null where there is
 * no /proc. Read at each child's exit, the growth since the previous exit is that child's CPU: the
 * suite is CPU-bound on 2 cores, so this, not wall time, says which file costs the suite most.
 */
function reapedCpuSeconds() {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    // Fields 16 and 17 of stat(5) (cutime, cstime), in clock ticks (100 per second on Linux).
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return null;
  }
}
let reapedSoFar = reapedCpuSeconds();
function cpuOfReaped() {
  const now = reapedCpuSeconds();
  const spent = now === null || reapedSoFar === null ? null : now - reapedSoFar;
  reapedSoFar = now;
  return spent;
}

/** Runs a check beside the suite at a lower priority; resolves to its exit code, output and time. */
function besideTheSuite(executable, commandArgs) {
  const begun = Date.now();
  const child = spawn(executable, commandArgs, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    setPriority(child.pid, 10);
  } catch {
    // Not permitted here: it runs at normal priority.
  }
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  return exitCode(child).then((code) => ({
    code,
    output,
    seconds: ((Date.now() - begun) / 1000).toFixed(1),
    cpu: cpuOfReaped(),
  }));
}

let typecheck;
let boundaries;
let typecheckUi;
let apiReport;
let formatLint;
if (checks) {
  mkdirSync(CACHE_DIR, { recursive: true });
  typecheck = besideTheSuite(tsc, [
    '-p',
    'tsconfig.json',
    '--noEmit',
    '--pretty',
    'false',
    '--incremental',
    '--tsBuildInfoFile',
    join(CACHE_DIR, 'typecheck.tsbuildinfo'),
    '--singleThreaded',
  ]);
  // The console's browser code has its own compiler options (DOM, JSX): its types come from @agt/contracts.
  typecheckUi = besideTheSuite(tsc, [
    '-p',
    'extensions/console/ui/tsconfig.json',
    '--pretty',
    'false',
    '--singleThreaded',
  ]);
  boundaries = besideTheSuite(bin('depcruise'), ['--config', '.dependency-cruiser.cjs', '--output-type', 'err', '.']);
  apiReport = besideTheSuite(process.execPath, [join(ROOT, 'scripts/api-report.mjs')]);
  formatLint = besideTheSuite(bin('biome'), ['ci', '--colors=off', '.']);
}
if (!quick) await runBuild({ quiet: true });
const { out } = await runTestBuild({ quiet: true });

/** The built file of a named test (`test/x.test.ts`, `.test-build/test/x.test.js` or a folder). */
function builtOf(name) {
  const path = resolve(ROOT, name);
  const inside = relative(out, path).startsWith('..') ? relative(ROOT, path) : relative(out, path);
  return join(out, inside.replace(/\.ts$/, '.js'));
}
const named = args.filter((arg) => !arg.startsWith('--'));
let files = named.length > 0 ? named.map(builtOf) : testFiles(out, tapConfig.include ?? ['test/**/*.test.ts']);
if (quick && named.length === 0) files = quickFilter(ROOT, out, files);
const missing = files.filter((file) => !existsSync(file));
if (missing.length > 0) {
  process.stderr.write(`no such test file: ${missing.map((file) => relative(out, file)).join(', ')}\n`);
  process.exit(1);
}

/**
 * Each file's seconds: the last run's (`.test-build/.times.json`), else the committed ones of a full run
 * (scripts/test-durations.json, by source name; `--save-durations` rewrites it from the last run), else its
 * size. The longest files start first: on a fresh clone, sorted by size, a 24 s file started in the last
 * quarter of the run.
 */
let times = {};
try {
  times = JSON.parse(readFileSync(TIMES_FILE, 'utf8'));
} catch {
  // First run here: the committed durations.
}
let committed = {};
try {
  committed = JSON.parse(readFileSync(DURATIONS_FILE, 'utf8'));
} catch {
  // None: the biggest files first.
}
const sourceName = (file) => relative(out, file).split(sep).join('/').replace(/\.js$/, '.ts');
const weight = (file) => times[relative(out, file)] ?? committed[sourceName(file)] ?? statSync(file).size / 1000;
files.sort((a, b) => weight(b) - weight(a));

/** Whether the file's source names a `.ts` file relative to itself (in the tree, the copy beside the built file). */
function namesTypeScriptBesideItself(file) {
  try {
    return /new URL\(\s*['"`][^'"`]+\.ts['"`]\s*,\s*import\.meta\.url/.test(
      readFileSync(join(ROOT, relative(out, file)).replace(/\.js$/, '.ts'), 'utf8'),
    );
  } catch {
    return false;
  }
}

const TS_IMPORT = /Unknown file extension "\.ts"|ERR_UNKNOWN_FILE_EXTENSION/;

/**
 * Runs one test file; resolves to its exit code, output and seconds. Without source maps: reading and
 * parsing the `.map` of every module a file loads cost ~0.2 s of CPU per file (~25 s for the suite); a
 * file that fails is run again with them (`sourceMaps`) for stack traces at the sources.
 */
function runFile(file, withHooks = false, sourceMaps = false) {
  return runNode(
    [
      ...(sourceMaps ? ['--enable-source-maps'] : []),
      '--conditions=agt-source',
      ...(withHooks ? [`--import=${join(ROOT, 'scripts/test-register.mjs')}`] : []),
      file,
    ],
    timeoutSeconds,
  );
}

/** Runs test files in one process (scripts/test-batch.mjs), their time limits added up. */
function runBatch(batch) {
  return runNode(
    ['--conditions=agt-source', join(ROOT, 'scripts/test-batch.mjs'), ...batch],
    timeoutSeconds * batch.length,
  );
}

function runNode(nodeArgs, timeoutSeconds) {
  const begun = Date.now();
  const child = spawn(process.execPath, nodeArgs, {
    cwd: ROOT,
    env: { ...process.env, TAP: '1', TAP_TIMEOUT: String(timeoutSeconds) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  // tap ends a file at TAP_TIMEOUT itself; this is for a process that hangs past it.
  const killer = setTimeout(
    () => {
      output += `\n# agt test runner: killed after ${timeoutSeconds + 30} s\n`;
      child.kill('SIGKILL');
    },
    (timeoutSeconds + 30) * 1000,
  );
  return exitCode(child).then((code) => {
    clearTimeout(killer);
    return { code, output, seconds: (Date.now() - begun) / 1000, cpu: cpuOfReaped() };
  });
}

/**
 * Batches (`--batch=N`, the default with N = 4 when no file is named; `--no-batch` turns it off): files run N
 * to a process, one after the other (scripts/test-batch.mjs): tap's import and the helpers (for in-process
 * files also the kernel's modules and a first daemon's start) are paid once per batch. Files that start
 * daemons are batched too: their daemons are child processes, stopped by the file's teardowns before the next
 * file starts. A file stays alone when its source changes what a batch cannot restore (scripts/test-files.mjs
 * `needsOwnProcess`) or names a `.ts` file beside itself. Batches are made from files of similar weight (the
 * order of the last run's times), so a batch of long files starts first. When a batch fails, the files that
 * failed in it (or never finished) run alone and those results count; if they all pass alone, the batch
 * itself is reported failed (files that disturb each other, or a flaky test).
 */
const batchArg = args.find((arg) => arg === '--batch' || arg.startsWith('--batch='));
const batchSize = flag('--no-batch') ? 1 : batchArg ? Number(batchArg.slice(8)) || 4 : named.length > 0 ? 1 : 4;
// A file this long (seconds) runs alone: batched, the three after it would wait for it, and a batch that long
// can end the run late; what a batch saves (~0.5 s of CPU) is small beside it.
const LONG_FILE_SECONDS = 15;
function batchable(file) {
  if (batchSize < 2 || namesTypeScriptBesideItself(file) || weight(file) >= LONG_FILE_SECONDS) return false;
  const name = relative(out, file).split(sep).join('/');
  try {
    return !needsOwnProcess(readFileSync(join(ROOT, name.replace(/\.js$/, '.ts')), 'utf8'));
  } catch {
    return false;
  }
}
const together = files.filter(batchable);
const queue = files.filter((file) => !together.includes(file)).map((file) => [file]);
for (let i = 0; i < together.length; i += batchSize) queue.push(together.slice(i, i + batchSize));
const itemWeight = (item) => item.reduce((sum, file) => sum + weight(file), 0);
queue.sort((a, b) => itemWeight(b) - itemWeight(a));

/**
 * The files of a failed batch that did not pass in it: a root-level `not ok` between a file's `test file`
 * point and the next file's, or no passing `end of test file` point (the batch stopped before its end).
 */
function failedInBatch(item, output) {
  const named = (file) => relative(ROOT, file);
  const failed = new Set();
  const ended = new Set();
  let current;
  for (const line of output.split('\n')) {
    const point = /^(not ok|ok) \d+ - (.*?)(?: # .*)?$/.exec(line);
    if (!point) continue;
    const [, status, title] = point;
    if (title.startsWith('test file ')) current = title.slice('test file '.length);
    if (status === 'not ok' && current) failed.add(current);
    if (status === 'ok' && title.startsWith('end of test file ')) ended.add(title.slice('end of test file '.length));
  }
  return item.filter((file) => failed.has(named(file)) || !ended.has(named(file)));
}

/**
 * Each file's seconds and CPU seconds in a batch, from the batch's `agt batch:` comments (scripts/test-batch.mjs),
 * the process's own cost (tap's import, its exit) shared out evenly so the files add up to the batch: for
 * the report, the totals and the next run's order. A file without its comment (the batch stopped) gets an
 * even share.
 */
function figuresInBatch(item, batch) {
  const measured = new Map();
  for (const [, name, seconds, cpu] of batch.output.matchAll(
    /^# agt batch: (.+) seconds ([\d.]+)(?: cpu ([\d.]+))?$/gm,
  ))
    measured.set(name, { seconds: Number(seconds), cpu: cpu === undefined ? null : Number(cpu) });
  const own = item.map((file) => measured.get(relative(ROOT, file)) ?? { seconds: 0, cpu: 0 });
  const rest = (field) => {
    const known = own.reduce(
      (sum, figures) => (sum === null || figures[field] === null ? null : sum + figures[field]),
      0,
    );
    return batch[field] === null || known === null ? null : Math.max(0, batch[field] - known) / item.length;
  };
  const restSeconds = rest('seconds');
  const restCpu = rest('cpu');
  return new Map(
    item.map((file, i) => [
      file,
      {
        seconds: own[i].seconds + (restSeconds ?? 0),
        cpu: restCpu === null ? null : own[i].cpu + restCpu,
      },
    ]),
  );
}

const results = [];
let running = 0;
/** Runs the queue's next items until it is empty; `once`: one item. */
async function worker(once = false) {
  for (let item = queue.shift(); item; item = once ? undefined : queue.shift()) {
    running += 1;
    await runItem(item).finally(() => (running -= 1));
  }
}

/** Runs a file alone or a batch, reports it and records its results. */
async function runItem(item) {
  if (item.length === 1) {
    await runOne(item[0]);
    return;
  }
  const batch = await runBatch(item);
  const names = item.map((file) => relative(out, file).replace(/\.js$/, '.ts'));
  const cpu = batch.cpu === null ? '' : ` (cpu ${batch.cpu.toFixed(1)} s)`;
  const suspects = batch.code === 0 ? [] : failedInBatch(item, batch.output);
  const figures = figuresInBatch(item, batch);
  for (const file of item)
    if (!suspects.includes(file))
      results.push({ name: relative(out, file), code: 0, output: '', ...figures.get(file) });
  if (batch.code === 0) {
    const each = item.map((file, i) => {
      const { cpu: spent } = figures.get(file);
      return spent === null ? names[i] : `${names[i]} (cpu ${spent.toFixed(1)} s)`;
    });
    process.stdout.write(
      `ok   ${batch.seconds.toFixed(1).padStart(6)} s${cpu}  ${each.join(' + ')}${skipsOf(batch.output)}\n`,
    );
    return;
  }
  const suspectNames = suspects.map((file) => relative(out, file).replace(/\.js$/, '.ts'));
  process.stdout.write(
    `     ${batch.seconds.toFixed(1).padStart(6)} s${cpu}  ${names.join(' + ')}: failed together; ${suspects.length ? `alone: ${suspectNames.join(', ')}` : 'no file failed in it'}\n`,
  );
  const alone = [];
  for (const file of suspects) alone.push(await runOne(file, figures.get(file).cpu));
  if (alone.every((result) => result.code === 0)) {
    results.push({
      name: `${names.join(' + ')} (together)`,
      code: 1,
      output: batch.output,
      seconds: batch.seconds,
      cpu: batch.cpu === null ? null : 0, // counted in the files' figures and their runs alone
    });
    process.stdout.write(
      `FAIL ${batch.seconds.toFixed(1).padStart(6)} s${cpu}  ${names.join(' + ')}: failed together, every file passed alone (files that disturb each other, or a flaky test):\n${batch.output.replace(/^/gm, '    ')}\n`,
    );
  }
}

/** The reasons of skipped tests in a run's output, as the report line's suffix ('' when none). */
function skipsOf(output) {
  const reasons = [
    ...new Set([...output.matchAll(/# SKIP\b:? ?(.*)/g)].map((match) => match[1].trim()).filter(Boolean)),
  ];
  return reasons.length ? `  (skipped: ${reasons.slice(0, 2).join('; ')})` : '';
}

/** Runs one file alone, reports it and records its result (`spent`: its share of a failed batch's CPU). */
async function runOne(file, spent = 0) {
  const name = relative(out, file);
  let result = await runFile(file, namesTypeScriptBesideItself(file));
  let note = '';
  if (result.code !== 0 && TS_IMPORT.test(result.output)) {
    result = await runFile(file, true);
    note =
      ' (imports a .ts file by path: run again with the TypeScript hooks; use importFile() of test/helpers/daemon.ts)';
  }
  if (result.code !== 0 && result.seconds < 60) {
    // The failure stands; the second run only shows where, in the sources (or that it did not fail again).
    // Not for a file that ran long (a timeout): a failing suite should not take twice its time.
    const again = await runFile(file, namesTypeScriptBesideItself(file) || note !== '', true);
    result.output =
      again.code === 0
        ? `${result.output}\n# agt test runner: passed when run again (with source maps); the failure above stands\n`
        : `${again.output}\n# agt test runner: the output of a second run, with source maps (the first failed too)\n`;
    result.cpu = result.cpu === null || again.cpu === null ? null : result.cpu + again.cpu;
  }
  const skips = skipsOf(result.output);
  if (result.cpu !== null && spent !== null) result.cpu += spent;
  results.push({ name, ...result });
  const status = result.code === 0 ? 'ok  ' : 'FAIL';
  const cpu = result.cpu === null ? '' : ` (cpu ${result.cpu.toFixed(1)} s)`;
  process.stdout.write(
    `${status} ${result.seconds.toFixed(1).padStart(6)} s${cpu}  ${name.replace(/\.js$/, '.ts')}${note}${skips}\n`,
  );
  if (result.code !== 0) process.stdout.write(`${result.output.replace(/^/gm, '    ')}\n`);
  return result;
}

/**
 * The machine's idle CPU, in cores, since the previous call (/proc/stat: idle and I/O wait over all the time
 * counted); null where there is no /proc.
 */
let lastStat;
function idleCores() {
  try {
    const ticks = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1, 9).map(Number);
    const [total, idle] = [ticks.reduce((sum, n) => sum + n, 0), ticks[3] + ticks[4]];
    const previous = lastStat;
    lastStat = { total, idle };
    if (!previous || total === previous.total) return null;
    return (availableParallelism() * (idle - previous.idle)) / (total - previous.total);
  } catch {
    return null;
  }
}

/**
 * Fills idle cores: a file waits part of its time (on a TTL, a browser, an engine, a daemon's start), and when
 * several wait at once the cores go idle. Each second with at least half a core idle for the second time in a
 * row, one more item (the longest left) starts, up to `maxJobs` at once. It reads the whole machine, so on a
 * machine busy with other work it starts none.
 */
const workers = Array.from({ length: Math.min(jobs, queue.length) }, () => worker());
let idleTicks = 0;
let extraStarts = 0;
idleCores();
const filler = setInterval(() => {
  const idle = idleCores();
  idleTicks = idle !== null && idle >= 0.5 ? idleTicks + 1 : 0;
  if (idleTicks < 2 || queue.length === 0 || running >= maxJobs) return;
  idleTicks = 0;
  extraStarts += 1;
  workers.push(worker(true));
}, 1000);
for (let settled = 0; settled < workers.length; ) {
  const waiting = workers.length;
  await Promise.all(workers);
  settled = waiting;
}
clearInterval(filler);

for (const { name, seconds } of results) if (!name.endsWith('(together)')) times[name] = Math.round(seconds * 10) / 10;
writeFileSync(TIMES_FILE, `${JSON.stringify(times, null, 1)}\n`);
if (flag('--save-durations') && named.length === 0 && !quick) {
  const durations = Object.fromEntries(
    files.map((file) => [sourceName(file), times[relative(out, file)]]).sort(([a], [b]) => (a < b ? -1 : 1)),
  );
  writeFileSync(DURATIONS_FILE, `${JSON.stringify(durations, null, 2)}\n`);
}

const failed = results.filter((result) => result.code !== 0);
const wall = ((Date.now() - started) / 1000).toFixed(1);
process.stdout.write(
  `\n${results.length - failed.length} of ${results.length} test files passed in ${wall} s (${jobs} at a time${extraStarts ? `, ${extraStarts} more started on idle cores, up to ${maxJobs}` : ''})${failed.length ? `; failed: ${failed.map((result) => result.name.replace(/\.js$/, '.ts')).join(', ')}` : ''}\n`,
);
const slowest = [...results].sort((a, b) => b.seconds - a.seconds).slice(0, 5);
process.stdout.write(
  `slowest: ${slowest.map((result) => `${result.name.replace(/\.js$/, '.ts')} ${result.seconds.toFixed(1)} s`).join(', ')}\n`,
);
if (results.every((result) => result.cpu !== null)) {
  const cpuTotal = results.reduce((sum, result) => sum + result.cpu, 0);
  const costliest = [...results].sort((a, b) => b.cpu - a.cpu).slice(0, 5);
  process.stdout.write(
    `cpu: ${cpuTotal.toFixed(0)} s for the files; most: ${costliest.map((result) => `${result.name.replace(/\.js$/, '.ts')} ${result.cpu.toFixed(1)} s`).join(', ')}\n`,
  );
}

let code = failed.length ? 1 : 0;
// Every test cleans up its processes: one left running (killed now) fails the run, named.
const leftover = await leftSince(ROOT, orphansBefore);
if (leftover.length > 0) {
  code = 1;
  process.stdout.write(
    `processes left running by the tests (killed): ${leftover.map(([pid, command]) => `${pid} ${command.slice(0, 200)}`).join('; ')}\n`,
  );
}
if (checks) {
  const checkedOwn = await typecheck;
  const checkedUi = await typecheckUi;
  const checked = {
    code: checkedOwn.code || checkedUi.code,
    seconds: checkedOwn.seconds,
    cpu: checkedOwn.cpu === null ? null : checkedOwn.cpu + checkedUi.cpu,
    output: checkedOwn.output + checkedUi.output,
  };
  const cruised = await boundaries;
  if (checked.code === 0)
    process.stdout.write(
      `type-check: no errors (${checked.seconds} s${checked.cpu === null ? '' : `, cpu ${checked.cpu.toFixed(1)} s`}, beside the suite)\n`,
    );
  else process.stdout.write(`type-check failed (${checked.seconds} s):\n${checked.output}\n`);
  if (cruised.code === 0)
    process.stdout.write(
      `import boundaries: no violations (${cruised.seconds} s${cruised.cpu === null ? '' : `, cpu ${cruised.cpu.toFixed(1)} s`}, beside the suite)\n`,
    );
  else
    process.stdout.write(
      `import boundaries violated (${cruised.seconds} s, .dependency-cruiser.cjs):\n${cruised.output}\n`,
    );
  const reported = await apiReport;
  if (reported.code === 0)
    process.stdout.write(
      `api report: ${reported.output.trim().replace(/^api report: /, '')} (${reported.seconds} s, beside the suite)\n`,
    );
  else
    process.stdout.write(
      `api report of @agt/contracts differs (${reported.seconds} s, scripts/api-report.mjs):\n${reported.output}\n`,
    );
  const linted = await formatLint;
  if (linted.code === 0) process.stdout.write(`format and lint: clean (${linted.seconds} s, beside the suite)\n`);
  else
    process.stdout.write(
      `format or lint failed (${linted.seconds} s; \`npm run format\` rewrites the format):\n${linted.output}\n`,
    );
  code ||= checked.code || cruised.code || reported.code || linted.code;
}
process.exit(code);
