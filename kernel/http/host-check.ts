/** Parsing of Host and Origin values for the request guard (DNS-rebinding and CSRF protection). */
import { BlockList, isIP } from 'node:net';

export interface HostPort {
  host: string;
  port: number | null;
}

/** Parses `name`, `name:port`, `1.2.3.4:port`, `[::1]:port`; null for anything malformed. */
export function parseHostHeader(value: string | undefined): HostPort | null {
  if (!value) return null;
  const raw = value.trim().toLowerCase();
  let host: string;
  let portText: string | undefined;
  if (raw.startsWith('[')) {
    const end = raw.indexOf(']');
    if (end < 0) return null;
    host = raw.slice(1, end);
    const rest = raw.slice(end + 1);
    if (rest !== '' && !rest.startsWith(':')) return null;
    portText = rest ? rest.slice(1) : undefined;
    if (isIP(host) !== 6) return null;
  } else {
    const colon = raw.lastIndexOf(':');
    if (colon >= 0 && raw.indexOf(':') !== colon) return null; // bare IPv6 without brackets
    host = colon >= 0 ? raw.slice(0, colon) : raw;
    portText = colon >= 0 ? raw.slice(colon + 1) : undefined;
    if (host.endsWith('.')) host = host.slice(0, -1);
    if (!/^[a-z0-9.-]+$/.test(host)) return null;
  }
  let port: number | null = null;
  if (portText !== undefined) {
    if (!/^\d{1,5}$/.test(portText)) return null;
    port = Number(portText);
    if (port > 65535) return null;
  }
  return { host, port };
}

// The guard asks both questions on every request, nearly always about the same few values (the
// client's address, the Host it used): the last answer of each is kept.
let lastAddress: string | undefined;
let lastAddressLoopback = false;

/** True for 127.0.0.0/8, ::1 and IPv4-mapped loopback: parsed as addresses, never by string prefix. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  if (address === lastAddress) return lastAddressLoopback;
  const loopback = loopbackAddress(address);
  lastAddress = address;
  lastAddressLoopback = loopback;
  return loopback;
}

function loopbackAddress(address: string): boolean {
  let value = address.toLowerCase();
  if (value.startsWith('::ffff:') && isIP(value.slice(7)) === 4) value = value.slice(7);
  if (isIP(value) === 4) return value.split('.')[0] === '127';
  if (isIP(value) === 6) return value === '::1' || value === '0:0:0:0:0:0:0:1';
  return false;
}

const isLoopbackName = (host: string) => host === 'localhost' || host.endsWith('.localhost');

/**
 * 0.0.0.0/8 and `::`: "this host" addresses a browser sends to loopback, never a name for a server. Matched
 * by node's own address parser (`BlockList`), which checks every IPv6 spelling of them: `::0.0.0.0`,
 * `::ffff:0:0` and `0:0:0:0:0:ffff:0:1` (IPv4-mapped in hex) included, not only the dotted forms.
 */
const UNSPECIFIED = new BlockList();
UNSPECIFIED.addSubnet('0.0.0.0', 8, 'ipv4');
UNSPECIFIED.addAddress('::', 'ipv6');
export function isUnspecifiedAddress(host: string): boolean {
  const family = isIP(host);
  return family === 4
    ? UNSPECIFIED.check(host, 'ipv4')
    : family === 6
      ? UNSPECIFIED.check(host.toLowerCase(), 'ipv6')
      : false;
}

export interface HostPolicy {
  /** The port the server is bound to, read per request (0 before it listens). */
  boundPort: () => number;
  /** Names (`name` or `name:port`, also IP literals) that name this server; an entry without a port allows any port. */
  allowedHosts: readonly string[];
  /**
   * When given, the only IP literals accepted (on the bound port): the server's own addresses. Without
   * it (the main API), any IP literal on the bound port names the server: a rebinding attack needs a name.
   */
  boundAddresses?: () => readonly string[];
}

let lastHost: { value: string; policy: HostPolicy; port: number; allowed: boolean } | undefined;

/**
 * Does this Host header (or the authority of an absolute-form request line) name this server?
 * Loopback names (`localhost`, `*.localhost`) on any port; IP literals only on the bound port (and,
 * with `boundAddresses`, only those addresses); `0.0.0.0` and `::` never; other names only from
 * `allowedHosts`.
 */
