/**
 * `start` after the server listens, in dependency order; `stop` at shutdown, in reverse order, each at
 * most once, errors logged and never thrown, and never waiting longer than the deadline: one hanging
 * extension must not keep the daemon from exiting.
 */
import type { Logger } from '@agt/contracts';
import { waitAtMost } from '../deadline.js';
import type { ExtensionRecord, ExtensionRegistry } from './registry.js';

/** A `start` that takes longer fails its extension (the daemon's start-up waits for it). */
export const START_DEADLINE_MS = 15_000;
/** The most one extension's `stop` may take, whatever is left of the overall shutdown budget. */
export const STOP_DEADLINE_CAP_MS = 5_000;
/** What each later extension is guaranteed when the budget allows: a hanging stop cannot starve them. */
export const STOP_RESERVE_MS = 500;

/** One stop's share of what is left, with `left` stops (this one included) still to run. */
export function stopShare(remaining: number, left: number): number {
  if (remaining <= 0) return 0;
  if (remaining < left * STOP_RESERVE_MS) return remaining / left;
  return Math.min(STOP_DEADLINE_CAP_MS, remaining - (left - 1) * STOP_RESERVE_MS);
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Resolves with the work's outcome, or `{timedOut}` after `ms`; the timer never outlives the call. */
export function settleWithin(ms: number, work: () => unknown): Promise<{ error?: unknown; timedOut?: true }> {
  const outcome = Promise.resolve()
    .then(work)
    .then(
      () => ({}),
      (error: unknown) => ({ error }),
    );
  return waitAtMost(outcome, ms, () => ({ timedOut: true as const }));
}

export class ExtensionLifecycle {
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly registry: ExtensionRegistry,
    /** Names in dependency order. */
    private readonly order: readonly string[],
    private readonly logger: Logger,
  ) {}

  private inOrder(): ExtensionRecord[] {
    return this.order.map((name) => this.registry.get(name)!).filter(Boolean);
  }

  /** Calls each loaded extension's `start`; a throw, a timeout or a failed dependency fails only it. */
  async startAll(): Promise<void> {
    for (const record of this.inOrder()) {
      if (record.state !== 'loaded') continue;
      const broken = record.dependsOn.map((dep) => this.registry.get(dep)!).filter((dep) => dep.state !== 'started');
      if (broken.length > 0) {
        const why = broken
          .map((dep) => `${dep.name} (${this.registry.unavailableReason(dep) ?? dep.state})`)
          .join(', ');
        this.registry.fail(record, `dependency not running: ${why}`);
        continue;
      }
      const start = record.hooks?.start;
      if (start) {
        const outcome = await settleWithin(START_DEADLINE_MS, () => start.call(record.hooks));
        if (outcome.timedOut) {
          this.registry.fail(record, `start did not finish within ${START_DEADLINE_MS} ms`);
          continue;
        }
        if ('error' in outcome) {
          this.registry.fail(record, `start failed: ${message(outcome.error)}`, outcome.error);
          continue;
        }
      }
      this.registry.markStarted(record);
    }
  }

  /**
   * Calls `stop` in reverse dependency order on every extension whose `register` returned (also
   * after a failed start: it may hold what `register` opened), each at most once. Each stop gets at
   * most {@link STOP_DEADLINE_CAP_MS} of what is left of `deadlineMs`, keeping {@link STOP_RESERVE_MS}
   * for each extension after it (see {@link stopShare}).
   */
  stopAll(deadlineMs: number): Promise<void> {
    // A second call (a second shutdown path) waits for the first instead of racing it out of order.
    this.stopping ??= this.stopInReverse(deadlineMs);
    return this.stopping;
  }

  /** Stops one extension now (the owner turned it off): its `stop`, at most once, within the cap. */
  async stopOne(record: ExtensionRecord): Promise<void> {
    if (record.stopCalled) return;
    record.stopCalled = true;
    const stop = record.hooks?.stop;
    if (!stop) return;
    const outcome = await settleWithin(STOP_DEADLINE_CAP_MS, () => stop.call(record.hooks));
    if (outcome.timedOut)
      this.logger.warn({ extension: record.name }, `extension ${record.name} did not stop within the cap; turned off`);
    else if ('error' in outcome)
      this.logger.error({ err: outcome.error, extension: record.name }, `extension ${record.name} stop failed`);
  }

  private async stopInReverse(deadlineMs: number): Promise<void> {
    const endAt = Date.now() + Math.max(0, deadlineMs);
    const pending = this.inOrder()
      .reverse()
      .filter((record) => !record.stopCalled);
    let left = pending.filter((record) => record.hooks?.stop).length;
    for (const record of pending) {
      if (record.stopCalled) continue;
      record.stopCalled = true;
      const stop = record.hooks?.stop;
      const share = stop ? stopShare(endAt - Date.now(), left--) : 0;
      if (stop && share <= 0) {
        this.logger.warn({ extension: record.name }, `no time left to stop extension ${record.name}; skipped`);
      } else if (stop) {
        const outcome = await settleWithin(share, () => stop.call(record.hooks));
        if (outcome.timedOut) {
          this.logger.warn(
            { extension: record.name },
            `extension ${record.name} did not stop within ${Math.round(share)} ms; moving on`,
          );
        } else if ('error' in outcome) {
          this.logger.error({ err: outcome.error, extension: record.name }, `extension ${record.name} stop failed`);
        }
      }
      this.registry.markStopped(record);
    }
  }
}
