// A performance trick: V8 settings of the daemon process, imported first by bin/agtd.mjs (and preloaded by
// the benches that run the build's entry directly: `node --import ./bin/v8-flags.mjs dist/kernel/main.js`).
//
// The young generation stays at its initial size (1 MB semi-spaces): by default V8 doubles it up to
// 16 MB semi-spaces as soon as start-up or a burst of requests allocates fast, and both halves stay
// committed afterwards. The flag is read at each growth, so setting it once the heap exists works
// (`--max-semi-space-size` works only on the command line). Scavenges of 1 MB are then frequent and
// small: run on the main thread alone (`--no-parallel-scavenge`, also read per scavenge), they cost less
// than handing each one to worker threads. A Node whose V8 ignores these runs as before.
//
// What it buys: the daemon's RSS at 0 / 10 / 100 idle agents 73 / 86 / 113 MB against 85 / 99 / 146 MB
// without (bench/agents-scale.ts, three pairs alternating with `--no-v8-flags`, medians); CPU per create,
// per `/health` and `/status` request and to the first 200 the same within the noise (docs/performance.md,
// "Tricks kept and removed"). What it costs: a process that keeps ~1 MB of young objects alive while it
// allocates fast scavenges far more often (a synthetic loop: 3.5 times the CPU).
// How it is tested: test/v8-flags.test.ts (new space stays at 2 MB under an allocation that grows it to
// 8 MB without the flags).
// How to remove it: delete this file, its import in bin/agtd.mjs, test/v8-flags.test.ts, and the
// `--v8-flags` / `--no-v8-flags` options of the benches that preload it (bench/*.ts).
import v8 from 'node:v8';

v8.setFlagsFromString('--semi-space-growth-factor=1');
v8.setFlagsFromString('--no-parallel-scavenge');
