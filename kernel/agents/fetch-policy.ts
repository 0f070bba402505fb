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
import { BlockList, isIP } from 'node:net';

/** One named range per BlockList, so a match says which range (and why) an address is refused. */
type Ranges = ReadonlyArray<{ list: BlockList; kind: string }>;

function ranges(family: 'ipv4' | 'ipv6', table: ReadonlyArray<[string, number, string]>): Ranges {
  return table.map(([network, prefix, kind]) => {
    const list = new BlockList();
    list.addSubnet(network, prefix, family);
    return { list, kind };
  });
}

const V4_RANGES = ranges('ipv4', [
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
]);

const V6_RANGES = ranges('ipv6', [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['fc00::', 7, 'unique local'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local'],
  ['ff00::', 8, 'multicast'],
  ['100::', 64, 'discard-only'],
  ['2001:db8::', 32, 'documentation'],
  ['2001::', 32, 'Teredo'],
  ['64:ff9b:1::', 48, 'local NAT64'],
]);

/** IPv6 prefixes that carry an IPv4 address, judged by that address: where it sits (groups, high first). */
const EMBEDDING = [
  { range: ranges('ipv6', [['::ffff:0:0', 96, 'IPv4 in IPv6']])[0]!, at: [6, 7] },
  { range: ranges('ipv6', [['::', 96, 'IPv4-compatible']])[0]!, at: [6, 7] },
  { range: ranges('ipv6', [['64:ff9b::', 96, 'NAT64']])[0]!, at: [6, 7] },
  { range: ranges('ipv6', [['2002::', 16, '6to4']])[0]!, at: [1, 2] },
] as const;

const kindIn = (table: Ranges, address: string, family: 'ipv4' | 'ipv6') =>
  table.find(({ list }) => list.check(address, family))?.kind ?? null;

/** The 8 16-bit groups of an IPv6 address (a zone id is dropped; a dotted IPv4 tail is folded in). */
export function ipv6Groups(address: string): number[] | null {
  let text = address.toLowerCase();
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  if (isIP(text) !== 6) return null;
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (tail) {
    const v4 = tail[1]!.split('.').reduce((value, part) => value * 256 + Number(part), 0);
    text = `${text.slice(0, tail.index)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [head, rest] = text.includes('::') ? text.split('::') : [text, undefined];
  const left = head ? head.split(':') : [];
  const right = rest === undefined ? [] : rest ? rest.split(':') : [];
  const missing = 8 - left.length - right.length;
  if (rest === undefined ? left.length !== 8 : missing < 1) return null;
  const groups = [...left, ...new Array<string>(rest === undefined ? 0 : missing).fill('0'), ...right].map((group) =>
    parseInt(group, 16),
  );
  return groups.length === 8 && groups.every((group) => Number.isInteger(group) && group >= 0 && group <= 0xffff)
    ? groups
    : null;
}

function v6Kind(text: string, groups: number[]): string | null {
  // :: and ::1 are exact ranges of their own, before the IPv4-compatible prefix ::/96 that holds both.
  const exact = kindIn(V6_RANGES.slice(0, 2), text, 'ipv6');
  if (exact) return exact;
  for (const { range, at } of EMBEDDING) {
    if (!range.list.check(text, 'ipv6')) continue;
    const [high, low] = [groups[at[0]]!, groups[at[1]]!];
    const v4 = [high >>> 8, high & 0xff, low >>> 8, low & 0xff].join('.');
    const kind = kindIn(V4_RANGES, v4, 'ipv4');
    if (kind)
      return range.kind === 'IPv4-compatible' || range.kind === 'IPv4 in IPv6'
        ? `${kind} (IPv4 in IPv6)`
        : `${kind} (${range.kind})`;
    // A public IPv4 address: mapped, NAT64 and 6to4 reach it; the deprecated IPv4-compatible form is refused.
    return range.kind === 'IPv4-compatible' ? 'IPv4-compatible' : null;
  }
  return kindIn(V6_RANGES, text, 'ipv6');
}

/**
 * Why an IP address is not publicly routable (`loopback`, `private`, `link-local`, ...), or null for
 * a public address. Anything that is not an IP address is refused (`not an IP address`). The ranges are
 * Node's `net.BlockList`s; only an IPv4 address embedded in an IPv6 one is read out by hand.
 */
export function blockedAddressKind(address: string): string | null {
  const text = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (isIP(text) === 4) return kindIn(V4_RANGES, text, 'ipv4');
  const groups = ipv6Groups(text);
  if (!groups) return 'not an IP address';
  // BlockList wants the address without a zone id; ipv6Groups has checked that it is IPv6.
  return v6Kind(text.toLowerCase().split('%')[0]!, groups);
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
    return (
      parsed !== null && withoutTrailingDot(parsed.host) === host && (parsed.port === null || parsed.port === port)
    );
  });
}

/** The allow list of an agent config's `security` (entries that are not strings are ignored). */
export function allowListOf(security: unknown): string[] {
  const list = (security as { fetch_allow_hosts?: unknown } | null | undefined)?.fetch_allow_hosts;
  return Array.isArray(list) ? list.filter((entry): entry is string => typeof entry === 'string') : [];
}
