/**
 * When the SSE hub flushes (see sse.ts). Each flush costs one socket write per client (a `writev` system call, where
 * loopback delivery also happens): profiled with 100 clients at 1,000 events/s, `writev` and Node's write path took
 * ~50% of the daemon's CPU at one flush per emitting tick. Fewer, larger writes are the lever, but an idle stream must
 * not wait: so the pacing adapts to what a flush costs. A frame after a quiet spell is flushed in the emitting tick's
 * check phase (setImmediate: the frames of a turn's end, emitted across a chain of awaits, share that write); a frame
 * that comes within `FLUSH_SPACING` × the last flush's duration after that flush waits out the rest of that spacing
 * (the next check phase when it is under a millisecond, a timer otherwise), and every frame emitted meanwhile joins the
 * same writes. With a few clients a flush takes microseconds (under MIN_PACED_FLUSH_MS), so a chat's frames go out as
 * they came; with a hundred clients at thousands of events per second a flush takes about a millisecond and flushing is
 * held to at most 1 / (1 + FLUSH_SPACING) of the CPU, each frame waiting at most MAX_FLUSH_WAIT_MS (so ~5 ms plus one
 * flush is the most pacing adds).
 */

/**
 * The pause after a flush, in multiples of its duration, before the next one may start: flushing takes
 * at most a quarter of the daemon's time. Every write also costs its reader a wake-up and a read, so on
 * a small machine the flush rate, not the frame rate, sets the load: with 100 clients at 2,000 events/s,
 * 3 instead of 0.5 cut the writes 3 to 6 times and the CPU per delivered frame (daemon and readers) from
 * 6.4 to 3.6 µs (bench/sse-fanout.ts, AGT_BENCH_FLUSH_SPACING, same build, same minutes).
 */
export const FLUSH_SPACING = 3;
/** No frame waits longer than this for its flush (bounds latency when a flush was very slow). */
export const MAX_FLUSH_WAIT_MS = 5;
/**
 * A flush shorter than this (a few clients: a chat's stream) never delays the next one: its frames go out
 * in the tick they were emitted, since fewer writes would save next to nothing there.
 */
export const MIN_PACED_FLUSH_MS = 0.2;

export interface PacingOptions {
  /** Pause after a flush in multiples of its duration ({@link FLUSH_SPACING}). */
  spacing?: number;
  /** Longest wait of a frame for its flush ({@link MAX_FLUSH_WAIT_MS}). */
  maxWaitMs?: number;
}

export class FlushPacer {
  spacing: number;
  maxWaitMs: number;
  private scheduled = false;
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  /** performance.now() at the end of the last flush, and how long it took. */
  private lastEnd = -Infinity;
  private lastDuration = 0;

  constructor(
    private readonly flush: () => void,
    options: PacingOptions = {},
  ) {
    this.spacing = options.spacing ?? FLUSH_SPACING;
    this.maxWaitMs = options.maxWaitMs ?? MAX_FLUSH_WAIT_MS;
  }

  /** A frame is waiting: flush in this tick's check phase, or once the spacing after the last flush has passed. */
  request(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    const paced = this.lastDuration >= MIN_PACED_FLUSH_MS;
    const wait = paced
      ? Math.min(this.maxWaitMs, this.lastEnd + this.lastDuration * this.spacing - performance.now())
      : 0;
    // The check phase of this tick, not a microtask: frames emitted across a chain of awaits in the same
    // tick (a turn's last row, `llm.completed`, then `turn.completed`) share one write per client.
    if (wait < 1) this.immediate = setImmediate(this.run);
    else this.timer = setTimeout(this.run, wait);
  }

  /** Flushes now (a burst as long as half the ring, shutdown); a pending scheduled flush is dropped. */
  now(): void {
    this.cancel();
    this.timed();
  }

  cancel(): void {
    this.scheduled = false;
    clearTimeout(this.timer);
    clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
  }

  /** A scheduled flush (cancel() clears its immediate or timer, so it only runs while scheduled). */
  private readonly run = (): void => {
    this.cancel();
    this.timed();
  };

  private timed(): void {
    const began = performance.now();
    this.flush();
    this.lastEnd = performance.now();
    this.lastDuration = this.lastEnd - began;
  }
}
