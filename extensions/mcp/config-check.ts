/**
 * The mcp extension's agent config check (`agentConfigChecks`, contracts/points.ts): an agent's
 * declaration may name only the variables its server's registration lets agents set (`allowAgentEnv`;
 * none by default, none at all for a server the owner did not register), and send only the HTTP headers
 * it lists in `allowAgentHeaders` (never one it sets itself, `headerEnv`). The kernel refuses a config
 * change that adds another name (400) and lists the names at load and in the review. This is the report;
 * the boundary is launch.ts, which passes nothing else to the child or the HTTP server whatever the config says.
 */
import type { AgentConfig } from '@agt/contracts';
import type { AgentConfigCheck, AgentConfigProblem } from '@agt/contracts';
import type { SettingsService } from '@agt/contracts';
import { agentHeaderAsks, agentHeadersAllowed, headerAllowed } from './agent-headers.js';
import { agentEnvAllowed } from './child-env.js';

export function agentEnvProblems(
  config: Readonly<AgentConfig>,
  registrations: ReadonlyArray<{
    name: string;
    allowAgentEnv?: readonly string[];
    allowAgentHeaders?: readonly string[];
    headerEnv?: Readonly<Record<string, string>>;
  }>,
): AgentConfigProblem[] {
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
      if (!allowed.has(name))
        problems.push({ field: `mcp.servers.${server.name}.env_keys.${name}`, reason: why(name) });
    }
    const headers = agentHeadersAllowed(registration);
    const owner = Object.keys(registration?.headerEnv ?? {});
    for (const ask of agentHeaderAsks(server)) {
      if (headerAllowed(ask, headers)) continue;
      const reason = !registration
        ? `MCP server ${server.name} has no owner registration, and an agent sends no headers to a server the owner did not register`
        : owner.some((h) => h.toLowerCase() === ask.header.toLowerCase())
          ? `the owner's registration of MCP server ${server.name} sets the header ${ask.header} itself (headerEnv); an agent never replaces it`
          : `the owner's registration of MCP server ${server.name} does not let agents send the header ${ask.header || '(unnamed)'} (its allowAgentHeaders: ${[...headers].join(', ') || 'none'}); the owner adds the name there (POST /mcp/servers) or the agent leaves it out`;
      problems.push({ field: ask.field, reason });
    }
  }
  return problems;
}

export function agentEnvCheck(settings: SettingsService): AgentConfigCheck {
  return { check: (config) => agentEnvProblems(config, settings.current().mcpServers ?? []) };
}
