/**
 * A daemon's death told by NATS, faster than the placement TTL (docs/fleet.md, "Failover"). Each run of a
 * daemon answers on a subject of its own (`agt.fleet.<fleet>.alive.<daemon>.<run>`), subscribed before it
 * claims any agent and on the connection its renewals go over. Once the server no longer has that connection
 * (the process died, or the server dropped it), a request there is answered at once with "no responders".
 *
 * That alone does not say the holder stopped: a daemon cut off from NATS may still run. So the holder also
 * promises, in every placement record it writes (`cutOffMs`, option `cutOffSeconds`), to stop all its agents
 * once the server has not answered it for that long: a ping every {@link PING_MS}, and each renewal or claim, counts when
 * it was answered on the connection it was sent on (no disconnect between). Every answer the holder counts
 * was sent before the server dropped its connection, so a daemon that got "no responders" at time `t` knows
 * the holder, dead or alive, stopped by `t + cutOffMs`; it waits a margin more, asks once more, and takes the
 * agents over (takeover.ts).
 */
import type { NatsConnection } from '@nats-io/transport-node';
import type { FleetConnection } from './connection.js';

/** Between the holder's pings. */
const PING_MS = 250;
/** Between the holder's checks of its deadline. */
const CHECK_MS = 100;
/** Pings awaiting their answer at most (more are not sent while the connection is down). */
const MAX_PINGS_OUT = 8;
/** Status changes of the connection after which an answer no longer proves the connection it was sent on. */
const BREAKS = new Set(['disconnect', 'reconnect', 'reconnecting', 'staleConnection', 'forceReconnect', 'close']);

/** The subject a run of a daemon answers while it is connected. */
export function aliveSubject(fleet: string, daemon: string, run: string): string {
  return `agt.fleet.${fleet}.alive.${daemon}.${run}`;
}

/** When a request was sent, and on which connection (counted by {@link Liveness.answered}). */
export interface Sent {
  at: number;
  epoch: number;
}

export class Liveness {
  private ready_: Promise<void> | undefined;
  private subscribed = false;
  /** Bumped at every break of the connection: an answer to a request sent before it proves nothing. */
  private epoch = 0;
  /** `performance.now()` when the last request the server answered was sent. */
  private answeredSentAt = performance.now();
  private pingsOut = 0;
  private pinger: NodeJS.Timeout | undefined;
  private checker: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly connection: FleetConnection,
    private readonly fleet: string,
    private readonly daemon: string,
    private readonly run: string,
    /** How long the holder runs its agents without an answer from the server: the promise in its records. */
    readonly cutOffMs: number,
    /** Stops every agent this daemon holds (the server has not answered for `cutOffMs`). */
    private readonly cut: (why: string) => void,
  ) {}

  /** Subscribed, and answered once: called before the first claim. Rejects while NATS is out of reach. */
  ready(wait?: number): Promise<void> {
    this.ready_ ??= (async () => {
      const { nc } = await this.connection.get(wait);
      if (!this.subscribed) {
        this.subscribed = true;
        void this.follow(nc);
        nc.subscribe(aliveSubject(this.fleet, this.daemon, this.run), {
          callback: (error, message) => {
            if (!error) message.respond();
          },
        });
      }
      const sent = this.sent();
      await nc.flush();
      this.answered(sent);
      this.startTimers(nc);
    })().catch((error: unknown) => {
      this.ready_ = undefined;
      throw error;
    });
    return this.ready_;
  }

  /** Marks a request about to be sent (a claim, a renewal). */
  sent(): Sent {
    return { at: performance.now(), epoch: this.epoch };
  }

  /** The server answered the request marked `sent`: it counts when no break came between. */
  answered(sent: Sent): void {
    if (sent.epoch === this.epoch && sent.at > this.answeredSentAt) this.answeredSentAt = sent.at;
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.pinger);
    clearInterval(this.checker);
  }

  private startTimers(nc: NatsConnection): void {
    if (this.pinger || this.stopped) return;
    this.pinger = setInterval(() => this.ping(nc), PING_MS);
    this.pinger.unref();
    this.checker = setInterval(() => {
      if (performance.now() - this.answeredSentAt < this.cutOffMs) return;
      // Once per silence: the agents stop; later claims (the connection back) are checked again from there.
      this.answeredSentAt = performance.now();
      this.cut(`no answer from NATS for ${this.cutOffMs} ms`);
    }, CHECK_MS);
    this.checker.unref();
  }

  private ping(nc: NatsConnection): void {
    if (this.pingsOut >= MAX_PINGS_OUT || nc.isClosed()) return;
    this.pingsOut += 1;
    const sent = this.sent();
    nc.flush()
      .then(
        () => this.answered(sent),
        () => {},
      )
      .finally(() => {
        if (sent.epoch === this.epoch) this.pingsOut -= 1;
      });
  }

  private async follow(nc: NatsConnection): Promise<void> {
    for await (const status of nc.status()) {
      if (!BREAKS.has(status.type)) continue;
      this.epoch += 1;
      // Pings sent before the break may never be answered: they no longer hold the next ones back.
      this.pingsOut = 0;
    }
  }
}

/** What a daemon's run answers now: `gone` when NATS says nobody listens on its subject. */
export async function probeAlive(
  nc: NatsConnection,
  fleet: string,
  daemon: string,
  run: string,
  timeoutMs: number,
): Promise<'alive' | 'gone' | 'unknown'> {
  try {
    await nc.request(aliveSubject(fleet, daemon, run), undefined, { timeout: timeoutMs });
    return 'alive';
  } catch (error) {
    const noResponders =
      typeof (error as { isNoResponders?: unknown })?.isNoResponders === 'function' &&
      (error as { isNoResponders(): boolean }).isNoResponders();
    return noResponders ? 'gone' : 'unknown';
  }
}
