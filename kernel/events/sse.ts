/**
 * The Server-Sent Events fan-out behind `GET /events` (docs/events.md): control frames, replay, live frames,
 * heartbeats and slow-client handling (where a stream starts is decided in `resume.ts`).
 *
 * Flow control without per-client queues: the bus ring (the last 1000 frames, at most 32 MB) is the only queue. Each
 * client remembers the last cursor it has been given (`lastCursor`). An emit only schedules a flush (the emitting
 * tick's check phase, sse-pacing.ts); the flush writes each client the frames after its cursor, batched, while its
 * socket accepts data (when: sse-pacing.ts, at once after a quiet spell, spaced by the flushes' own cost under load).
 * Once `res.write` returns false the client is "blocked": later frames stay in the ring and it catches up on `drain`. A
 * blocked client more than `maxLagFrames` behind, or whose next frame has left the ring, is disconnected: it resumes
 * with its cursor and gets a `stream.gap`. So a stalled client costs at most one socket buffer (highWaterMark plus one
 * batch), and `bus.emit` stays synchronous and cheap (O(1) per frame, one O(clients) flush per burst).
 *
 * Delivery ({@link FrameDelivery}): a write of frames is confirmed once Node handed its bytes to the
 * operating system (from there a `kill -9` of the daemon does not lose them: the kernel still sends
 * what is in the socket buffer). The socket is uncorked right after the write, so a client that keeps
 * up is confirmed in the same tick (Node's buffers are empty); otherwise the write's callback confirms
 * it. {@link SseHub.whenSent} resolves once every open client confirmed a cursor: the runtime deletes
 * the durable record of a turn's end in the same tick, which keeps the instant in which a kill could
 * make the restart repeat an end as short as a few statements. At shutdown the streams
 * stay open until {@link SseHub.holdOpenUntil}'s promise settles, so the ends of turns stopped by the
 * shutdown are written before the streams end.
 */
import type { OutgoingHttpHeader, ServerResponse } from 'node:http';
import type { Logger } from '@agt/contracts';
import { waitAtMost } from '../deadline.js';
import type { FrameDelivery, KernelBus } from './bus.js';
import { daemonShuttingDown } from './errors.js';
import type { ResumePlan, ResumeRequest } from './resume.js';
import { controlFrame, SseClient, writeSseHead } from './sse-client.js';
import { FrameBatches } from './sse-batches.js';
import { FlushPacer, type PacingOptions } from './sse-pacing.js';

export { controlFrame } from './sse-client.js';

export const HEARTBEAT_MS = 30_000;
/** How long shutdown waits for stream ends to flush; well inside the 3 s HTTP close deadline. */
export const CLOSE_FLUSH_CAP_MS = 500;

export interface SseHubOptions {
  /** Interval of the `: heartbeat` comment (30 s, so proxies keep the stream open). Internal: tests shorten it. */
  heartbeatMs?: number;
  /** A blocked client more than this many frames behind the newest is disconnected (default: the ring size). */
  maxLagFrames?: number;
  /** Flush pacing (sse-pacing.ts); internal: the fan-out bench compares settings with it. */
  pacing?: PacingOptions;
}

interface SentWaiter {
  cursor: number;
  done: (sent: boolean) => void;
}

export class SseHub implements FrameDelivery {
  private readonly clients = new Set<SseClient>();
  private heartbeatMs: number;
  private maxLagFrames: number;
  private heartbeat: NodeJS.Timeout | undefined;
  private readonly unsubscribe: () => void;
  private closed = false;
  private closing: Promise<void> | undefined;
  /** Shutdown keeps the streams open until this settles (see holdOpenUntil). */
  private hold: Promise<unknown> | undefined;
  /** Waiting for frames to reach every stream, oldest cursor first. */
  private waiters: SentWaiter[] = [];
  private readonly pacer = new FlushPacer(() => this.flush());
  private pendingFrames = 0;
  private pendingBytes = 0;
  private droppedCount = 0;
  /** Frames after a cursor as written, shared by the clients at that cursor (sse-batches.ts). */
  private readonly batches: FrameBatches;
  /** Flushes and writes of frames since start (bench/sse-fanout.ts reports them: the cost is per write). */
  private readonly counts = { flushes: 0, writes: 0 };

  constructor(
    private readonly bus: KernelBus,
    private readonly logger: Logger,
    options: SseHubOptions = {},
  ) {
    this.heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
    this.maxLagFrames = options.maxLagFrames ?? bus.capacity;
    this.batches = new FrameBatches(bus);
    this.unsubscribe = bus.subscribeFrames((frame) => this.onFrame(frame.cursor));
    bus.setDelivery(this);
  }

