#!/usr/bin/env node
/**
 * `npm test`: builds dist/ (the daemons the suite spawns run it), then runs the type-check beside the tap
 * suite instead of before it: tsc (incremental, its state in node_modules/.cache/agt/) at a lower CPU
 * priority, so it costs the suite little and no longer delays it by its ~15-20 s. The type errors are
 * printed after the suite; the command fails when either fails.
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

const started = Date.now();
const tsc = spawn(bin('tsc'), ['-p', 'tsconfig.json', '--noEmit', '--pretty', 'false', '--incremental', '--tsBuildInfoFile', 'node_modules/.cache/agt/typecheck.tsbuildinfo'], {
  cwd: ROOT,
  stdio: ['ignore', 'pipe', 'pipe'],
});
try {
  setPriority(tsc.pid, 10);
} catch {
  // Not permitted here: it runs at normal priority.
}
let typeErrors = '';
tsc.stdout.on('data', (chunk) => (typeErrors += chunk));
tsc.stderr.on('data', (chunk) => (typeErrors += chunk));
const typecheck = exitCode(tsc).then((code) => ({ code, seconds: (Date.now() - started) / 1000 }));

const tap = spawn(bin('tap'), process.argv.slice(2), { cwd: ROOT, stdio: 'inherit' });
const tapCode = await exitCode(tap);
const checked = await typecheck;

if (checked.code === 0) process.stdout.write(`type-check: no errors (${checked.seconds.toFixed(1)} s, beside the suite)\n`);
else process.stdout.write(`type-check failed (${checked.seconds.toFixed(1)} s):\n${typeErrors}\n`);
process.exit(tapCode !== 0 ? tapCode : checked.code);
