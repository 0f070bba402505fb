// V8 settings of the daemon process, imported first by bin/agtd.mjs (and preloaded by the benches that
// run the build's entry directly: `node --import ./bin/v8-flags.mjs dist/kernel/main.js`).
//
// The young generation stays at its initial size (1 MB semi-spaces): by default V8 doubles it up to
// 16 MB semi-spaces as soon as start-up or a burst of requests allocates fast, and both halves stay
// committed afterwards. Measured (bench/agents-scale.ts, same build and minutes): new space
// 15.8 / 24 / 30 MB at 0 / 10 / 100 idle agents against 2 MB; RSS at 0 / 10 / 100 / 1,000 agents
// 95 / 105 / 140 / 300 MB without, 75 / 85 / 108 / 263 MB with; CPU per create and per request the same
// within the noise of a shared machine. The flag is read at each growth, so setting it once the heap
// exists works (`--max-semi-space-size` works only on the command line). Scavenges of 1 MB are then
// frequent and small: run on the main thread alone (`--no-parallel-scavenge`, also read per scavenge),
// they cost less than handing each one to worker threads (cold start CPU to the first 200: +20-40 ms
// against +20-190 ms with parallel scavenges, 530-610 ms without the setting, load 19). A Node whose V8
// ignores these runs as before.
import v8 from 'node:v8';

v8.setFlagsFromString('--semi-space-growth-factor=1');
v8.setFlagsFromString('--no-parallel-scavenge');
