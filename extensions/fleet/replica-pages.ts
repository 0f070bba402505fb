/**
 * An agent file's replica as pages (docs/fleet.md, "Replication"): the kernel hands a small file's copy as
 * its SQLite pages in the file's own layout, so two copies differ only in the pages a write changed. A copy
 * is stored either whole (a base) or as the pages that changed since the copy before it (a delta): each
 * page as its 4-byte page number, then its bytes. Applying a base's deltas in order gives the newest copy.
 */
import { createHash } from 'node:crypto';

/** Bytes of one page's digest in {@link pageDigests}. */
const DIGEST_BYTES = 20;

/** One SHA-1 per page, end to end: what a later copy is compared with (20 bytes a page, not the page). */
export function pageDigests(image: Uint8Array, pageSize: number): Buffer {
  const pages = image.length / pageSize;
  const digests = Buffer.alloc(pages * DIGEST_BYTES);
  for (let i = 0; i < pages; i++)
    createHash('sha1')
      .update(image.subarray(i * pageSize, (i + 1) * pageSize))
      .digest()
      .copy(digests, i * DIGEST_BYTES);
  return digests;
}

/** The pages of `image` whose digest differs from `before` (or that `before` lacks), as a delta. */
export function encodeDelta(image: Uint8Array, pageSize: number, digests: Buffer, before: Buffer): Buffer {
  const parts: Uint8Array[] = [];
  const pages = image.length / pageSize;
  for (let i = 0; i < pages; i++) {
    const at = i * DIGEST_BYTES;
    if (
      at + DIGEST_BYTES <= before.length &&
      digests.compare(before, at, at + DIGEST_BYTES, at, at + DIGEST_BYTES) === 0
    )
      continue;
    const number = Buffer.alloc(4);
    number.writeUInt32BE(i + 1);
    parts.push(number, image.subarray(i * pageSize, (i + 1) * pageSize));
  }
  return Buffer.concat(parts);
}

/**
 * `image` with a delta applied, `pages` long (a file shrinks when its last pages are freed); throws on a
 * delta that is not whole pages.
 */
export function applyDelta(image: Buffer, delta: Uint8Array, pageSize: number, pages: number): Buffer {
  const out = Buffer.alloc(pages * pageSize);
  image.copy(out, 0, 0, Math.min(image.length, out.length));
  const record = 4 + pageSize;
  if (delta.length % record !== 0) throw new Error('a replica delta is not whole pages');
  const view = Buffer.from(delta.buffer, delta.byteOffset, delta.length);
  for (let at = 0; at < view.length; at += record) {
    const pgno = view.readUInt32BE(at);
    if (pgno < 1 || pgno > pages) throw new Error(`a replica delta names page ${pgno} of ${pages}`);
    view.copy(out, (pgno - 1) * pageSize, at + 4, at + record);
  }
  return out;
}
