/**
 * How many connections each HTTP server of the daemon holds open at once: every socket is a file
 * descriptor of the one process, so a flood of idle sockets on one server (the mesh port, open to
 * other machines) could use up the descriptors and break the others (the main API's `/health`, agent
 * files, model calls). Each server therefore has a budget of its own, out of the process's limit:
 * - at most `maxConnections` in all (node's `server.maxConnections`: a connection over it is closed
 *   as it is accepted, without an answer);
 * - at most `maxConnectionsPerAddress` from one client address (an IPv6 client by its /64, which one
 *   host usually holds whole), so one client cannot take the whole budget from the others; a
 *   connection over it is closed at once, without an answer.
 * Defaults, per server: an eighth of the process's open-file limit, at most 4,096 (at least 16), and a
 * quarter of that per address; so two servers at their caps still leave three quarters of the limit to the rest.
 * Settings `server.maxConnections` and `server.maxConnectionsPerAddress` replace them (docs/security.md,
 * "Connection limits"); they are read on every connection, so a change applies to the next one.
 */
import { readFileSync } from 'node:fs';
import { isIP, type Server, type Socket } from 'node:net';

/** One server's connection budget. */
export interface ConnectionCaps {
  maxConnections: number;
  maxConnectionsPerAddress: number;
}

/** Assumed where the open-file limit cannot be read (Windows). */
const ASSUMED_FILE_LIMIT = 4096;
const MAX_DEFAULT_CONNECTIONS = 4096;

let fileLimit: number | undefined;

const limitOf = (value: unknown): number | undefined =>
  value === 'unlimited'
    ? Number.MAX_SAFE_INTEGER
    : typeof value === 'number' && value > 0
      ? value
      : typeof value === 'string' && /^\d+$/.test(value)
        ? Number(value)
        : undefined;

/**
 * The process's soft limit on open files (node raises it to the hard limit at start-up): from
 * `/proc/self/limits` on Linux (a file read), else from node's diagnostic report (about 20 ms, once).
 */
export function openFileLimit(): number {
  if (fileLimit === undefined) {
    let limit: number | undefined;
    try {
      limit = limitOf(/^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1]);
    } catch {
      // Not Linux: ask the report below.
    }
    if (limit === undefined) {
      try {
        const report = process.report?.getReport() as { userLimits?: { open_files?: { soft?: unknown } } } | undefined;
        limit = limitOf(report?.userLimits?.open_files?.soft);
      } catch {
        // No report: keep the assumption.
      }
    }
    fileLimit = limit ?? ASSUMED_FILE_LIMIT;
  }
  return fileLimit;
}

/** The default budget of one server, from the process's open-file limit. */
export function defaultConnectionCaps(limit = openFileLimit()): ConnectionCaps {
  const maxConnections = Math.max(16, Math.min(MAX_DEFAULT_CONNECTIONS, Math.floor(limit / 8)));
  return { maxConnections, maxConnectionsPerAddress: Math.max(4, Math.floor(maxConnections / 4)) };
}

/** The caps in force: each field from the first source that sets it, else the default. */
export function resolveCaps(...sources: Array<Partial<ConnectionCaps> | undefined>): ConnectionCaps {
  const caps = defaultConnectionCaps();
  for (const key of ['maxConnections', 'maxConnectionsPerAddress'] as const) {
    const value = sources.find((source) => source?.[key] !== undefined)?.[key];
    if (value !== undefined) caps[key] = value;
  }
  return caps;
}

/** The address a per-address count is kept under: IPv4 (also IPv4-mapped) as is, IPv6 by its /64. */
export function addressBucket(address: string | undefined): string {
  if (address === undefined) return '?';
  const lower = address.toLowerCase();
  if (lower.startsWith('::ffff:') && isIP(lower.slice(7)) === 4) return lower.slice(7);
  if (isIP(lower) !== 6) return lower;
  return `${expandIPv6(lower).slice(0, 4).join(':')}::/64`;
}

/** The eight groups of an IPv6 address (an embedded IPv4 tail as two groups). */
function expandIPv6(address: string): string[] {
  let text = address.replace(/%.*$/, '');
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)?.[1];
  if (v4 !== undefined) {
    const [a, b, c, d] = v4.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, -v4.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const middle = tail === undefined ? [] : new Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...middle, ...right].map((group) => group.replace(/^0+(?=.)/, ''));
}

/**
 * Applies `caps()` to `server`: read when installed and on every accepted connection (a change of the
 * total applies from the next connection on). Call before the server listens.
 */
export function installConnectionCaps(server: Server, caps: () => ConnectionCaps): void {
  const open = new Map<string, number>();
  server.maxConnections = caps().maxConnections;
  // Before node's HTTP listener: a refused socket never gets a parser.
  server.prependListener('connection', (socket: Socket) => {
    const current = caps();
    server.maxConnections = current.maxConnections;
    const bucket = addressBucket(socket.remoteAddress);
    const count = open.get(bucket) ?? 0;
    if (count >= current.maxConnectionsPerAddress) {
      socket.destroy();
      return;
    }
    open.set(bucket, count + 1);
    socket.once('close', () => {
      const left = (open.get(bucket) ?? 1) - 1;
      if (left <= 0) open.delete(bucket);
      else open.set(bucket, left);
    });
  });
}
