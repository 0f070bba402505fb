#!/usr/bin/env node
/**
 * The API report of `@agt/contracts` (contracts/api/*.api.md): every name the package's two entry points
 * export, with its signature and its stability (`// @public`: stable, `// @beta`: experimental;
 * docs/extensions.md "Stability"). Made by Microsoft API Extractor from the declarations TypeScript 7 emits
 * for the package into .cache/agt/contracts-api/ (~5 s of CPU; skipped when the package did not change); the
 * report files are its output as is. A `// Warning:` line in a report is API Extractor's remark on the API
 * (a stable member whose type is experimental, ...), kept so that a change to it shows in review.
 *
 * - `node scripts/api-report.mjs` (npm test runs it beside the suite): fails when the package's API is not
 *   the committed report, naming the stable names removed or changed. Skipped when nothing it reads
 *   changed since its last pass (a hash in .cache/agt/).
 * - `npm run api-report` (`--update`): writes the report; refuses while a stable name is removed or changed
 *   and the newest section of contracts/CHANGELOG.md does not name it (`` `Name` ``). Additions need no entry.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const CONTRACTS = join(ROOT, 'contracts');
const REPORTS = join(CONTRACTS, 'api');
const WORK = join(ROOT, '.cache/agt/contracts-api');
const STAMP = join(ROOT, '.cache/agt/api-report.hash');
const ENTRIES = [
  { source: 'index.ts', report: 'contracts', messages: {} },
  // Its signatures name types of the main entry point (`ExtensionDefinition`, ...), which that report lists.
  {
    source: 'testing/index.ts',
    report: 'contracts-testing',
    messages: { 'ae-forgotten-export': { logLevel: 'none', addToApiReportFile: false } },
  },
];
const update = process.argv.includes('--update');

function walk(dir, found = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'dist' || entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path, found);
    else found.push(path);
  }
  return found;
}

/**
 * What the report depends on: the package's files (sources, report, CHANGELOG), this script, API Extractor's version.
 */
function inputsHash() {
  const hash = createHash('sha256');
  const extractor = JSON.parse(
    readFileSync(join(ROOT, 'node_modules/@microsoft/api-extractor/package.json'), 'utf8'),
  ).version;
  hash.update(`${extractor}\0${readFileSync(fileURLToPath(import.meta.url))}\0`);
  for (const file of walk(CONTRACTS).sort())
    hash
      .update(`${relative(ROOT, file)}\0`)
      .update(readFileSync(file))
      .update('\0');
  return hash.digest('hex');
}

/** The package's declarations (`.d.ts`), emitted by TypeScript 7 (native: ~0.5 s) into WORK/dts. */
function emitDeclarations() {
  rmSync(join(WORK, 'dts'), { recursive: true, force: true });
  const tsc = join(ROOT, 'node_modules/typescript-7/bin/tsc');
  const args = [
    ...ENTRIES.map((entry) => join(CONTRACTS, entry.source)),
    '--declaration',
    '--emitDeclarationOnly',
    '--outDir',
    join(WORK, 'dts'),
    '--rootDir',
    CONTRACTS,
    '--target',
    'ES2022',
    '--module',
    'NodeNext',
    '--moduleResolution',
    'NodeNext',
    '--strict',
    '--skipLibCheck',
    '--resolveJsonModule',
    '--types',
    'node',
    '--customConditions',
    'agt-source',
    '--pretty',
    'false',
    '--ignoreConfig',
    // Beside the suite (npm test): one thread does it with less CPU than parallel checkers (scripts/test.mjs).
    '--singleThreaded',
  ];
  const run = spawnSync(process.execPath, [tsc, ...args], { cwd: ROOT, encoding: 'utf8' });
  // A type error still emits (the type-check reports it); only declarations missing stop the report.
  const missing = ENTRIES.filter((entry) => !existsSync(join(WORK, 'dts', entry.source.replace(/\.ts$/, '.d.ts'))));
  if (run.error || missing.length > 0)
    throw new Error(`declarations of contracts/ did not emit:\n${run.error ?? ''}${run.stdout}${run.stderr}`);
}

/** Runs API Extractor on one entry point; the report lands in WORK/report. Returns its error messages. */
function extract({ Extractor, ExtractorConfig, ExtractorLogLevel }, { source, report, messages }) {
  const configObject = {
    projectFolder: CONTRACTS,
    newlineKind: 'lf',
    mainEntryPointFilePath: join(WORK, 'dts', source.replace(/\.ts$/, '.d.ts')),
    compiler: {
      overrideTsconfig: {
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          skipLibCheck: true,
          typeRoots: [join(ROOT, 'node_modules/@types')],
          types: ['node'],
          customConditions: ['agt-source'],
        },
        files: [join(WORK, 'dts', source.replace(/\.ts$/, '.d.ts'))],
      },
    },
    apiReport: {
      enabled: true,
      reportFileName: report,
      reportFolder: join(WORK, 'report'),
      reportTempFolder: join(WORK, 'report-temp'),
    },
    docModel: { enabled: false },
    dtsRollup: { enabled: false },
    tsdocMetadata: { enabled: false },
    messages: {
      compilerMessageReporting: { default: { logLevel: 'error' } },
      extractorMessageReporting: {
        default: { logLevel: 'warning', addToApiReportFile: true },
        // Every exported name carries its tier: an untagged one fails the check.
        'ae-missing-release-tag': { logLevel: 'error', addToApiReportFile: false },
        // `{@link name}` in prose that TSDoc cannot resolve (a member, an overload): editors follow it all the same.
        'ae-unresolved-link': { logLevel: 'none', addToApiReportFile: false },
        // Members without a doc comment show as `// (undocumented)` beside them already; the list of them
        // at the end would name this machine's paths and lines.
        'ae-undocumented': { logLevel: 'none', addToApiReportFile: false },
        ...messages,
      },
      tsdocMessageReporting: { default: { logLevel: 'none' } },
    },
  };
  const config = ExtractorConfig.prepare({
    configObject,
    configObjectFullPath: undefined,
    packageJsonFullPath: join(CONTRACTS, 'package.json'),
  });
  const errors = [];
  Extractor.invoke(config, {
    localBuild: true,
    messageCallback: (message) => {
      if (message.logLevel === ExtractorLogLevel.Error) errors.push(message.formatMessageWithLocation(WORK));
      message.handled = true;
    },
  });
  return errors;
}

