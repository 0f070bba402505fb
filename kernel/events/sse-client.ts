/**
 * One `GET /events` stream of the SSE hub (sse.ts): where it is in the bus ring, whether its socket
 * accepts more, and which cursors Node handed to the operating system. The hub owns the ring and the
 * set of clients; a client only writes.
 */
import type { ServerResponse } from 'node:http';

/** A named SSE event without `id:` (spec 6.6); the data is not an EventFrame. */
export function controlFrame(name: string, data: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}

export class SseClient {
  /** The socket buffer is full; frames wait in the ring until `drain`. */
  blocked = false;
  /** Cursor up to which every frame this client wants was handed to the operating system. */
  confirmed: number;
  /** Writes of frames whose callback has not come yet. */
  outstanding = 0;

  constructor(
    readonly res: ServerResponse,
    readonly agentId: string | null,
    /** Cursor of the last frame this client has been given or has skipped by its filter. */
    public lastCursor: number,
    /** Called once when a full socket drained (the hub pumps the frames that waited). */
    private readonly onDrain: (client: SseClient) => void,
  ) {
    this.confirmed = lastCursor;
  }

  /**
   * Writes frames up to `lastCursor`; they are confirmed at once when nothing stays in Node's buffers,
   * else by the write's callback (`written`, after which the hub settles its waiters).
   */
  writeFrames(bytes: Buffer, written: () => void): void {
    const through = this.lastCursor;
    this.outstanding += 1;
    this.write(bytes, (error) => {
      this.outstanding -= 1;
      if (error) return;
      this.confirmed = Math.max(this.confirmed, this.outstanding === 0 ? this.lastCursor : through);
      written();
    });
    // `writableLength` counts what the response and its socket still hold: 0 means the kernel has it.
    if (this.res.writableLength === 0) this.confirmed = Math.max(this.confirmed, through);
  }

  /** Nothing in flight: every frame given so far is out (or was not for this client). */
  caughtUp(): void {
    if (this.outstanding === 0) this.confirmed = Math.max(this.confirmed, this.lastCursor);
  }

  write(chunk: string | Buffer, written?: (error?: Error | null) => void): void {
    const accepted = this.res.write(chunk, written);
    // Node corks a chunked response's socket until the next tick; the frames go out now instead, so
    // that whether they left is known in this tick (see writeFrames).
    const socket = this.res.socket;
    if (socket && socket.writableCorked > 0) socket.uncork();
    if (accepted || this.blocked) return;
    this.blocked = true;
    this.res.once('drain', () => {
      this.blocked = false;
      this.onDrain(this);
    });
  }
}
