/**
 * Who may see an agent on the mesh: the agent's `messaging.visibility` (`off`, `localhost`
 * default, `lan`, `public`) against the requester's scope, taken from the socket's peer address only
 * (forwarding headers are never believed: the mesh server is not behind a proxy).
 */
import { isIPv4, isIPv6 } from 'node:net';
import type { AgentView } from '@agt/contracts';

export type Visibility = 'off' | 'localhost' | 'lan' | 'public';
export type Scope = 'loopback' | 'private' | 'public';

const VISIBILITIES: readonly Visibility[] = ['off', 'localhost', 'lan', 'public'];

export function visibilityOf(agent: AgentView): Visibility {
  const value = (agent.config.messaging as Record<string, unknown> | undefined)?.visibility;
  return VISIBILITIES.includes(value as Visibility) ? (value as Visibility) : 'localhost';
}

function ipv4Scope(address: string): Scope {
  const [a, b] = address.split('.').map(Number) as [number, number];
  if (a === 127) return 'loopback';
  if (
    a === 10 ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 169 && b === 254) ||
    (a === 100 && b >= 64 && b <= 127)
  )
    return 'private';
  return 'public';
}

/** The scope of a peer address as the socket reports it (IPv4, IPv6 or IPv4-mapped IPv6). */
export function scopeOf(address: string | undefined): Scope {
  if (!address) return 'public';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return ipv4Scope(mapped[1]!);
  if (isIPv4(address)) return ipv4Scope(address);
  if (isIPv6(address)) {
    const lower = address.toLowerCase();
    if (lower === '::1') return 'loopback';
    if (/^f[cd]/.test(lower) || /^fe[89ab]/.test(lower)) return 'private';
  }
  return 'public';
}

/** Whether a requester of `scope` may reach an agent of `visibility` (never for `off`). */
export function inScope(visibility: Visibility, scope: Scope): boolean {
  if (visibility === 'public') return true;
  if (visibility === 'lan') return scope !== 'public';
  if (visibility === 'localhost') return scope === 'loopback';
  return false;
}
