#!/usr/bin/env node
/**
 * `npm test`: builds dist/ (the daemons the suite spawns run it), then runs two checks beside the tap
 * suite instead of before it, at a lower CPU priority so they cost the suite little: the type-check (tsc,
 * incremental, its state in node_modules/.cache/agt/, ~15-20 s) and the import boundaries
 * (dependency-cruiser with .dependency-cruiser.cjs, ~3 s: extensions import only `@agt/contracts`, the
 * contracts import neither kernel nor extensions, no import circles). Their findings are printed after
 * the suite; the command fails when any of the three fails.
 *
 * Arguments go to tap (`npm test -- test/health.test.ts`).
 */
import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runBuild } from './build.mjs';

const ROOT = join(fileURLToPath(new URL('.', import.meta.url)), '..');
const bin = (name) => join(ROOT, 'node_modules/.bin', name);
const exitCode = (child) => new Promise((done) => child.once('close', (code, signal) => done(code ?? (signal ? 1 : 0))));

await runBuild({ quiet: true });

/** Runs a check beside the suite at a lower priority; resolves to its exit code, output and time. */
function besideTheSuite(command, args) {
  const started = Date.now();
  const child = spawn(bin(command), args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    setPriority(child.pid, 10);
  } catch {
    // Not permitted here: it runs at normal priority.
  }
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  return exitCode(child).then((code) => ({ code, output, seconds: ((Date.now() - started) / 1000).toFixed(1) }));
}

const typecheck = besideTheSuite('tsc', ['-p', 'tsconfig.json', '--noEmit', '--pretty', 'false', '--incremental', '--tsBuildInfoFile', 'node_modules/.cache/agt/typecheck.tsbuildinfo']);
const boundaries = besideTheSuite('depcruise', ['--config', '.dependency-cruiser.cjs', '--output-type', 'err', '.']);

const tap = spawn(bin('tap'), process.argv.slice(2), { cwd: ROOT, stdio: 'inherit' });
const tapCode = await exitCode(tap);
const checked = await typecheck;
const cruised = await boundaries;

if (checked.code === 0) process.stdout.write(`type-check: no errors (${checked.seconds} s, beside the suite)\n`);
else process.stdout.write(`type-check failed (${checked.seconds} s):\n${checked.output}\n`);
if (cruised.code === 0) process.stdout.write(`import boundaries: no violations (${cruised.seconds} s, beside the suite)\n`);
else process.stdout.write(`import boundaries violated (${cruised.seconds} s, .dependency-cruiser.cjs):\n${cruised.output}\n`);
process.exit(tapCode !== 0 ? tapCode : checked.code !== 0 ? checked.code : cruised.code);
