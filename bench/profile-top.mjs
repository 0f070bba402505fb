// Self time of a .cpuprofile by function and by package: `node bench/profile-top.mjs <file> [rows=25]`.
import { readFileSync } from 'node:fs';
const p = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const self = new Map();
const dt = p.timeDeltas; let total = 0;
const counts = new Map();
for (let i = 0; i < p.samples.length; i++) { counts.set(p.samples[i], (counts.get(p.samples[i]) ?? 0) + (dt[i] ?? 0)); }
const agg = new Map(); const file = new Map();
for (const [id, t] of counts) {
  const n = byId.get(id); const cf = n.callFrame;
  const key = `${cf.functionName || '(anon)'} ${cf.url.replace(/.*\/(node_modules|dist|kernel)\//, '$1/')}:${cf.lineNumber}`;
  agg.set(key, (agg.get(key) ?? 0) + t); total += t;
  const f = cf.url ? cf.url.replace(/.*\/node_modules\/((@[^/]+\/)?[^/]+).*/, '$1').replace(/.*\/dist\//, 'dist/') : cf.functionName;
  file.set(f, (file.get(f) ?? 0) + t);
}
const top = (m, k) => [...m].sort((a, b) => b[1] - a[1]).slice(0, k).map(([n, t]) => `${(100 * t / total).toFixed(1).padStart(5)}% ${n}`).join('\n');
console.log(`total ${(total / 1000).toFixed(0)} ms\n-- self by function\n${top(agg, +(process.argv[3] ?? 25))}\n-- self by file\n${top(file, 15)}`);
