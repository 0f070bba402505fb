/**
 * The review summary (`ReviewInfo.summary`): what an owner should see before running a file, computed
 * from its config alone. `notable` flags tools that reach outside the agent (network, messaging, code
 * execution, self-modification, destructive writes).
 */
import type { AgentConfig, ToolDefinition } from '@agt/contracts';
import type { ReviewIdentity, ReviewSummary } from '../http-api/agents-api.js';

export const NOTABLE_TOOLS: ReadonlySet<string> = new Set([
  'compute_exec',
  'sys_fetch',
  'msg_send',
  'db_execute',
  'fs_write',
  'fs_delete',
  'sys_update_config',
  'sys_set_timer',
]);

export const UNCLAIMED_IDENTITY: ReviewIdentity = {
  agentDid: null,
  fileOwnerDid: null,
  ownerIsYou: false,
  scenario: 'unclaimed',
};

const COMPUTE_TIERS = ['shared', 'isolated', 'host'] as const;

export function reviewSummary(
  config: Readonly<AgentConfig>,
  identity: ReviewIdentity,
  builtinTools: readonly ToolDefinition[] = [],
): ReviewSummary {
  const notableBuiltins = new Set(builtinTools.filter((tool) => tool.notable).map((tool) => tool.name));
  const enabled = (name: string) => config.tools.some((tool) => tool.name === name && tool.enabled);
  const triggers = Object.entries(config.triggers ?? {}).map(([type, trigger]) => ({
    type,
    enabled: trigger?.enabled ?? false,
    targetCount: trigger?.targets.length ?? 0,
  }));
  const systemTargets = Object.values(config.triggers ?? {}).some(
    (trigger) => trigger?.enabled && trigger.targets.some((target) => target.scope === 'system'),
  );
  const servers = config.mcp?.servers ?? [];
  const security = (config.security ?? {}) as Record<string, unknown>;
  const tier = security.compute_tier;
  const adapters = Object.entries(config.adapters ?? {})
    .filter(([, adapter]) => adapter.enabled)
    .map(([type]) => type);
  const serving = (config.serving ?? null) as Record<string, unknown> | null;
  return {
    name: config.name,
    description: config.description,
    ...(config.icon ? { icon: config.icon } : {}),
    identity,
    computeTier: COMPUTE_TIERS.includes(tier as never) ? (tier as (typeof COMPUTE_TIERS)[number]) : 'shared',
    autostart: config.autostart ?? false,
    tools: config.tools.map((tool) => ({
      name: tool.name,
      enabled: tool.enabled,
      notable: NOTABLE_TOOLS.has(tool.name) || notableBuiltins.has(tool.name),
    })),
    mcpServers: servers.map((server) => ({
      name: server.name,
      transport: server.transport,
      ...(server.command ? { command: [server.command, ...(server.args ?? [])].join(' ') } : {}),
      ...(server.url ? { url: server.url } : {}),
      restricted: server.restricted ?? false,
      runLocation: server.run_location ?? 'host',
    })),
    triggers,
    codeExecution: enabled('compute_exec') || systemTargets,
    messaging: { mode: String(config.messaging?.mode ?? 'respond_only'), adapters },
    network: {
      fetch: enabled('sys_fetch'),
      mcpHttp: servers.filter((server) => server.transport === 'http').map((server) => server.url ?? server.name),
      visibility: typeof serving?.visibility === 'string' ? serving.visibility : 'local',
      serving: serving !== null,
      wsConnections: config.ws_connections?.length ?? 0,
      providers: (config.providers ?? []).map((provider) => ({ id: provider.id, baseUrl: provider.baseUrl })),
    },
    security,
  };
}
