/**
 * The Server-Sent Events fan-out behind `GET /events` (spec 6): control frames, replay, live frames,
 * heartbeats and slow-client handling (where a stream starts is decided in `resume.ts`).
 *
 * Flow control without per-client queues: the bus ring (the last 1000 frames, at most 32 MB) is the only queue. Each
 * client remembers the last cursor it has been given (`lastCursor`). An emit only schedules a flush
 * (a microtask); the flush writes each client the frames after its cursor, batched, while its socket
 * accepts data. Once `res.write` returns false the client is "blocked": later frames stay in the ring
 * and it catches up on `drain`. A blocked client more than `maxLagFrames` behind, or whose next frame
 * has left the ring, is disconnected: it resumes with its cursor and gets a `stream.gap`. So a stalled
 * client costs at most one socket buffer (highWaterMark plus one batch), and `bus.emit` stays
 * synchronous and cheap (O(1) per frame, one O(clients) flush per burst).
 */
import type { OutgoingHttpHeader, ServerResponse } from 'node:http';
import type { EventFrame } from '../../contracts/events.js';
import type { Logger } from '../../contracts/logger.js';
import { waitAtMost } from '../deadline.js';
import type { KernelBus } from './bus.js';
import { daemonShuttingDown } from './errors.js';
import type { ResumePlan, ResumeRequest } from './resume.js';

export const HEARTBEAT_MS = 30_000;
/** How long shutdown waits for stream ends to flush; well inside the 3 s HTTP close deadline. */
export const CLOSE_FLUSH_CAP_MS = 500;
/** Frames are joined into writes of about this many characters. */
const WRITE_BATCH_CHARS = 64 * 1024;

export interface SseHubOptions {
  /** Interval of the `: heartbeat` comment (spec: 30 s). Internal: tests shorten it. */
  heartbeatMs?: number;
  /** A blocked client more than this many frames behind the newest is disconnected (default: the ring size). */
  maxLagFrames?: number;
}

interface SseClient {
  res: ServerResponse;
  agentId: string | null;
  /** Cursor of the last frame this client has been given or has skipped by its filter. */
  lastCursor: number;
  /** The socket buffer is full; frames wait in the ring until `drain`. */
  blocked: boolean;
}

/** A named SSE event without `id:` (spec 6.6); the data is not an EventFrame. */
export function controlFrame(name: string, data: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}

export class SseHub {
  private readonly clients = new Set<SseClient>();
  /** Built once per frame, however many clients receive it. */
  private readonly texts = new WeakMap<EventFrame, string>();
  private heartbeatMs: number;
  private maxLagFrames: number;
  private heartbeat: NodeJS.Timeout | undefined;
  private readonly unsubscribe: () => void;
  private closed = false;
  private flushScheduled = false;
  private pendingFrames = 0;
  private pendingBytes = 0;
  private droppedCount = 0;

  constructor(
    private readonly bus: KernelBus,
    private readonly logger: Logger,
    options: SseHubOptions = {},
  ) {
    this.heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
    this.maxLagFrames = options.maxLagFrames ?? bus.capacity;
    this.unsubscribe = bus.subscribeFrames((frame) => this.onFrame(frame.cursor));
  }

  /** Internal knobs (tests): a changed heartbeat applies at once to the running timer. */
  configure(options: SseHubOptions): void {
    if (options.maxLagFrames !== undefined) this.maxLagFrames = options.maxLagFrames;
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
    res.writeHead(200, {
      // Headers hooks set on the reply before it was hijacked.
      ...Object.fromEntries(Object.entries(headers).filter(([, value]) => value !== undefined)),
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      // Reverse proxies must not buffer the stream.
      'x-accel-buffering': 'no',
    });
    // Frames are small and latency matters more than packet count; the stream is meant to stay idle.
    res.socket?.setNoDelay(true);
    res.socket?.setTimeout(0);
    const client: SseClient = { res, agentId: request.agentId, lastCursor: plan.startAfter, blocked: false };
    this.clients.add(client);
    res.once('close', () => this.remove(client));
    const cursors = { oldestCursor: this.bus.oldestCursor, latestCursor: this.bus.latest };
    this.write(client, ': connected\n\n');
    this.write(client, controlFrame('stream.hello', { epoch: this.bus.epoch, ...cursors }));
    if (plan.gap) {
      this.write(
        client,
        controlFrame('stream.gap', { reason: plan.gap, epoch: this.bus.epoch, requestedCursor: request.cursor, ...cursors }),
      );
    }
    this.pump(client);
    if (!this.heartbeat) this.startHeartbeat();
  }

