/**
 * Waiting for work with a deadline: the one way the kernel does it (`p-timeout` underneath). The work
 * is never cancelled (it goes on in the background when the wait gives up; cancel it through its own
 * signal if it has one), a late rejection of it is never left unhandled, and the timer never outlives
 * the wait.
 */
import pTimeout from 'p-timeout';

/** Timer functions to use instead of the global ones (the runtime's clock: unref'd, no 2^31 ms cap). */
export interface DeadlineTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: never): void;
}

/**
 * Resolves or rejects as `work` does, or, after `ms`, with what `onTimeout()` returns (a throw from
 * `onTimeout` rejects the wait instead). `ms` of 0 or less waits Node's shortest timer (1 ms, as
 * `setTimeout(fn, 0)` does), so work that has already settled still wins; `Infinity` never gives up.
 */
export function waitAtMost<T, F>(work: PromiseLike<T> | T, ms: number, onTimeout: () => F, timers?: DeadlineTimers): Promise<T | F> {
  const milliseconds = ms === Number.POSITIVE_INFINITY ? ms : Number.isNaN(ms) ? 1 : Math.max(1, ms);
  return pTimeout<T, F>(Promise.resolve(work), {
    milliseconds,
    fallback: onTimeout,
    ...(timers ? { customTimers: timers as unknown as { setTimeout: typeof setTimeout; clearTimeout: typeof clearTimeout } } : {}),
  });
}
