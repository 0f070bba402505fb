/**
 * The mcp extension's agent config check (`agentConfigChecks`, contracts/points.ts): an agent's
 * declaration may name only the variables its server's registration lets agents set (`allowAgentEnv`;
 * none by default, none at all for a server the owner did not register). The kernel refuses a config
 * change that adds another name (400) and lists the names at load and in the review. This is the report;
 * the boundary is launch.ts, which passes nothing else to the child whatever the config says.
 */
import type { AgentConfig } from '@agt/contracts/agent-config';
import type { AgentConfigCheck, AgentConfigProblem } from '@agt/contracts/points';
import type { SettingsService } from '@agt/contracts/services';
import { agentEnvAllowed } from './child-env.js';

export function agentEnvProblems(config: Readonly<AgentConfig>, registrations: ReadonlyArray<{ name: string; allowAgentEnv?: readonly string[] }>): AgentConfigProblem[] {
  const problems: AgentConfigProblem[] = [];
  for (const server of config.mcp?.servers ?? []) {
    const registration = registrations.find((r) => r.name === server.name);
    const allowed = agentEnvAllowed(registration);
    const why = (name: string) =>
      registration
        ? `the owner's registration of MCP server ${server.name} does not let agents set ${name} (its allowAgentEnv: ${[...allowed].join(', ') || 'none'}); the owner adds the name there (POST /mcp/servers) or the agent leaves it out`
        : `MCP server ${server.name} has no owner registration, and an agent sets no variables for a server the owner did not register`;
    for (const name of Object.keys(server.env ?? {})) {
      if (!allowed.has(name)) problems.push({ field: `mcp.servers.${server.name}.env.${name}`, reason: why(name) });
    }
    for (const name of server.env_keys ?? []) {
      if (!allowed.has(name)) problems.push({ field: `mcp.servers.${server.name}.env_keys.${name}`, reason: why(name) });
    }
  }
  return problems;
}

export function agentEnvCheck(settings: SettingsService): AgentConfigCheck {
  return { check: (config) => agentEnvProblems(config, settings.current().mcpServers ?? []) };
}
