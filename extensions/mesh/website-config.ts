/** An agent's `serving` config, read defensively: agent configs are untrusted. */
import type { AgentView } from '@agt/contracts';

export interface ApiRoute {
  method: string;
  /** `/path/:param` relative to the agent's site. */
  path: string;
  lambda: string;
  on_card: boolean;
  timeout_ms?: number;
}

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);

const servingOf = (agent: AgentView) => (agent.config.serving ?? {}) as Record<string, unknown>;

/** `{enabled, index}` of `serving.public`; off unless `enabled` is true. */
export function publicSiteOf(agent: AgentView): { enabled: boolean; index: string } {
  const site = (servingOf(agent).public ?? {}) as Record<string, unknown>;
  const index =
    typeof site.index === 'string' &&
    /^[A-Za-z0-9._-]{1,100}$/.test(site.index) &&
    site.index !== '.' &&
    site.index !== '..'
      ? site.index
      : 'index.html';
  return { enabled: site.enabled === true, index };
}

/** The well-formed entries of `serving.api`; others are ignored. */
export function apiRoutesOf(agent: AgentView): ApiRoute[] {
  const list = servingOf(agent).api;
  if (!Array.isArray(list)) return [];
  const out: ApiRoute[] = [];
  for (const item of list.slice(0, 100)) {
    if (!item || typeof item !== 'object') continue;
    const entry = item as Record<string, unknown>;
    const method = typeof entry.method === 'string' ? entry.method.toUpperCase() : 'GET';
    if (!METHODS.has(method) || typeof entry.path !== 'string' || typeof entry.lambda !== 'string') continue;
    if (!/^\/[A-Za-z0-9._~:/-]{0,300}$/.test(entry.path)) continue;
    out.push({
      method,
      path: entry.path,
      lambda: entry.lambda,
      on_card: entry.on_card === true,
      ...(typeof entry.timeout_ms === 'number' && entry.timeout_ms > 0 ? { timeout_ms: entry.timeout_ms } : {}),
    });
  }
  return out;
}

/** Matches `path` (decoded segments) against a route pattern; the `:name` params, or undefined. */
export function matchRoute(pattern: string, segments: string[]): Record<string, string> | undefined {
  const parts = pattern.split('/').filter((part) => part !== '');
  if (parts.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (part.startsWith(':') && part.length > 1) params[part.slice(1)] = segments[i]!;
    else if (part !== segments[i]) return undefined;
  }
  return params;
}
