/**
 * Which agents agt's MCP server exposes: settings `mcpServer.agents` (ids or handles; `"*"`: every
 * loaded agent), read at every call so a settings change applies to the next one. Default none.
 * An agent outside the list and an agent that does not exist get the same answer, so a client cannot
 * learn which other agents the daemon runs.
 */
import type { AgentsService, AgentView, SettingsService } from '@agt/contracts';

export class Exposed {
  constructor(
    private readonly settings: SettingsService,
    private readonly agents: AgentsService,
  ) {}

  private allowed(agent: AgentView): boolean {
    const list = this.settings.current().mcpServer?.agents ?? [];
    return list.includes('*') || list.includes(agent.id) || (agent.handle !== undefined && list.includes(agent.handle));
  }

  /** The exposed loaded agents. */
  list(): AgentView[] {
    return this.agents.list().filter((agent) => this.allowed(agent));
  }

  /** The exposed agent `ref` (id, handle or name), or undefined (unknown, not loaded, or not exposed). */
  find(ref: string): AgentView | undefined {
    const agent = this.agents.find(ref);
    return agent && this.allowed(agent) ? agent : undefined;
  }
}

/** The error text for an agent that is not exposed (or does not exist). */
export const notExposed = (ref: string) => `No agent "${ref}" is exposed by this MCP server (settings mcpServer.agents).`;