/**
 * The report's declarations by name: each entry of the `ts` block (entries are separated by a blank line and
 * start with their tag comment), overloads and a value with its type of the same name joined.
 */
function declarations(text) {
  const body = text.replaceAll('\r\n', '\n').split('```ts\n')[1]?.split('\n```')[0] ?? '';
  const byName = new Map();
  for (const entry of body.split(/\n\n+/)) {
    const name = entry.match(
      /^export (?:declare )?(?:abstract )?(?:class|interface|type|const|let|var|function|enum|namespace) ([\w$]+)/m,
    )?.[1];
    if (!name) continue;
    const tag = entry.match(/^\/\/ @(public|beta|alpha|internal)\b/m)?.[1] ?? 'public';
    const known = byName.get(name);
    byName.set(name, {
      tag: known?.tag === 'public' ? 'public' : tag,
      text: `${known ? `${known.text}\n\n` : ''}${entry}`,
    });
  }
  return byName;
}

/** Whether every line of `before` is still in `after`, in order: only lines were added (a new member). */
function onlyAdded(before, after) {
  const lines = after.split('\n');
  let at = 0;
  for (const line of before.split('\n')) {
    while (at < lines.length && lines[at] !== line) at++;
    if (at === lines.length) return false;
    at++;
  }
  return true;
}

/**
 * Stable names of `before` that `after` no longer has, or has with another signature or tier. A stable
 * declaration that only gained lines (a member, an overload) is an addition, which a minor version may make.
 */
function stableChanges(before, after) {
  const old = declarations(before);
  const now = declarations(after);
  return [...old]
    .filter(([name, entry]) => entry.tag === 'public' && !(now.has(name) && onlyAdded(entry.text, now.get(name).text)))
    .map(([name]) => `${name} (${now.has(name) ? 'changed' : 'removed'})`);
}

/** The newest section of contracts/CHANGELOG.md (from the first `## ` to the next). */
function newestChangelogSection() {
  const text = readFileSync(join(CONTRACTS, 'CHANGELOG.md'), 'utf8');
  return text.split(/^## /m)[1] ?? '';
}

const hash = inputsHash();
if (!update && existsSync(STAMP) && readFileSync(STAMP, 'utf8') === hash) {
  process.stdout.write('api report: unchanged since its last check\n');
  process.exit(0);
}
// Imported only now: it loads TypeScript (~1 s), which the unchanged case above does without.
const extractor = await import('@microsoft/api-extractor');
mkdirSync(WORK, { recursive: true });
emitDeclarations();
rmSync(join(WORK, 'report'), { recursive: true, force: true });
mkdirSync(join(WORK, 'report'), { recursive: true });
const problems = [];
for (const entry of ENTRIES) {
  const errors = extract(extractor, entry);
  if (errors.length > 0) {
    problems.push(`API Extractor (${entry.source}):\n  ${errors.join('\n  ')}`);
    continue;
  }
  const file = `${entry.report}.api.md`;
  const made = readFileSync(join(WORK, 'report', file), 'utf8');
  const committed = existsSync(join(REPORTS, file)) ? readFileSync(join(REPORTS, file), 'utf8') : '';
  if (made === committed) continue;
  const changed = stableChanges(committed, made);
  if (update) {
    const section = newestChangelogSection();
    const unlisted = changed.filter((change) => !section.includes(`\`${change.split(' ')[0]}\``));
    if (unlisted.length > 0) {
      problems.push(
        `contracts/api/${file}: stable names removed or changed that the newest section of contracts/CHANGELOG.md does not name: ${unlisted.join(', ')}`,
      );
      continue;
    }
    mkdirSync(REPORTS, { recursive: true });
    cpSync(join(WORK, 'report', file), join(REPORTS, file));
    process.stdout.write(`api report: wrote contracts/api/${file}\n`);
  } else {
    problems.push(
      `contracts/api/${file} is not the package's API (${join(WORK, 'report', file)} is)` +
        (changed.length > 0
          ? `; stable names removed or changed: ${changed.join(', ')} (a major version: say so in contracts/CHANGELOG.md)`
          : '') +
        '; run `npm run api-report` to write it',
    );
  }
}
if (problems.length > 0) {
  process.stderr.write(`${problems.join('\n')}\n`);
  process.exit(1);
}
if (!update) writeFileSync(STAMP, hash);
else writeFileSync(STAMP, inputsHash());
process.stdout.write("api report: the package's API is the committed report\n");