  /**
   * Ends every stream and releases the timer and the bus. Resolves once the ends are flushed (clients
   * see a clean end of stream), or after `flushCapMs` for clients too slow to take them: fastify cuts
   * those sockets right after.
   */
  async close(flushCapMs = CLOSE_FLUSH_CAP_MS): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Frames emitted just before shutdown (`daemon.stopping`) still go out ahead of the end.
    this.flush();
    this.unsubscribe();
    this.stopHeartbeat();
    const flushed = [...this.clients].map(
      ({ res }) =>
        new Promise<void>((done) => {
          res.once('finish', done);
          res.once('close', done);
          res.end();
        }),
    );
    this.clients.clear();
    await waitAtMost(Promise.all(flushed), flushCapMs, () => undefined);
  }

  /**
   * Emit only schedules a flush: frames emitted in one synchronous stretch (a turn's burst) go out
   * together, one write per client, and `bus.emit` costs O(1) beyond the first frame of the burst.
   */
  private onFrame(cursor: number): void {
    // A burst as long as half the ring (in frames or in bytes) is flushed at once, so no frame leaves
    // the ring unsent.
    this.pendingBytes += this.bus.bytesAt(cursor);
    if (++this.pendingFrames >= this.bus.capacity / 2 || this.pendingBytes >= this.bus.maxBytes / 2) return this.flush();
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    queueMicrotask(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    this.pendingFrames = 0;
    this.pendingBytes = 0;
    const latest = this.bus.latest;
    for (const client of this.clients) {
      if (!client.blocked) {
        this.pump(client);
      } else if (latest - client.lastCursor > this.maxLagFrames || !this.bus.frameAt(client.lastCursor + 1)) {
        this.drop(client);
      }
    }
  }

  /**
   * Writes buffered frames after the client's cursor until its socket is full or it is current, in
   * writes of about {@link WRITE_BATCH_CHARS} so one write never holds much more than a frame.
   */
  private pump(client: SseClient): void {
    let batch = '';
    while (!client.blocked && client.lastCursor < this.bus.latest && this.clients.has(client)) {
      const frame = this.bus.frameAt(client.lastCursor + 1);
      if (!frame) return this.drop(client);
      client.lastCursor = frame.cursor;
      if (this.wants(client, frame)) batch += this.text(frame);
      if (batch.length >= WRITE_BATCH_CHARS) {
        this.write(client, batch);
        batch = '';
      }
    }
    if (batch) this.write(client, batch);
  }

  private write(client: SseClient, text: string): void {
    if (client.res.write(text) || client.blocked) return;
    client.blocked = true;
    client.res.once('drain', () => {
      client.blocked = false;
      if (this.clients.has(client)) this.pump(client);
    });
  }

  private wants(client: SseClient, frame: EventFrame): boolean {
    return client.agentId === null || frame.event.agent_id === client.agentId;
  }

  /** The frame as an SSE event; its `data:` was serialized once by the bus (a preview when oversized). */
  private text(frame: EventFrame): string {
    let text = this.texts.get(frame);
    if (text === undefined) {
      const data = this.bus.dataAt(frame.cursor) ?? JSON.stringify(frame);
      text = `id: ${frame.cursor}\nevent: ${frame.event.event_type}\ndata: ${data}\n\n`;
      this.texts.set(frame, text);
    }
    return text;
  }

  /** Too slow: cut it off; it resumes with its cursor and learns of the loss from `stream.gap`. */
  private drop(client: SseClient): void {
    if (!this.clients.delete(client)) return;
    this.droppedCount += 1;
    this.logger.warn({ lastCursor: client.lastCursor, latest: this.bus.latest }, 'event stream client too slow; disconnected');
    client.res.destroy();
    if (this.clients.size === 0) this.stopHeartbeat();
  }

  private remove(client: SseClient): void {
    if (this.clients.delete(client) && this.clients.size === 0) this.stopHeartbeat();
  }

  private startHeartbeat(): void {
    this.heartbeat = setInterval(() => {
      // A blocked client is skipped: its socket is not idle, and the comment would only queue up.
      for (const client of this.clients) if (!client.blocked) this.write(client, ': heartbeat\n\n');
    }, this.heartbeatMs);
    this.heartbeat.unref();
  }

  private stopHeartbeat(): void {
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }
}
