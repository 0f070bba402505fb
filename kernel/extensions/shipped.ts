/**
 * The extensions agt ships (docs/extensions.md) and where each answers: its prefix and the segment of its agent-scoped
 * routes. The one place the kernel names them. The loader serves 503 `unavailable` there for every
 * shipped extension the manifest does not list (and uses the table's prefix for a listed one whose
 * module cannot be imported and whose entry names none), so a daemon running with a trimmed manifest
 * still says which extension a route needs instead of answering 404.
 *
 * Keep each row equal to the extension's own definition (`name`, `prefix`, `agentRoutes`):
 * test/extensions-unavailable.test.ts checks the rows of every extension found under `extensions/`.
 */
export interface ShippedExtension {
  name: string;
  /** The module, relative to the project root (what the shipped `extensions.json` lists). */
  module: string;
  prefix: string;
  /** `adapters` gives `/agents/{id}/adapters/...`; absent when it serves no agent-scoped routes. */
  agentRoutes?: string;
}

export const SHIPPED_EXTENSIONS: readonly ShippedExtension[] = Object.freeze([
  { name: 'providers', module: './extensions/providers/index.ts', prefix: '/providers', agentRoutes: 'providers' },
  { name: 'mcp', module: './extensions/mcp/index.ts', prefix: '/mcp', agentRoutes: 'mcp' },
  { name: 'channels', module: './extensions/channels/index.ts', prefix: '/channels', agentRoutes: 'adapters' },
  { name: 'compute', module: './extensions/compute/index.ts', prefix: '/compute' },
  { name: 'mesh', module: './extensions/mesh/index.ts', prefix: '/network' },
  { name: 'tracked-folders', module: './extensions/tracked-folders/index.ts', prefix: '/tracked-folders' },
  { name: 'console', module: './extensions/console/index.ts', prefix: '/console' },
  { name: 'telemetry', module: './extensions/telemetry/index.ts', prefix: '/metrics' },
]);

/** The shipped extension named `name`, if it is one. */
export function shippedExtension(name: string): ShippedExtension | undefined {
  return SHIPPED_EXTENSIONS.find((extension) => extension.name === name);
}
