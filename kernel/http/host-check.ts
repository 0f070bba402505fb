/** Parsing of Host and Origin values for the request guard (DNS-rebinding and CSRF protection). */
import { isIP } from 'node:net';

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

export interface HostPolicy {
  boundPort: () => number;
  allowedHosts: string[];
}

let lastHost: { value: string; policy: HostPolicy; port: number; allowed: boolean } | undefined;

/** Does this Host header name this daemon? */
export function hostAllowed(value: string | undefined, policy: HostPolicy): boolean {
  if (value === undefined) return false;
  const port = policy.boundPort();
  if (lastHost !== undefined && lastHost.value === value && lastHost.policy === policy && lastHost.port === port) return lastHost.allowed;
  const allowed = hostNamesDaemon(value, policy);
  lastHost = { value, policy, port, allowed };
  return allowed;
}

function hostNamesDaemon(value: string, policy: HostPolicy): boolean {
  const parsed = parseHostHeader(value);
  if (!parsed) return false;
  const { host, port } = parsed;
  if (isLoopbackName(host) || isLoopbackAddress(host)) return true;
  if (isIP(host) !== 0) return port === null ? policy.boundPort() === 80 : port === policy.boundPort();
  return policy.allowedHosts.some((entry) => {
    const allowed = parseHostHeader(entry);
    if (!allowed || allowed.host !== host) return false;
    return allowed.port === null || allowed.port === port;
  });
}

/** An Origin is same-origin when it is `http://` plus exactly the Host the request was sent to. */
export function originIsSameOrigin(origin: string, hostHeader: string | undefined): boolean {
  if (!hostHeader) return false;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:') return false;
  const a = parseHostHeader(url.host);
  const b = parseHostHeader(hostHeader);
  if (!a || !b) return false;
  return a.host === b.host && (a.port ?? 80) === (b.port ?? 80);
}
