/**
 * `npm run bench`: runs every benchmark in sequence and prints one JSON line per result.
 * Benchmarks measure; they never fail the build. Timing targets are stated beside each result.
 */
import { runEventsFanout } from './events-fanout.js';

const benches: Array<{ name: string; target: string; run: () => Promise<unknown> }> = [
  { name: 'events-fanout', target: 'emit < 10 µs/event; 50 clients x 5000 frames delivered < 2 s', run: () => runEventsFanout(50, 5000, 256) },
];

for (const bench of benches) {
  const started = Date.now();
  const result = await bench.run();
  console.log(JSON.stringify({ bench: bench.name, target: bench.target, wallMs: Date.now() - started, result }));
}
