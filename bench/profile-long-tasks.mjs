// The longest stretches without a return to the event loop in a .cpuprofile: runs of consecutive samples
// that are not `(idle)`, with the functions that took most of each run (self time) and, for each of
// those, the nearest frame of the project or a package above it. What holds up `/health` during a folder
// walk, say. `node bench/profile-long-tasks.mjs <file.cpuprofile> [runs=8] [--from=ms] [--to=ms]`.
// On a loaded machine a run may include time the process was descheduled: read the functions, not only
// the length.
import { readFileSync } from 'node:fs';

const [path, count = '8'] = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
const option = (name) => Number(process.argv.find((arg) => arg.startsWith(`--${name}=`))?.split('=')[1]);
const from = option('from') || 0;
const to = option('to') || Infinity;
const profile = JSON.parse(readFileSync(path, 'utf8'));
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
const name = (id) => {
  const { functionName, url, lineNumber } = byId.get(id).callFrame;
  return `${functionName || '(anon)'} ${url.replace(/.*\/(node_modules|dist|kernel|extensions)\//, '$1/')}:${lineNumber}`;
};
/** The nearest caller that is project or package code (not node: internals). */
const owner = (id) => {
  for (let at = parent.get(id); at !== undefined; at = parent.get(at)) {
    const { url } = byId.get(at).callFrame;
    if (url && !url.startsWith('node:')) return name(at);
  }
  return '';
};

const runs = [];
let run = null;
let at = 0;
profile.samples.forEach((id, i) => {
  const delta = (profile.timeDeltas[i] ?? 0) / 1000;
  at += delta;
  const idle = byId.get(id).callFrame.functionName === '(idle)';
  if (idle || at < from || at > to) {
    if (run) runs.push(run);
    run = null;
    return;
  }
  run ??= { start: at - delta, ms: 0, self: new Map() };
  run.ms += delta;
  run.self.set(id, (run.self.get(id) ?? 0) + delta);
});
if (run) runs.push(run);

const busy = runs.reduce((sum, r) => sum + r.ms, 0);
console.log(`${runs.length} busy runs, ${busy.toFixed(0)} ms busy of ${at.toFixed(0)} ms`);
for (const r of runs.sort((a, b) => b.ms - a.ms).slice(0, Number(count))) {
  console.log(`\n${r.ms.toFixed(1)} ms at ${r.start.toFixed(0)} ms`);
  for (const [id, ms] of [...r.self].sort((a, b) => b[1] - a[1]).slice(0, 5)) {
    console.log(`  ${ms.toFixed(1).padStart(6)} ms ${name(id)}  <- ${owner(id)}`);
  }
}
