/**
 * `waitAtMost` (kernel/deadline.ts), the kernel's one wait with a deadline: the work's outcome when it
 * comes first, the fallback (or its throw) when the deadline does, a late rejection never unhandled, no
 * timer left behind, `Infinity` never giving up, and the timers it is handed used instead of the global
 * ones.
 */
import t from 'tap';
import { waitAtMost } from '../kernel/deadline.js';

const later = <T>(ms: number, value: T, fail = false) =>
  new Promise<T>((resolve, reject) => setTimeout(() => (fail ? reject(value) : resolve(value)), ms));

t.test('the work first: its value or its rejection', async (t) => {
  t.equal(await waitAtMost(later(1, 'done'), 5_000, () => 'late'), 'done');
  t.equal(await waitAtMost('plain value', 5_000, () => 'late'), 'plain value', 'a value that is not a promise');
  await t.rejects(
    waitAtMost(later(1, new Error('broke'), true), 5_000, () => 'late'),
    { message: 'broke' },
  );
  t.equal(await waitAtMost(Promise.resolve('settled'), 0, () => 'late'), 'settled', 'settled work wins against 0 ms');
});

t.test('the deadline first: the fallback, or its throw; a late rejection is handled', async (t) => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  t.teardown(() => void process.off('unhandledRejection', onUnhandled));
  t.equal(await waitAtMost(later(200, 'too late'), 5, () => 'fallback'), 'fallback');
  await t.rejects(
    waitAtMost(later(200, 'too late'), 5, () => {
      throw new Error('gave up');
    }),
    { message: 'gave up' },
  );
  t.equal(await waitAtMost(later(50, new Error('late failure'), true), 5, () => 'fallback'), 'fallback');
  await later(100, null);
  t.same(unhandled, [], 'the late rejection reached no unhandledRejection');
});

t.test('Infinity never gives up; the timer is cleared when the work wins', async (t) => {
  let fallbackCalls = 0;
  t.equal(await waitAtMost(later(20, 'slow'), Number.POSITIVE_INFINITY, () => fallbackCalls++), 'slow');
  t.equal(fallbackCalls, 0);
  const set: number[] = [];
  let cleared = 0;
  const timers = {
    setTimeout: (fn: () => void, ms: number) => (set.push(ms), setTimeout(fn, ms)),
    clearTimeout: (handle: never) => (cleared++, clearTimeout(handle)),
  };
  t.equal(await waitAtMost(later(1, 'quick'), 60_000, () => 'late', timers), 'quick');
  t.same(set, [60_000], 'the given timers were used');
  t.equal(cleared, 1, 'and the timer cleared once the work settled (nothing keeps the process up for 60 s)');
  t.equal(
    await waitAtMost(later(1, 'x'), -5, () => 'late', timers).then(() => set.at(-1)),
    1,
    'a negative deadline waits the shortest timer',
  );
});
