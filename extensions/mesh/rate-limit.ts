/**
 * Fixed-window rate limits of the mesh server: per requester address, per sender and agent, per
 * agent inbox. Memory is bounded without letting anyone reset a limit by crowding the table:
 *
 * - a key is forgotten only once its window has ended (it would start afresh anyway); windows all last
 *   `windowMs` and the table keeps them in the order they began, so the ended ones are at its front
 *   and are dropped there, a few at a time, whenever a key is added;
 * - when the table holds `maxKeys` windows that are all still running, a new key is not added: it
 *   shares one overflow window (with the same limit) with every other key that did not fit, so a flood
 *   of new senders slows itself down and never pushes a limited sender out;
 * - `bucketOf` maps a key to the bucket it counts in (an IPv6 address to its /64, see
 *   {@link addressBucket}), so one host cannot multiply its allowance by its addresses;
 * - `group` adds a second limit shared by every key of a group (the whole-inbox rate of an agent):
 *   a take counts against both, and against neither when either is used up.
 *
 * Time is `performance.now()` (monotonic): setting the wall clock back does not lengthen a window.
 */
import { isIPv4, isIPv6 } from 'node:net';

export interface RateLimiterOptions {
  /** Takes allowed per bucket per window. */
  limit: number;
  windowMs: number;
  /** Windows kept at most (default 10,000); past it, new buckets share one overflow window. */
  maxKeys?: number;
  /** The bucket a key counts in (default: the key itself). */
  bucketOf?: (key: string) => string;
  /** A limit shared by the keys of one group: `of(key)` names the group. */
  group?: { of: (key: string) => string; limit: number; maxKeys?: number };
}

interface Window {
  start: number;
  count: number;
}

export const DEFAULT_MAX_KEYS = 10_000;

export class RateLimiter {
  /** Bucket → its running window, in the order the windows began (Map keeps insertion order). */
  private readonly windows = new Map<string, Window>();
  private overflow: Window = { start: Number.NEGATIVE_INFINITY, count: 0 };
  private readonly limit: number;
  private readonly windowMs: number;
  private readonly maxKeys: number;
  private readonly bucketOf: (key: string) => string;
  private readonly group: { of: (key: string) => string; limiter: RateLimiter } | undefined;

  constructor(options: RateLimiterOptions) {
    this.limit = options.limit;
    this.windowMs = options.windowMs;
    this.maxKeys = Math.max(1, options.maxKeys ?? DEFAULT_MAX_KEYS);
    this.bucketOf = options.bucketOf ?? ((key) => key);
    this.group = options.group && {
      of: options.group.of,
      limiter: new RateLimiter({
        limit: options.group.limit,
        windowMs: options.windowMs,
        maxKeys: options.group.maxKeys ?? this.maxKeys,
      }),
    };
  }

  /** How many windows are kept (the overflow window not counted). */
  get size(): number {
    return this.windows.size;
  }

  /** 0 when `key` may go on now (and counts it, in its group too), else the whole seconds until it may. */
  take(key: string, now = performance.now()): number {
    const window = this.windowOf(this.bucketOf(key), now);
    if (window.count >= this.limit) return this.waitOf(window, now);
    if (this.group) {
      const wait = this.group.limiter.take(this.group.of(key), now);
      if (wait > 0) return wait;
    }
    window.count++;
    return 0;
  }

  private windowOf(bucket: string, now: number): Window {
    const kept = this.windows.get(bucket);
    if (kept && now - kept.start < this.windowMs) return kept;
    // Ended: it goes, and the bucket starts again at the end of the order.
    if (kept) this.windows.delete(bucket);
    this.dropEnded(now);
    if (this.windows.size < this.maxKeys) {
      const fresh = { start: now, count: 0 };
      this.windows.set(bucket, fresh);
      return fresh;
    }
    if (now - this.overflow.start >= this.windowMs) this.overflow = { start: now, count: 0 };
    return this.overflow;
  }

  /** Drops the windows that have ended; they are at the front, so this stops at the first running one. */
  private dropEnded(now: number): void {
    for (const [bucket, window] of this.windows) {
      if (now - window.start < this.windowMs) return;
      this.windows.delete(bucket);
    }
  }

  private waitOf(window: Window, now: number): number {
    return Math.max(1, Math.ceil((window.start + this.windowMs - now) / 1000));
  }
}

/** The eight 16-bit groups of an IPv6 address (zone dropped, an embedded IPv4 tail folded in). */
function ipv6Groups(address: string): number[] {
  let text = address.split('%')[0]!;
  const v4 = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const front = head ? head.split(':') : [];
  const back = tail === undefined ? [] : tail ? tail.split(':') : [];
  const zeros = tail === undefined ? [] : new Array<string>(8 - front.length - back.length).fill('0');
  return [...front, ...zeros, ...back].map((group) => Number.parseInt(group, 16));
}

/**
 * The rate bucket of a requester address: an IPv4 address is its own bucket (also written IPv4-mapped,
 * `::ffff:a.b.c.d`); an IPv6 address counts in its /64, the block one host or one home is given, so
 * stepping through the addresses of a /64 does not add allowance. Anything else is one bucket `?`.
 */
export function addressBucket(address: string | undefined): string {
  if (!address) return '?';
  if (isIPv4(address)) return address;
  if (!isIPv6(address)) return '?';
  const groups = ipv6Groups(address);
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    return `${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`;
  }
  return `${groups
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(':')}::/64`;
}
