/**
 * `requestDelayMs`: the minimum spacing between the starts of two calls to the same provider. Each
 * caller reserves the next free slot before it waits, so concurrent calls line up one delay apart
 * instead of all firing when the first wait ends.
 */
import { abortableSleep } from './call-guard.js';

/** The time source of the gates (tests pass a fake one and assert on the slots it hands out). */
export interface GateClock {
  now(): number;
  /** Resolves after `ms`; rejects with the signal's reason when it aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

const systemClock: GateClock = { now: () => Date.now(), sleep: abortableSleep };

export class SpacingGates {
  /** Gate key -> the earliest time the next call may start. */
  private readonly next = new Map<string, number>();

  constructor(private readonly clock: GateClock = systemClock) {}

  /** Waits for this gate's next slot (rejects with the signal's reason when it aborts). */
  async wait(key: string, delayMs: number, signal?: AbortSignal): Promise<void> {
    if (delayMs <= 0) return;
    const now = this.clock.now();
    const slot = Math.max(now, this.next.get(key) ?? 0);
    this.next.set(key, slot + delayMs);
    this.prune(now);
    if (slot > now) await this.clock.sleep(slot - now, signal);
  }

  clear(): void {
    this.next.clear();
  }

  /** Forgets gates whose slot has long passed, so the map does not grow with every agent ever seen. */
  private prune(now: number): void {
    if (this.next.size < 256) return;
    for (const [key, at] of this.next) if (at < now) this.next.delete(key);
  }
}
