/**
 * One `GET /events` stream of the SSE hub (sse.ts): where it is in the bus ring, whether its socket
 * accepts more, and which cursors Node handed to the operating system. The hub owns the ring and the
 * set of clients; a client only writes.
 *
 * Once the response's head is out (the hub's first writes, through `res.write`), a chunked stream
 * writes straight to its socket the chunks the hub framed once for every client (sse-batches.ts): one
 * `socket.write` of one Buffer per flush instead of `res.write`'s four writes into a corked socket
 * (size line, CRLF, data, CRLF: Node's HTTP and stream write path was 18% of the daemon's busy time
 * with 100 clients at 5,000 events/s). The bytes on the wire are the same; the response still ends the
 * stream (`res.end()` writes the last chunk after ours, in order, on the same socket), and its
 * `writableLength` counts the socket's buffer.
 */
import type { OutgoingHttpHeader, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FrameOrigin } from './bus.js';
import { chunkOf, type Batch } from './sse-batches.js';

/** A named SSE event without `id:` (a control frame); the data is not an EventFrame. */
export function controlFrame(name: string, data: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * Starts an event-stream answer: `headers` (those hooks set on the reply before it was hijacked) and the
 * stream's own. Frames are small and latency matters more than packet count; the stream is meant to stay idle.
 */
export function writeSseHead(res: ServerResponse, headers: Record<string, OutgoingHttpHeader | undefined>): void {
  res.writeHead(200, {
    ...Object.fromEntries(Object.entries(headers).filter(([, value]) => value !== undefined)),
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    // Reverse proxies must not buffer the stream.
    'x-accel-buffering': 'no',
  });
  res.socket?.setNoDelay(true);
  res.socket?.setTimeout(0);
}

export class SseClient {
  /** The socket buffer is full; frames wait in the ring until `drain`. */
  blocked = false;
  /** Cursor up to which every frame this client wants was handed to the operating system. */
  confirmed: number;
  /** Writes of frames whose callback has not come yet. */
  outstanding = 0;
  /** The response's socket, once chunks are written to it directly (see writeDirectly). */
  private socket: Socket | null = null;

  constructor(
    readonly res: ServerResponse,
    readonly agentId: string | null,
    /** Cursor of the last frame this client has been given or has skipped by its filter. */
    public lastCursor: number,
    /** Called once when a full socket drained (the hub pumps the frames that waited). */
    private readonly onDrain: (client: SseClient) => void,
    /** Resumed from an earlier run: the last frame it had there (repeats of it are left out). */
    readonly seen: FrameOrigin | null = null,
  ) {
    this.confirmed = lastCursor;
  }

  /**
   * From now on, chunks go straight to the socket, when the head was sent and the body is chunked (an
   * HTTP/1.1 client); otherwise (HTTP/1.0: no chunks) everything keeps going through `res.write`.
   * `res.socket` is set only while this response is the connection's current one, so nothing of the
   * response waits in its own buffer behind which a direct write could overtake.
   */
  writeDirectly(): void {
    const socket = this.res.socket;
    if (socket && this.res.headersSent && this.res.chunkedEncoding) this.socket = socket;
  }

  /**
   * Writes frames up to `lastCursor`; they are confirmed at once when nothing stays in Node's buffers,
   * else by the write's callback (`written`, after which the hub settles its waiters).
   */
  writeFrames(batch: Batch, written: () => void): void {
    const through = this.lastCursor;
    this.outstanding += 1;
    const done = (error?: Error | null) => {
      this.outstanding -= 1;
      if (error) return;
      this.confirmed = Math.max(this.confirmed, this.outstanding === 0 ? this.lastCursor : through);
      written();
    };
    if (this.socket) this.accepted(this.socket.write(batch.chunk!, done), this.socket);
    else this.write(batch.bytes!, done);
    // `writableLength` counts what the response and its socket still hold: 0 means the kernel has it.
    if (this.res.writableLength === 0) this.confirmed = Math.max(this.confirmed, through);
  }

  /** Nothing in flight: every frame given so far is out (or was not for this client). */
  caughtUp(): void {
    if (this.outstanding === 0) this.confirmed = Math.max(this.confirmed, this.lastCursor);
  }

  /** Control frames and heartbeats (rare: framed per write). */
  write(text: string | Buffer, written?: (error?: Error | null) => void): void {
    if (this.socket) {
      const { chunk } = chunkOf(typeof text === 'string' ? text : text.toString('utf8'));
      return this.accepted(this.socket.write(chunk, written), this.socket);
    }
    const accepted = this.res.write(text, written);
    // Node corks a chunked response's socket until the next tick; the frames go out now instead, so
    // that whether they left is known in this tick (see writeFrames).
    const socket = this.res.socket;
    if (socket && socket.writableCorked > 0) socket.uncork();
    this.accepted(accepted, this.res);
  }

  /**
   * A write the stream did not accept leaves the client blocked until that stream drains, unless the
   * operating system took every byte anyway: `res.write` answers false for any chunk over the
   * high-water mark (16 KB) written into the socket it corks, even when the uncork then wrote it all;
   * such a client blocked on every batch over 16 KB, skipped flushes until the `drain` of a later
   * tick, and a synchronous burst longer than the ring (a stalled emitter catching up) cut every
   * client that was keeping up. Only bytes still held in Node's buffers mean the socket is full.
   */
  private accepted(accepted: boolean, stream: ServerResponse | Socket): void {
    if (accepted || this.blocked || this.res.writableLength === 0) return;
    this.blocked = true;
    stream.once('drain', () => {
      this.blocked = false;
      this.onDrain(this);
    });
  }
}
