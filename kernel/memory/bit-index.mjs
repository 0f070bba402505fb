// The 1-bit copies of one agent file's vectors (agt_memory_bits), held in memory by the search worker so a
// large search scans typed arrays instead of reading every row through SQLite (docs/memory.md "Search").
// The distance is Hamming's (bits that differ), what libsql's `vector_distance_cos` gives on 1-bit vectors.
// Plain JavaScript: the worker loads it without the TypeScript loader.

/** Bytes of a 1-bit vector of `dims` dimensions (libsql's BLOB holds them first, then its own trailer). */
export const bitBytes = (dims) => Math.ceil(dims / 8);

export class BitIndex {
  /** @param {number} bytes bytes of bits per vector */
  constructor(bytes) {
    this.bytes = bytes;
    // Scanned 32 bits at a time; the padding bits are 0 in every vector, so they never differ.
    this.words = Math.ceil(bytes / 4);
    this.capacity = 1024;
    this.size = 0;
    this.live = 0;
    this.ids = new Float64Array(this.capacity);
    this.bits = new Uint32Array(this.capacity * this.words);
    this.view = new Uint8Array(this.bits.buffer);
    /** @type {Map<number, number>} memory id -> slot */
    this.slots = new Map();
  }

  /** Sets (adds or replaces) the bits of memory `id` from a 1-bit BLOB. */
  set(id, blob) {
    let slot = this.slots.get(id);
    if (slot === undefined) {
      if (this.size === this.capacity) this.grow();
      slot = this.size++;
      this.slots.set(id, slot);
      this.live++;
    }
    this.ids[slot] = id;
    const at = slot * this.words * 4;
    this.view.fill(0, at, at + this.words * 4);
    this.view.set(blob.length > this.bytes ? blob.subarray(0, this.bytes) : blob, at);
  }

  /** Takes memory `id` out (a forgotten memory, a dropped vector). */
  remove(id) {
    const slot = this.slots.get(id);
    if (slot === undefined) return;
    this.slots.delete(id);
    this.ids[slot] = -1;
    this.live--;
    // Holes are skipped by the scan; packed again once they are a quarter of the slots.
    if (this.size - this.live > Math.max(64, this.size / 4)) this.pack();
  }

  /**
   * The ids of the `k` vectors nearest to `query` (a 1-bit BLOB) by Hamming distance, nearest first; at the
   * border distance, the lowest slots (oldest vectors) are taken first.
   */
  nearest(query, k) {
    const words = this.words;
    const q = new Uint32Array(words);
    new Uint8Array(q.buffer).set(query.subarray(0, Math.min(this.bytes, query.length)));
    const size = this.size;
    const distance = new Uint16Array(size);
    // How many vectors are at each distance: the k-th smallest is found without sorting.
    const histogram = new Uint32Array(words * 32 + 2);
    const bits = this.bits;
    const ids = this.ids;
    for (let slot = 0, at = 0; slot < size; slot++, at += words) {
      if (ids[slot] < 0) {
        distance[slot] = 65535;
        continue;
      }
      let d = 0;
      // Bits that differ, counted 32 at a time (the parallel popcount) into four byte-wide sums that are
      // added up every 31 words, before a byte (at most 8 per word) could overflow.
      for (let from = 0; from < words; from += 31) {
        let lanes = 0;
        const to = Math.min(words, from + 31);
        for (let i = from; i < to; i++) {
          let x = bits[at + i] ^ q[i];
          x -= (x >>> 1) & 0x55555555;
          x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
          lanes += (x + (x >>> 4)) & 0x0f0f0f0f;
        }
        lanes = (lanes & 0x00ff00ff) + ((lanes >>> 8) & 0x00ff00ff);
        d += (lanes & 0xffff) + (lanes >>> 16);
      }
      distance[slot] = d;
      histogram[d]++;
    }
    let border = 0;
    for (let seen = 0; border < histogram.length; border++) {
      seen += histogram[border];
      if (seen >= k) break;
    }
    const buckets = Array.from({ length: border + 1 }, () => []);
    let taken = 0;
    for (let slot = 0; slot < size && taken < k; slot++) {
      const d = distance[slot];
      if (d < border) buckets[d].push(ids[slot]), taken++;
    }
    for (let slot = 0; slot < size && taken < k; slot++) {
      if (distance[slot] === border) buckets[border].push(ids[slot]), taken++;
    }
    return buckets.flat().slice(0, k);
  }

  grow() {
    this.capacity *= 2;
    const ids = new Float64Array(this.capacity);
    ids.set(this.ids);
    const bits = new Uint32Array(this.capacity * this.words);
    bits.set(this.bits);
    this.ids = ids;
    this.bits = bits;
    this.view = new Uint8Array(bits.buffer);
  }

  pack() {
    let to = 0;
    for (let from = 0; from < this.size; from++) {
      const id = this.ids[from];
      if (id < 0) continue;
      if (to !== from) {
        this.ids[to] = id;
        this.bits.copyWithin(to * this.words, from * this.words, (from + 1) * this.words);
        this.slots.set(id, to);
      }
      to++;
    }
    this.size = to;
  }
}
