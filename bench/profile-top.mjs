// Self time of a .cpuprofile by function, by package and by source file:
// `node bench/profile-top.mjs <file> [rows=25] [--from=<µs> --to=<µs>]`.
// - `--from`/`--to` keep only the samples taken in that window of the monotonic clock (`process.hrtime`
//   µs, the profile's own clock; e.g. the measured phase bench/turn-rate.ts prints), so a daemon's start
//   does not dilute the shares.
// - `--windows=<file.json>` (an array of [from, to] pairs, e.g. what bench/open-large.ts writes) keeps the
//   samples inside any of them; `--skip=n` leaves out the first n windows (a process's first uses).
// - Frames of a bundled build (dist/) are mapped back to their source file through the build's `.map`,
//   so "by source" splits the one-file daemon bundle into kernel/runtime/..., kernel/events/... .
// - "by owner" charges each sample to the nearest frame (leaf upwards) in a source file or package, so
//   Node's own internals (streams, sockets, undici) count for whoever called them.
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';
const argv = process.argv.slice(2);
const opt = (name) => Number(argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3));
const [path, rows] = argv.filter((a) => !a.startsWith('--'));
const from = opt('from'),
  to = opt('to');
const windowsPath = argv.find((a) => a.startsWith('--windows='))?.slice(10);
const windows = windowsPath ? JSON.parse(readFileSync(windowsPath, 'utf8')).slice(opt('skip') || 0) : null;
const outside = (at) => (windows ? !windows.some(([f, t]) => at >= f && at <= t) : at < from || at > to);
const p = JSON.parse(readFileSync(path, 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const dt = p.timeDeltas;
let total = 0;
const counts = new Map();
let at = p.startTime;
for (let i = 0; i < p.samples.length; i++) {
  at += dt[i] ?? 0;
  if (outside(at)) continue;
  counts.set(p.samples[i], (counts.get(p.samples[i]) ?? 0) + (dt[i] ?? 0));
}
const maps = new Map();
function sourceOf(cf) {
  if (!cf.url.includes('/dist/')) return null;
  if (!maps.has(cf.url)) {
    const file = cf.url.startsWith('file:') ? fileURLToPath(cf.url) : cf.url;
    maps.set(cf.url, existsSync(`${file}.map`) ? new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8'))) : null);
  }
  const entry = maps.get(cf.url)?.findEntry(cf.lineNumber, cf.columnNumber);
  return entry?.originalSource
    ? entry.originalSource.replace(/^(\.\.\/)+/, '').replace(/^node_modules\/((@[^/]+\/)?[^/]+).*/, '$1')
    : null;
}
const parent = new Map();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const ownerOf = (id) => {
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
    const cf = byId.get(cur).callFrame;
    if (!cf.url || cf.url.startsWith('node:')) continue;
    return (
      sourceOf(cf) ?? cf.url.replace(/.*\/node_modules\/((@[^/]+\/)?[^/]+).*/, '$1').replace(/.*\/dist\//, 'dist/')
    );
  }
  return byId.get(id).callFrame.functionName || byId.get(id).callFrame.url;
};
const agg = new Map();
const file = new Map();
const source = new Map();
const owner = new Map();
for (const [id, t] of counts) {
  const n = byId.get(id);
  const cf = n.callFrame;
  const key = `${cf.functionName || '(anon)'} ${cf.url.replace(/.*\/(node_modules|dist|kernel)\//, '$1/')}:${cf.lineNumber}`;
  agg.set(key, (agg.get(key) ?? 0) + t);
  total += t;
  const f = cf.url
    ? cf.url.replace(/.*\/node_modules\/((@[^/]+\/)?[^/]+).*/, '$1').replace(/.*\/dist\//, 'dist/')
    : cf.functionName;
  file.set(f, (file.get(f) ?? 0) + t);
  const s = sourceOf(cf) ?? f;
  source.set(s, (source.get(s) ?? 0) + t);
  const o = ownerOf(id);
  owner.set(o, (owner.get(o) ?? 0) + t);
}
const top = (m, k) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, k)
    .map(([n, t]) => `${((100 * t) / total).toFixed(1).padStart(5)}% ${n}`)
    .join('\n');
console.log(
  `total ${(total / 1000).toFixed(0)} ms\n-- self by function\n${top(agg, +(rows ?? 25))}\n-- self by file\n${top(file, 15)}\n-- self by source (dist mapped through its .map)\n${top(source, +(rows ?? 25))}\n-- by owner (nearest source file or package frame)\n${top(owner, +(rows ?? 25))}`,
);
