// V8 settings of the daemon process, imported first by bin/agtd.mjs (and preloaded by the benches that
// run the build's entry directly: `node --import ./bin/v8-flags.mjs dist/kernel/main.js`).
//
// The young generation stays at its initial size (1 MB semi-spaces): by default V8 doubles it up to
// 16 MB semi-spaces as soon as start-up or a burst of requests allocates fast, and both halves stay
// committed afterwards. Measured (issue 31, bench/agents-scale.ts, same build and minutes): new space
// 15.8 / 24 / 30 MB at 0 / 10 / 100 idle agents against 2 MB, RSS 94 / 110 / 146 against 83 / 89 /
// 111 MB, with no measurable cost per request or per create (the daemon's objects are short-lived or
// live for good; a scavenge of 1 MB with few survivors takes well under a millisecond). The flag is
// read at each growth, so setting it after the heap exists works; `--max-semi-space-size` would only
// work on the command line. A Node whose V8 ignores it runs as before.
import v8 from 'node:v8';

v8.setFlagsFromString('--semi-space-growth-factor=1');