  /**
   * Calls `done(true)` once the frame with this cursor was handed to the operating system on every
   * open stream (when none is open: at the flush of the current tick), from inside that flush;
   * `done(false)` when the streams closed before it got out.
   */
  whenSent(cursor: number, done: (sent: boolean) => void): void {
    if (this.closed) return done(false);
    // Kept in cursor order (callers ask for the newest frame: pushing is the usual case).
    let at = this.waiters.length;
    while (at > 0 && this.waiters[at - 1]!.cursor > cursor) at--;
    this.waiters.splice(at, 0, { cursor, done });
    // The flush the emit scheduled settles it (this microtask finds it unconfirmed and leaves it); this
    // is for a cursor that needed no flush.
    queueMicrotask(() => this.settle());
  }

  /**
   * Shutdown: {@link close} (fastify's preClose) waits for `until` before it ends the streams, so what
   * is emitted meanwhile (the ends of turns the shutdown stops) is still written to them.
   */
  holdOpenUntil(until: Promise<unknown>): void {
    this.hold = until;
  }

  /** Resolves the waiters whose cursor every open client has confirmed. */
  private settle(): void {
    if (this.closed || this.waiters.length === 0) return;
    let through = this.bus.latest;
    for (const client of this.clients) through = Math.min(through, client.confirmed);
    let count = 0;
    while (count < this.waiters.length && this.waiters[count]!.cursor <= through) count++;
    if (count === 0) return;
    for (const waiter of this.waiters.splice(0, count)) {
      try {
        waiter.done(true);
      } catch (error) {
        this.logger.error({ err: error }, 'a frame delivery callback threw');
      }
    }
  }

  /** Internal knobs (tests): a changed heartbeat applies at once to the running timer. */
  configure(options: SseHubOptions): void {
    if (options.maxLagFrames !== undefined) this.maxLagFrames = options.maxLagFrames;
    if (options.pacing?.spacing !== undefined) this.pacer.spacing = options.pacing.spacing;
    if (options.pacing?.maxWaitMs !== undefined) this.pacer.maxWaitMs = options.pacing.maxWaitMs;
    if (options.heartbeatMs !== undefined && options.heartbeatMs !== this.heartbeatMs) {
      this.heartbeatMs = options.heartbeatMs;
      this.stopHeartbeat();
      if (this.clients.size > 0) this.startHeartbeat();
    }
  }

  /** Open streams and streams dropped for being too slow, since start. */
  stats(): { clients: number; dropped: number } {
    return { clients: this.clients.size, dropped: this.droppedCount };
  }

  /** Flushes and writes of frames since start (diagnostics: a write is one socket system call). */
  writeStats(): { flushes: number; writes: number } {
    return { ...this.counts };
  }

  /** Throws 503 once shutdown began, so a request that slipped past the closing check gets an answer. */
  assertOpen(): void {
    if (this.closed) throw daemonShuttingDown();
  }

  /**
   * Starts a stream on a hijacked response: head, `: connected`, `stream.hello`, an optional
   * `stream.gap`, the replay, then live frames. Synchronous, so no frame can slip in between.
   */
  open(
    res: ServerResponse,
    request: ResumeRequest,
    plan: ResumePlan,
    headers: Record<string, OutgoingHttpHeader | undefined> = {},
  ): void {
    writeSseHead(res, headers);
    const client = new SseClient(
      res,
      request.agentId,
      plan.startAfter,
      (drained) => {
        if (this.clients.has(drained)) this.pump(drained);
        this.settle();
      },
      plan.seen ?? null,
    );
    this.clients.add(client);
    res.once('close', () => this.remove(client));
    const cursors = { oldestCursor: this.bus.oldestCursor, latestCursor: this.bus.latest };
    client.write(': connected\n\n');
    client.write(controlFrame('stream.hello', { epoch: this.bus.epoch, ...cursors }));
    if (plan.gap) {
      client.write(
        controlFrame('stream.gap', {
          reason: plan.gap,
          epoch: this.bus.epoch,
          requestedCursor: request.cursor,
          ...cursors,
        }),
      );
    }
    // The head is out: frames now go straight to the socket, framed once for all (sse-client.ts).
    client.writeDirectly();
    this.pump(client);
    if (!this.heartbeat) this.startHeartbeat();
  }

