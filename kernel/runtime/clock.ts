/**
 * Time as the runtime sees it. Trigger timing modifiers and timers take a {@link Clock} so tests drive
 * them with a fake one instead of waiting.
 */
export type TimerHandle = { readonly __timer: true };

export interface Clock {
  now(): number;
  /** Calls `fn` once after `ms`; the handle cancels it. Must not keep the process alive. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle | undefined): void;
}

/** Wall clock; timers are unref'd so a pending trigger never holds the daemon open. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    // setTimeout caps at 2^31-1 ms; longer waits re-arm (timers a month away are legal).
    const MAX = 2_147_483_647;
    const box: { t?: NodeJS.Timeout } = {};
    const arm = (left: number) => {
      box.t = setTimeout(() => (left > MAX ? arm(left - MAX) : fn()), Math.min(Math.max(0, left), MAX));
      box.t.unref();
    };
    arm(ms);
    return box as unknown as TimerHandle;
  },
  clearTimeout(handle) {
    if (handle) clearTimeout((handle as unknown as { t?: NodeJS.Timeout }).t);
  },
};

/** A manual clock for tests: `advance(ms)` runs due callbacks in time order. */
export class FakeClock implements Clock {
  private current: number;
  private seq = 0;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();

  constructor(start = 1_700_000_000_000) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = ++this.seq;
    this.timers.set(id, { at: this.current + Math.max(0, ms), fn });
    return { id } as unknown as TimerHandle;
  }

  clearTimeout(handle: TimerHandle | undefined): void {
    if (handle) this.timers.delete((handle as unknown as { id: number }).id);
  }

  /** Moves time forward, firing every callback that falls due on the way (including ones they set). */
  advance(ms: number): void {
    const end = this.current + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of this.timers) if (entry[1].at <= end && (!next || entry[1].at < next[1].at)) next = entry;
      if (!next) break;
      this.timers.delete(next[0]);
      this.current = Math.max(this.current, next[1].at);
      next[1].fn();
    }
    this.current = end;
  }

  get pending(): number {
    return this.timers.size;
  }
}
