/**
 * Where `sys_fetch` may connect. A request runs with the daemon's network position, so addresses that
 * only the daemon's host can reach are refused unless the owner allows the host in the agent's config
 * (`security.fetch_allow_hosts`; `security` is owner-only, the agent's own config tool cannot change it):
 *
 * - IPv4: 0.0.0.0/8, 10/8, 100.64/10 (CGNAT), 127/8, 169.254/16 (link-local, cloud metadata), 172.16/12,
 *   192.0.0/24, 192.0.2/24, 192.88.99/24, 192.168/16, 198.18/15, 198.51.100/24, 203.0.113/24,
 *   224/4 (multicast), 240/4 (reserved, broadcast);
 * - IPv6: ::/128, ::1, fc00::/7 (ULA), fe80::/10 (link-local), fec0::/10, ff00::/8 (multicast), 100::/64,
 *   2001:db8::/32, 2001::/32 (Teredo), 64:ff9b:1::/48; addresses that embed an IPv4 address (IPv4-mapped
 *   ::ffff:0:0/96, IPv4-compatible ::/96, NAT64 64:ff9b::/96, 6to4 2002::/16) are judged by that address.
 *
 * The check runs on the addresses a connection actually uses: after DNS resolution (every address a
 * name resolves to must pass), for every redirect hop. So a name that resolves to 127.0.0.1, or a
 * public page that redirects to a private one, is refused too.
 */
import { isIP } from 'node:net';

const V4_BLOCKS: Array<[string, number, string]> = [
  ['0.0.0.0', 8, 'this-network'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared (CGNAT)'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.88.99.0', 24, '6to4 relay'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];

function v4ToInt(address: string): number {
  return address.split('.').reduce((value, part) => value * 256 + Number(part), 0);
}

const V4_RANGES = V4_BLOCKS.map(([base, bits, kind]) => {
  const size = 2 ** (32 - bits);
  const start = v4ToInt(base);
  return { start, end: start + size - 1, kind };
});

function v4Kind(value: number): string | null {
  for (const range of V4_RANGES) if (value >= range.start && value <= range.end) return range.kind;
  return null;
}

/** The 8 16-bit groups of an IPv6 address (a zone id is dropped; a dotted IPv4 tail is folded in). */
export function ipv6Groups(address: string): number[] | null {
  let text = address.toLowerCase();
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  if (isIP(text) !== 6) return null;
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (tail) {
    const v4 = v4ToInt(tail[1]!);
    text = `${text.slice(0, tail.index)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [head, rest] = text.includes('::') ? text.split('::') : [text, undefined];
  const left = head ? head.split(':') : [];
  const right = rest === undefined ? [] : rest ? rest.split(':') : [];
  const missing = 8 - left.length - right.length;
  if (rest === undefined ? left.length !== 8 : missing < 1) return null;
  const groups = [...left, ...new Array<string>(rest === undefined ? 0 : missing).fill('0'), ...right].map((group) => parseInt(group, 16));
  return groups.length === 8 && groups.every((group) => Number.isInteger(group) && group >= 0 && group <= 0xffff) ? groups : null;
}

function v6Kind(groups: number[]): string | null {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups as [number, number, number, number, number, number, number, number];
  const embedded = g6 * 65536 + g7;
  const embeddedKind = () => v4Kind(embedded);
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0) {
    // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible), :: and ::1 (0.0.0.0/8 when read as IPv4).
    if (g5 === 0xffff || g5 === 0) {
      const kind = embeddedKind();
      if (g5 === 0 && embedded <= 1) return embedded === 1 ? 'loopback' : 'unspecified';
      return kind ? `${kind} (IPv4 in IPv6)` : g5 === 0 ? 'IPv4-compatible' : null;
    }
  }
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    const kind = embeddedKind();
    return kind ? `${kind} (NAT64)` : null;
  }
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return 'local NAT64';
  if (g0 === 0x2002) {
    const v4 = g1 * 65536 + g2;
    const kind = v4Kind(v4);
    return kind ? `${kind} (6to4)` : null;
  }
  if (g0 === 0x100 && g1 === 0 && g2 === 0 && g3 === 0) return 'discard-only';
  if (g0 === 0x2001 && g1 === 0xdb8) return 'documentation';
  if (g0 === 0x2001 && g1 === 0) return 'Teredo';
  if ((g0 & 0xfe00) === 0xfc00) return 'unique local';
  if ((g0 & 0xffc0) === 0xfe80) return 'link-local';
  if ((g0 & 0xffc0) === 0xfec0) return 'site-local';
  if ((g0 & 0xff00) === 0xff00) return 'multicast';
  return null;
}

/**
 * Why an IP address is not publicly routable (`loopback`, `private`, `link-local`, ...), or null for
 * a public address. Anything that is not an IP address is refused (`not an IP address`).
 */
export function blockedAddressKind(address: string): string | null {
  const text = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (isIP(text) === 4) return v4Kind(v4ToInt(text));
  const groups = ipv6Groups(text);
  if (!groups) return 'not an IP address';
  return v6Kind(groups);
}

export interface HostPort {
  /** Lower-case host name or IP (IPv6 without brackets), as `new URL` normalizes it. */
  host: string;
  /** null: any port. */
  port: number | null;
}

/** Parses an allow entry (`name`, `name:port`, `1.2.3.4:80`, `[fd00::1]:443`, `fd00::1`); null when malformed. */
export function parseAllowEntry(entry: string): HostPort | null {
  let text = entry.trim();
  if (text === '') return null;
  if (isIP(text) === 6) text = `[${text}]`;
  let url: URL;
  try {
    url = new URL(`http://${text}`);
  } catch {
    return null;
  }
  if (url.username || url.password || url.pathname !== '/' || url.search || url.hash) return null;
  const explicitPort = /:(\d+)$/.test(text) ? Number(/:(\d+)$/.exec(text)![1]) : null;
  return { host: stripBrackets(url.hostname), port: explicitPort };
}

export const stripBrackets = (host: string) => (host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host);
const withoutTrailingDot = (host: string) => (host.endsWith('.') ? host.slice(0, -1) : host);

/** The effective port of a URL (its explicit port, else 80 / 443). */
export const urlPort = (url: URL) => (url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80);

/** Whether the owner allowed this URL's host (and port) in `security.fetch_allow_hosts`. */
export function hostAllowed(url: URL, allow: readonly string[]): boolean {
  const host = withoutTrailingDot(stripBrackets(url.hostname));
  const port = urlPort(url);
  return allow.some((entry) => {
    const parsed = parseAllowEntry(entry);
    return parsed !== null && withoutTrailingDot(parsed.host) === host && (parsed.port === null || parsed.port === port);
  });
}

/** The allow list of an agent config's `security` (entries that are not strings are ignored). */
export function allowListOf(security: unknown): string[] {
  const list = (security as { fetch_allow_hosts?: unknown } | null | undefined)?.fetch_allow_hosts;
  return Array.isArray(list) ? list.filter((entry): entry is string => typeof entry === 'string') : [];
}
