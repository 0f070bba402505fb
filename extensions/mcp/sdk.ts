/**
 * The MCP SDK, imported when the first server connects rather than when the extension loads: the SDK
 * and its schema library cost ~10 MB of memory and ~60 ms of start-up that a daemon whose agents
 * declare no MCP server never needs.
 */
export type McpSdk = typeof import('./sdk-modules.js');

let loading: Promise<McpSdk> | undefined;

export function loadSdk(): Promise<McpSdk> {
  loading ??= import('./sdk-modules.js');
  return loading;
}
