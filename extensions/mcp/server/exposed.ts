/**
 * Which agents agt's MCP server exposes: settings `mcpServer.agents` (ids, handles or names, handles and
 * names matched without regard to case as `agt chat` does; `"*"`: every loaded agent), read at every call
 * so a settings change applies to the next one. Default none. The owner writes the list, so a name that
 * several agents share exposes each of them.
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
    if (list.includes('*') || list.includes(agent.id)) return true;
    const names = [agent.name, agent.handle]
      .filter((name): name is string => typeof name === 'string')
      .map((name) => name.toLowerCase());
    return list.some((entry) => names.includes(entry.toLowerCase()));
  }

  /** The exposed loaded agents. */
  list(): AgentView[] {
    return this.agents.list().filter((agent) => this.allowed(agent));
  }

  /**
   * The exposed agent `ref` (id, handle or name; a handle or name in any case, as the list takes them), or
   * undefined (unknown, not loaded, not exposed, or a name several exposed agents share).
   */
  find(ref: string): AgentView | undefined {
    const agent = this.agents.find(ref);
    if (agent) return this.allowed(agent) ? agent : undefined;
    const wanted = ref.toLowerCase();
    const matches = this.list().filter(
      (candidate) => candidate.name.toLowerCase() === wanted || candidate.handle?.toLowerCase() === wanted,
    );
    return matches.length === 1 ? matches[0] : undefined;
  }
}

/** The error text for an agent that is not exposed (or does not exist). */
export const notExposed = (ref: string) =>
  `No agent "${ref}" is exposed by this MCP server (settings mcpServer.agents).`;
