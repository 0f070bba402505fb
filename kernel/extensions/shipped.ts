/**
 * Route groups of the shipped extensions (decision D3), used only when an entry's module cannot be
 * imported: a disabled or broken shipped extension must still answer 503 on its routes, and without
 * its definition the kernel would not know where they are.
 */

export interface RouteGroup {
  prefix: string;
  agentRoutes?: string;
}

export const SHIPPED_ROUTE_GROUPS: Readonly<Record<string, RouteGroup>> = {
  providers: { prefix: '/providers', agentRoutes: 'providers' },
  mcp: { prefix: '/mcp', agentRoutes: 'mcp' },
  channels: { prefix: '/channels', agentRoutes: 'channels' },
  compute: { prefix: '/compute' },
  mesh: { prefix: '/network' },
  'tracked-folders': { prefix: '/tracked-folders' },
};

/**
 * Top-level paths of the kernel's own route groups: an extension claiming one of them would shadow
 * the kernel's not-found answers and collide with its routes.
 */
export const KERNEL_PREFIXES: ReadonlySet<string> = new Set([
  '/health', '/openapi.json', '/daemon', '/events', '/agents', '/identity', '/settings', '/runtime',
  '/templates', '/admin', '/credentials', '/timers', '/tasks',
]);
