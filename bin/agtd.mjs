#!/usr/bin/env node
// The `agtd` command. It runs the build in dist/ (`npm run build`, which `npm install` and `npm ci` run
// through `prepare`): plain JavaScript, no transpiler; the daemon's one script, dist/agtd.cjs, with V8's
// code cache (./daemon-bundle.mjs). When there is no build, or a source file is newer
// than it (sources edited or checked out since), it runs the TypeScript sources through tsx instead, so
// what runs is never older than what is on disk. From the sources, imports of `@agt/contracts` take the
// package's `agt-source` condition (its TypeScript files, the ones the kernel imports), as under `npm test`.
import './v8-flags.mjs';
import { enableCompileCache } from './compile-cache.mjs';
import { runDaemonBundle } from './daemon-bundle.mjs';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { register as registerHooks } from 'node:module';
import { join, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');

/**
 * Whether a file under `dir` was modified after `since` (node_modules, dot folders and links such as
 * contracts/dist skipped); stops at the first. Plain string paths: `path.join` per entry was half of
 * this walk's ~10 ms, which every start pays.
 */
function changedSince(dir, since) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return false;
  }
  for (const entry of entries) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.') || entry.isSymbolicLink()) continue;
    const path = `${dir}${sep}${entry.name}`;
    if (entry.isDirectory() ? changedSince(path, since) : statSync(path).mtimeMs > since) return true;
  }
  return false;
}

/** The build's entry module when the build is current, otherwise why not. */
function currentBuild() {
  const marker = join(dist, '.agt-build.json');
  if (!existsSync(marker)) return { why: 'there is no build in dist/' };
  let info;
  try {
    info = JSON.parse(readFileSync(marker, 'utf8'));
  } catch {
    return { why: 'dist/.agt-build.json is unreadable' };
  }
  const sources = info.sources.map((dir) => join(root, dir));
  if (sources.some((dir) => changedSince(dir, info.builtAt)))
    return { why: 'sources changed since the build in dist/' };
  return { main: join(dist, info.main), bundle: info.bundle && join(dist, info.bundle) };
}

const build = currentBuild();
if (build.main) {
  enableCompileCache();
  // `--help` and `--version` print from the command's own small module (kernel/main.ts), not the whole daemon.
  const printsOnly = process.argv.slice(2).some((arg) => ['-h', '--help', '-v', '--version'].includes(arg));
  if (build.bundle && !printsOnly) await runDaemonBundle(build.bundle);
  else await import(pathToFileURL(build.main).href);
} else {
  process.stderr.write(
    `agtd: ${build.why}; running the TypeScript sources through tsx (npm run build makes start-up faster)\n`,
  );
  const { register } = await import('tsx/esm/api');
  register();
  const SOURCE_CONDITION = `export async function resolve(specifier, context, next) {
    return next(specifier, context.conditions.includes('agt-source') ? context : { ...context, conditions: [...context.conditions, 'agt-source'] });
  }`;
  registerHooks(`data:text/javascript,${encodeURIComponent(SOURCE_CONDITION)}`);
  await import('../kernel/main.ts');
}
