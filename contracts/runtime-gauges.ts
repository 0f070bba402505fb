/**
 * `ctx.gauges` (docs/observability.md): the daemon's live figures, read on demand, for an
 * extension that reports them (the `telemetry` extension's `/metrics`, or a third-party exporter). Each
 * `read()` walks the kernel's own state at that moment (loaded agents and their loop queues, the
 * `GET /events` clients, the extension records): nothing is counted or kept between reads, so a daemon
 * nobody reads pays nothing. Read-only and never a secret (names and numbers only).
 */

/**
 * An extension's state as `GET /runtime/extensions` shows it.
 *
 * @beta
 */
export type ExtensionStateName = 'disabled' | 'pending' | 'loaded' | 'started' | 'failed' | 'stopped';

/** @beta */
export interface RuntimeGauges {
  /** Every loaded agent, with the turns waiting on its loops (queued, not the running ones). */
  agents: Array<{ id: string; name: string; queuedTurns: number }>;
  /** Clients connected to `GET /events` now. */
  sseClients: number;
  /** Every extension of the manifest, in manifest order, with its state now. */
  extensions: Array<{ name: string; state: ExtensionStateName }>;
}

/** @beta */
export interface RuntimeGaugesAccess {
  /** The figures now; synchronous, cost proportional to the agents and extensions loaded. */
  read(): RuntimeGauges;
}
