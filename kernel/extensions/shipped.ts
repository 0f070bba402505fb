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
