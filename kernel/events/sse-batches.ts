/**
 * What the SSE hub (sse.ts) writes: the frames after a client's cursor, as SSE events (`id:`, `event:`
 * and the `data:` the bus serialized once; a preview when oversized), joined into one Buffer of about
 * {@link WRITE_BATCH_CHARS}.
 *
 * Clients at the same cursor with the same filter (all of them, when they keep up; the ones that blocked
 * in the same flush, when they catch up on drain) get the same bytes: a batch is built and encoded once
 * and the one Buffer is written to each (profiled with 100 clients, building a string per client and
 * Node encoding it per write was most of the hub's own time). The Buffer holds the batch already framed
 * as one HTTP/1.1 chunk (`<size in hex>\r\n<frames>\r\n`), so a chunked stream writes it straight to its
 * socket, once per client: `res.write` would add the framing per client, as three more writes into a
 * corked socket (Node's write path was 18% of the daemon's busy time at 100 clients × 5,000 events/s);
 * an unchunked stream (an HTTP/1.0 client) writes the frames only, a view of the same Buffer.
 * A batch stays valid while its first frame is in the ring (frames never change and leave the ring
 * oldest first); batches are dropped at each flush (sse.ts) and once {@link BATCH_CACHE_BYTES} of them
 * are kept.
 */
import type { FrameOrigin, KernelBus } from './bus.js';

/** Frames are joined into writes of about this many characters. */
export const WRITE_BATCH_CHARS = 64 * 1024;
/** Batches kept for other clients at the same cursor. */
export const BATCH_CACHE_BYTES = 4 * 1024 * 1024;

/** Frames after one cursor, for one filter, as written. */
export interface Batch {
  /** The frames as one HTTP/1.1 chunk (size line, frames, CRLF); null when none of them was wanted. */
  chunk: Buffer | null;
  /** The frames alone (a view of `chunk`). */
  bytes: Buffer | null;
  /** The last cursor it covers. */
  through: number;
}

/** `text` as one HTTP/1.1 chunk of a chunked body, plus a view of the text's own bytes in it. */
export function chunkOf(text: string): { chunk: Buffer; bytes: Buffer } {
  const size = Buffer.byteLength(text, 'utf8');
  const head = `${size.toString(16)}\r\n`;
  const chunk = Buffer.allocUnsafe(head.length + size + 2);
  chunk.write(head, 0, 'latin1');
  chunk.write(text, head.length, 'utf8');
  chunk.write('\r\n', head.length + size, 'latin1');
  return { chunk, bytes: chunk.subarray(head.length, head.length + size) };
}

export class FrameBatches {
  private readonly batches = new Map<number | string, Batch>();
  private bytes = 0;

  constructor(private readonly bus: Pick<KernelBus, 'slotAt' | 'latest'>) {}

  /**
   * The batch after `after` for a client with this filter (null: every agent's frames); undefined
   * when the frame after `after` has left the ring (the client is too far behind). `seen`: a client
   * resuming from an earlier run is not given the repeats of frames it had there.
   */
  after(after: number, agentId: string | null, seen: FrameOrigin | null = null): Batch | undefined {
    if (!this.bus.slotAt(after + 1)) return undefined;
    let key: number | string = agentId === null ? after : `${after}:${agentId}`;
    if (seen) key = `${key}:${seen.epoch}:${seen.cursor}`;
    const known = this.batches.get(key);
    if (known) return known;
    const latest = this.bus.latest;
    let text = '';
    let cursor = after;
    while (cursor < latest && text.length < WRITE_BATCH_CHARS) {
      const slot = this.bus.slotAt(cursor + 1);
      if (!slot) break;
      cursor += 1;
      const event = slot.frame.event;
      if (seen && slot.repeats?.some((origin) => origin.epoch === seen.epoch && origin.cursor <= seen.cursor)) continue;
      if (agentId === null || event.agent_id === agentId)
        text += `id: ${cursor}\nevent: ${event.event_type}\ndata: ${slot.data}\n\n`;
    }
    const batch: Batch = text ? { ...chunkOf(text), through: cursor } : { chunk: null, bytes: null, through: cursor };
    if (this.bytes > BATCH_CACHE_BYTES) this.clear();
    this.batches.set(key, batch);
    this.bytes += batch.chunk?.length ?? 0;
    return batch;
  }

  clear(): void {
    this.batches.clear();
    this.bytes = 0;
  }
}