  /**
   * Ends every stream and releases the timer and the bus. Resolves once the ends are flushed (clients
   * see a clean end of stream), or after `flushCapMs` for clients too slow to take them: fastify cuts
   * those sockets right after.
   */
  close(flushCapMs = CLOSE_FLUSH_CAP_MS): Promise<void> {
    this.closing ??= this.end(flushCapMs);
    return this.closing;
  }

  private async end(flushCapMs: number): Promise<void> {
    // Shutdown holds the streams open while it stops the agents (their turns' ends go out first).
    if (this.hold) await this.hold.catch(() => undefined);
    // Frames emitted just before (`daemon.stopping`, the ends of stopped turns) still go out ahead of the end.
    this.pacer.now();
    this.closed = true;
    this.pacer.cancel();
    this.unsubscribe();
    this.stopHeartbeat();
    const lastCursor = this.bus.latest;
    // `finish`: everything written to the response, the end included, was handed to the operating system.
    const flushed = [...this.clients].map(
      ({ res }) =>
        new Promise<boolean>((done) => {
          res.once('finish', () => done(true));
          res.once('close', () => done(res.writableFinished));
          res.end();
        }),
    );
    this.clients.clear();
    this.batches.clear();
    const sent = await waitAtMost(
      Promise.all(flushed).then((all) => all.every(Boolean)),
      flushCapMs,
      () => false,
    );
    for (const waiter of this.waiters.splice(0)) {
      try {
        waiter.done(sent === true && waiter.cursor <= lastCursor);
      } catch (error) {
        this.logger.error({ err: error }, 'a frame delivery callback threw');
      }
    }
  }

  /**
   * Emit only asks for a flush (sse-pacing.ts): frames emitted in one synchronous stretch (a turn's
   * burst), or while the last flush's spacing runs, go out together, one write per client, and
   * `bus.emit` costs O(1) beyond the first frame of the burst.
   */
  private onFrame(cursor: number): void {
    // A burst as long as half the ring (in frames or in bytes) is flushed at once, so no frame leaves
    // the ring unsent.
    this.pendingBytes += this.bus.bytesAt(cursor);
    if (++this.pendingFrames >= this.bus.capacity / 2 || this.pendingBytes >= this.bus.maxBytes / 2)
      return this.pacer.now();
    this.pacer.request();
  }

  private flush(): void {
    this.counts.flushes += 1;
    this.pendingFrames = 0;
    this.pendingBytes = 0;
    const latest = this.bus.latest;
    // Batches of the previous flush are done with (kept until now for clients catching up on drain).
    this.batches.clear();
    for (const client of this.clients) {
      if (!client.blocked) {
        this.pump(client);
      } else if (latest - client.lastCursor > this.maxLagFrames || !this.bus.slotAt(client.lastCursor + 1)) {
        this.drop(client);
      }
    }
    this.settle();
  }

  /**
   * Writes buffered frames after the client's cursor until its socket is full or it is current, in
   * batches of about 64 KB (sse-batches.ts) so one write never holds much more than a frame.
   */
  private pump(client: SseClient): void {
    while (!client.blocked && client.lastCursor < this.bus.latest && this.clients.has(client)) {
      const batch = this.batches.after(client.lastCursor, client.agentId, client.seen);
      if (!batch) return this.drop(client);
      client.lastCursor = batch.through;
      if (batch.chunk) {
        this.counts.writes += 1;
        client.writeFrames(batch, this.settleNow);
      }
    }
    client.caughtUp();
  }

  private readonly settleNow = (): void => this.settle();

  /** Too slow: cut it off; it resumes with its cursor and learns of the loss from `stream.gap`. */
  private drop(client: SseClient): void {
    if (!this.clients.delete(client)) return;
    this.droppedCount += 1;
    this.logger.warn(
      { lastCursor: client.lastCursor, latest: this.bus.latest },
      'event stream client too slow; disconnected',
    );
    client.res.destroy();
    if (this.clients.size === 0) this.stopHeartbeat();
    this.settle();
  }

  private remove(client: SseClient): void {
    if (this.clients.delete(client) && this.clients.size === 0) this.stopHeartbeat();
    // A client gone is no longer waited for.
    this.settle();
  }

  private startHeartbeat(): void {
    this.heartbeat = setInterval(() => {
      // A blocked client is skipped: its socket is not idle, and the comment would only queue up.
      for (const client of this.clients) if (!client.blocked) client.write(': heartbeat\n\n');
    }, this.heartbeatMs);
    this.heartbeat.unref();
  }

  private stopHeartbeat(): void {
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }
}
