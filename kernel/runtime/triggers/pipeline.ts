/**
 * The timing modifiers of one trigger target, applied in this order:
 *
 * 1. `debounce_ms`: events are held until none arrived for `debounce_ms`; then everything held goes on
 *    as one delivery (trailing edge).
 * 2. `batch_count` / `batch_ms`: deliveries are collected until `batch_count` events are held, or
 *    `batch_ms` after the first one, whichever comes first (only `batch_count`: wait for the count;
 *    only `batch_ms`: a time window).
 * 3. `interval_ms` (throttle): at most one delivery per interval. The first goes at once (leading
 *    edge); what arrives during the cool-down is merged and goes when the interval has passed.
 *
 * Nothing is dropped silently: merged deliveries keep the newest {@link MAX_EVENTS_PER_DELIVERY}
 * events and `count` says how many were merged. Every timer goes through the injected clock.
 */
import type { Clock, TimerHandle } from '../clock.js';
import type { TriggerEvent } from '../dispatch.js';

export const MAX_EVENTS_PER_DELIVERY = 100;

export interface Delivery {
  events: TriggerEvent[];
  /** Events merged into this delivery (may exceed `events.length`). */
  count: number;
}

export interface TimingConfig {
  debounce_ms?: number;
  interval_ms?: number;
  batch_ms?: number;
  batch_count?: number;
}

function merge(into: Delivery | undefined, more: Delivery): Delivery {
  if (!into) return { events: more.events.slice(-MAX_EVENTS_PER_DELIVERY), count: more.count };
  const events = into.events.concat(more.events);
  return { events: events.slice(-MAX_EVENTS_PER_DELIVERY), count: into.count + more.count };
}

export class TargetPipeline {
  private debounceHeld: Delivery | undefined;
  private debounceTimer: TimerHandle | undefined;
  private batchHeld: Delivery | undefined;
  private batchTimer: TimerHandle | undefined;
  private throttleHeld: Delivery | undefined;
  private throttleTimer: TimerHandle | undefined;
  private lastFiredAt: number | undefined;

  constructor(
    private readonly timing: TimingConfig,
    private readonly clock: Clock,
    private readonly emit: (delivery: Delivery) => void,
  ) {}

  push(delivery: Delivery): void {
    this.debounce(delivery);
  }

  private debounce(delivery: Delivery): void {
    const ms = this.timing.debounce_ms ?? 0;
    if (ms <= 0) return this.batch(delivery);
    this.debounceHeld = merge(this.debounceHeld, delivery);
    this.clock.clearTimeout(this.debounceTimer);
    this.debounceTimer = this.clock.setTimeout(() => {
      const held = this.debounceHeld!;
      this.debounceHeld = undefined;
      this.debounceTimer = undefined;
      this.batch(held);
    }, ms);
  }

  private batch(delivery: Delivery): void {
    const count = this.timing.batch_count ?? 0;
    const ms = this.timing.batch_ms ?? 0;
    if (count <= 0 && ms <= 0) return this.throttle(delivery);
    this.batchHeld = merge(this.batchHeld, delivery);
    if (count > 0 && this.batchHeld.count >= count) return this.flushBatch();
    if (ms > 0 && !this.batchTimer) this.batchTimer = this.clock.setTimeout(() => this.flushBatch(), ms);
  }

  private flushBatch(): void {
    this.clock.clearTimeout(this.batchTimer);
    this.batchTimer = undefined;
    const held = this.batchHeld;
    this.batchHeld = undefined;
    if (held) this.throttle(held);
  }

  private throttle(delivery: Delivery): void {
    const ms = this.timing.interval_ms ?? 0;
    if (ms <= 0) return this.emit(delivery);
    const now = this.clock.now();
    if (!this.throttleTimer && (this.lastFiredAt === undefined || now - this.lastFiredAt >= ms)) {
      this.lastFiredAt = now;
      return this.emit(delivery);
    }
    this.throttleHeld = merge(this.throttleHeld, delivery);
    this.throttleTimer ??= this.clock.setTimeout(
      () => {
        const held = this.throttleHeld!;
        this.throttleHeld = undefined;
        this.throttleTimer = undefined;
        this.lastFiredAt = this.clock.now();
        this.emit(held);
      },
      this.lastFiredAt! + ms - now,
    );
  }

  /** Cancels every pending timer; held events are dropped (config change, state `off`, unload). */
  close(): void {
    for (const timer of [this.debounceTimer, this.batchTimer, this.throttleTimer]) this.clock.clearTimeout(timer);
    this.debounceTimer = this.batchTimer = this.throttleTimer = undefined;
    this.debounceHeld = this.batchHeld = this.throttleHeld = undefined;
  }
}
