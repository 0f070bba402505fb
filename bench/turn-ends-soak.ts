/**
 * Soak variant of the kill test in test/turn-ends.test.ts: daemon lifetimes ended by
 * SIGTERM or SIGKILL at random moments under a stream of chats and dispatches, as many as asked, and a
 * report of how every accepted turnId ended across them. Exits 1 when one ended other than exactly once.
 *
 *   node --import tsx --conditions=agt-source bench/turn-ends-soak.ts [kills=20] [runs=1] [seed]
 */
import { killRun } from '../test/helpers/turn-ends.js';

const kills = Number(process.argv[2] ?? 20);
const runs = Number(process.argv[3] ?? 1);
const firstSeed = Number(process.argv[4] ?? Date.now() % 100_000);

let failed = false;
for (let run = 0; run < runs; run++) {
  const seed = firstSeed + run;
  const teardowns: Array<() => unknown> = [];
  const startedAt = Date.now();
  try {
    const result = await killRun({ teardown: (fn) => void teardowns.push(fn) }, { kills, seed });
    const counts = new Map<number, number>();
    for (const turnId of result.accepted.keys()) {
      const n = result.ends.get(turnId)?.length ?? 0;
      counts.set(n, (counts.get(n) ?? 0) + 1);
    }
    const twice = [...result.ends.values()].filter((list) => list.length > 1).length;
    const ok = counts.size === 1 && counts.has(1) && twice === 0 && result.unendedAtSigterm.length === 0;
    failed ||= !ok;
    console.log(
      JSON.stringify({
        seed,
        kills,
        signals: {
          SIGTERM: result.signals.filter((s) => s === 'SIGTERM').length,
          SIGKILL: result.signals.filter((s) => s === 'SIGKILL').length,
        },
        accepted: result.accepted.size,
        endedTimes: Object.fromEntries(counts),
        endedTwiceAnyId: twice,
        unendedAtSigterm: result.unendedAtSigterm.length,
        unloadedAtSigterm: result.unloaded,
        daemonRestartEnds: result.restarted,
        seconds: Math.round((Date.now() - startedAt) / 1000),
        ok,
      }),
    );
  } catch (error) {
    failed = true;
    console.log(JSON.stringify({ seed, kills, error: (error as Error).message }));
  } finally {
    for (const fn of teardowns.reverse()) await fn();
  }
}
process.exit(failed ? 1 : 0);