export function hostAllowed(value: string | undefined, policy: HostPolicy): boolean {
  if (value === undefined) return false;
  const port = policy.boundPort();
  // Cached only for policies that do not depend on the machine's interfaces (the main API's hot path).
  const cacheable = policy.boundAddresses === undefined;
  if (
    cacheable &&
    lastHost !== undefined &&
    lastHost.value === value &&
    lastHost.policy === policy &&
    lastHost.port === port
  )
    return lastHost.allowed;
  const allowed = hostNamesServer(value, policy, port);
  if (cacheable) lastHost = { value, policy, port, allowed };
  return allowed;
}

const sameAddress = (a: string, b: string) => {
  const strip = (value: string) => (value.startsWith('::ffff:') && isIP(value.slice(7)) === 4 ? value.slice(7) : value);
  return strip(a.toLowerCase()) === strip(b.toLowerCase());
};

function hostNamesServer(value: string, policy: HostPolicy, boundPort: number): boolean {
  const parsed = parseHostHeader(value);
  if (!parsed) return false;
  const { host, port } = parsed;
  if (isLoopbackName(host)) return true;
  if (isIP(host) !== 0) {
    if (isUnspecifiedAddress(host)) return false;
    const listed = policy.allowedHosts.some((entry) => entryMatches(entry, host, port));
    if (listed) return true;
    if ((port ?? 80) !== boundPort) return false;
    return policy.boundAddresses === undefined || policy.boundAddresses().some((address) => sameAddress(address, host));
  }
  return policy.allowedHosts.some((entry) => entryMatches(entry, host, port));
}

function entryMatches(entry: string, host: string, port: number | null): boolean {
  const allowed = parseHostHeader(entry);
  if (!allowed || allowed.host !== host) return false;
  return allowed.port === null || allowed.port === port;
}

/**
 * An Origin's one allowed shape (RFC 6454's serialization of an http origin): `http://`, a host
 * (`name`, IPv4 or `[v6]`) and an optional port without leading zeros, nothing else. A path, query,
 * fragment, userinfo, trailing slash or dot, white space or a second origin (two headers joined by node) fails
 * the shape; such a header names no origin a browser sends, so it is foreign.
 */
const ORIGIN = /^http:\/\/(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(0|[1-9][0-9]{0,4}))?$/i;

/** The host and port of an Origin of the allowed shape ({@link ORIGIN}), or null. */
export function parseOrigin(origin: string): HostPort | null {
  const match = ORIGIN.exec(origin);
  // `localhost.` is another origin than `localhost` to a browser: no trailing dot is taken off here.
  if (match === null || match[1]!.endsWith('.')) return null;
  return parseHostHeader(match[2] === undefined ? match[1] : `${match[1]}:${match[2]}`);
}

/**
 * An Origin is same-origin when it has the allowed shape and names exactly the host and port the request was sent to.
 */
export function originIsSameOrigin(origin: string, hostHeader: string | undefined): boolean {
  if (!hostHeader) return false;
  const a = parseOrigin(origin);
  const b = parseHostHeader(hostHeader);
  if (!a || !b) return false;
  return a.host === b.host && (a.port ?? 80) === (b.port ?? 80);
}

/**
 * More than one `Host` field line (RFC 9112 section 3.2: a server answers 400), equal ones too: node
 * keeps the first one in `headers.host`, so a second would name a server nobody checked.
 */
export function hasRepeatedHost(rawHeaders: readonly string[]): boolean {
  let seen = false;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') {
      if (seen) return true;
      seen = true;
    }
  }
  return false;
}

const ABSOLUTE_FORM = /^http:\/\/([^/?#]*)/i;

/**
 * The authority of a request line in absolute form (`GET http://host:port/path HTTP/1.1`), which HTTP
 * says wins over the Host header and which fastify routes like `/path`: it must name this server too.
 * `null` for the origin form (`/path`) and `OPTIONS *`; `false` for anything else (another scheme,
 * `https://` sent in clear, a bare authority), which is refused.
 */
export function absoluteFormAuthority(target: string | undefined, method: string | undefined): string | null | false {
  if (target === undefined || target.startsWith('/')) return null;
  if (target === '*' && method === 'OPTIONS') return null;
  const match = ABSOLUTE_FORM.exec(target);
  return match ? match[1]! : false;
}
