/**
 * Waiting for work with a deadline: the one way the kernel does it. The work is never cancelled (it goes
 * on in the background when the wait gives up; cancel it through its own signal if it has one), a late
 * rejection of it is never left unhandled, and the timer never outlives the wait.
 *
 * Written out rather than through `p-timeout` (which did the same): p-timeout builds a `TimeoutError`,
 * stack captured, for every wait, even one that never times out, and a chat turn waits several times
 * (each extension's `toolsFor`, the runtime's own waits): 1.7–2% of a turn's CPU in the profile.
 */

/** Timer functions to use instead of the global ones (the runtime's clock: unref'd, no 2^31 ms cap). */
export interface DeadlineTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: never): void;
}

const globalTimers: DeadlineTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle),
};

/**
 * Resolves or rejects as `work` does, or, after `ms`, with what `onTimeout()` returns (a throw from
 * `onTimeout` rejects the wait instead). `ms` of 0 or less waits Node's shortest timer (1 ms, as
 * `setTimeout(fn, 0)` does), so work that has already settled still wins; `Infinity` never gives up.
 */
export function waitAtMost<T, F>(
  work: PromiseLike<T> | T,
  ms: number,
  onTimeout: () => F,
  timers: DeadlineTimers = globalTimers,
): Promise<T | F> {
  const milliseconds = ms === Number.POSITIVE_INFINITY ? ms : Number.isNaN(ms) ? 1 : Math.max(1, ms);
  const promise = Promise.resolve(work);
  if (milliseconds === Number.POSITIVE_INFINITY) return promise;
  return new Promise<T | F>((resolve, reject) => {
    const timer = timers.setTimeout(() => {
      try {
        resolve(onTimeout());
      } catch (error) {
        reject(error);
      }
    }, milliseconds);
    // Both handlers settle the wait at most once (a late outcome is ignored, a late rejection handled).
    promise.then(
      (value) => {
        timers.clearTimeout(timer as never);
        resolve(value);
      },
      (error: unknown) => {
        timers.clearTimeout(timer as never);
        reject(error);
      },
    );
  });
}
