/**
 * One attempt's abort controller: it fires when the caller's signal aborts, when the attempt exceeds
 * `timeoutMs` from the moment its request goes out, when a stream goes silent for `idleTimeoutMs`, or
 * when the extension stops.
 *
 * A total timer and an idle one, because a timer that stops at the response headers (the vendor SDKs'
 * `timeout`) would let a stream that stalls after its first bytes hang forever. Every received chunk
 * counts as activity (wire-http.ts touches the guard): an Anthropic `ping` keeps a slow but alive stream
 * open; a silent socket does not. Aborting the controller aborts the real HTTP request: the HTTP client
 * destroys the socket, which the server sees as a closed connection.
 */
export type GuardReason = 'cancelled' | 'timeout' | 'idle' | 'stopped';

export interface GuardLimits {
  timeoutMs: number;
  /** 0 disables the idle timer (JSON calls: nothing arrives until the whole answer is ready). */
  idleTimeoutMs: number;
}

export class CallGuard {
  private readonly controller = new AbortController();
  private total: NodeJS.Timeout | undefined;
  private idle: NodeJS.Timeout | undefined;
  private why: GuardReason | null = null;
  private sent = false;
  private readonly onOuterAbort = () => this.abort('cancelled');

  constructor(
    private readonly outer: AbortSignal | undefined,
    private readonly limits: GuardLimits,
  ) {
    if (outer?.aborted) this.abort('cancelled');
    else outer?.addEventListener('abort', this.onOuterAbort, { once: true });
    // Both timers start when the request goes out (`begin`, from wire-http.ts), not here: what runs
    // before (a first `node:https` import on a busy machine) is not the provider's to answer for.
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Why the guard aborted, or null while it has not. */
  get reason(): GuardReason | null {
    return this.why;
  }

  /** Marks activity: restarts the idle timer. */
  touch(): void {
    if (this.limits.idleTimeoutMs <= 0 || this.why) return;
    clearTimeout(this.idle);
    this.idle = setTimeout(() => this.abort('idle'), this.limits.idleTimeoutMs);
  }

  abort(reason: GuardReason): void {
    if (this.why) return;
    this.why = reason;
    this.clearTimers();
    this.controller.abort(new Error(`model call ${reason}`));
  }

  /** Releases timers and the listener on the caller's signal. Call once the attempt is over. */
  dispose(): void {
    this.clearTimers();
    this.outer?.removeEventListener('abort', this.onOuterAbort);
  }

  private clearTimers(): void {
    clearTimeout(this.total);
    clearTimeout(this.idle);
  }

  /** The request goes out now: the total timer starts (once per attempt) and the idle one restarts. */
  begin(): void {
    if (!this.sent && !this.why) {
      this.sent = true;
      this.total = setTimeout(() => this.abort('timeout'), this.limits.timeoutMs);
    }
    this.touch();
  }
}

/** Resolves after `ms`, or rejects at once when `signal` aborts. Never leaves a timer behind. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
