// Runs a build's one-script daemon (`<build>/agtd.cjs`) as bin/agtd.mjs does, for the benches that start a
// build folder directly (a copy of dist/ for an A/B): `node [--import bin/v8-flags.mjs] bench/run-bundle.mjs <build>`.
import { join, resolve } from 'node:path';
import { readFileSync } from 'node:fs';
import { runDaemonBundle } from '../bin/daemon-bundle.mjs';

// The build folder is this script's argument, not the daemon's.
const build = resolve(process.argv.splice(2, 1)[0] ?? 'dist');
const info = JSON.parse(readFileSync(join(build, '.agt-build.json'), 'utf8'));
await runDaemonBundle(join(build, info.bundle));
