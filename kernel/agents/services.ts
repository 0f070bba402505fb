/**
 * The kernel services extensions see for agents (`ctx.agents`, `ctx.inbox`), backed by the registry.
 * `serviceFor(origin)` gives each caller its own `log` origin (the extension loader passes `ext:<name>`).
 */
import type { EventBus } from '../../contracts/events.js';
import type { AgentFileInfo, AgentFilesAccess, AgentsService, InboundMessage, InboxService, LogLevel } from '../../contracts/services.js';
import { agentIdNotLoaded, userSourceInInbox } from './errors.js';
import type { LoadedAgent } from './loaded-agent.js';
import type { StoredFileInfo } from './stores/files-store.js';
import type { AgentRegistry } from './registry.js';
import type { AgentRuntimeHooks } from './runtime-hooks.js';

/** `readCredential` decrypts one credential of a loaded agent (the credentials service's `read`). */
export function agentsService(
  registry: AgentRegistry,
  origin: string,
  readCredential: (agent: LoadedAgent, name: string) => Promise<string | undefined>,
): AgentsService {
  return {
    files: agentFiles(registry),
    list: () => registry.views(),
    find(idOrName) {
      try {
        return registry.resolve(idOrName).view();
      } catch {
        // Unknown or ambiguous: the caller asked for one agent and there is not exactly one.
        return undefined;
      }
    },
    async readCredential(agentId, name) {
      const agent = registry.list().find((candidate) => candidate.id === agentId);
      if (!agent) return undefined;
      try {
        return await readCredential(agent, name);
      } catch {
        return undefined;
      }
    },
    log(agentId: string, level: LogLevel, message: string, data?: unknown) {
      const agent = registry.list().find((candidate) => candidate.id === agentId);
      if (agent) registry.log(agent, { level, origin, message, data });
    },
  };
}

const fileInfo = (info: StoredFileInfo): AgentFileInfo => ({ path: info.path, mimeType: info.mime, size: info.size, updatedAt: info.updated_at });

/** `ctx.agents.files`: the files store of a loaded agent; its path check throws `bad_request`. */
function agentFiles(registry: AgentRegistry): AgentFilesAccess {
  const store = (agentId: string) => {
    const agent = registry.list().find((candidate) => candidate.id === agentId);
    if (!agent) throw agentIdNotLoaded(agentId);
    return agent.file.files;
  };
  return {
    list: async (agentId, folder = '') => store(agentId).list(folder).map(fileInfo),
    async read(agentId, path) {
      const file = store(agentId).read(path);
      return file && { ...fileInfo(file), content: file.content };
    },
    write: async (agentId, path, content, mimeType = null) => fileInfo(store(agentId).write(path, content, mimeType)),
    remove: async (agentId, path) => store(agentId).delete(path),
  };
}

/**
 * `deliver`: commits the message to `agt_inbox`, emits `inbox.received`, then hands it to the runtime's
 * `on_inbox` handling. `source: user` is refused (that is chat).
 */
export function inboxService(registry: AgentRegistry, bus: EventBus, runtime: AgentRuntimeHooks): InboxService {
  return {
    async deliver(agentId: string, message: InboundMessage) {
      const agent = registry.list().find((candidate) => candidate.id === agentId);
      if (!agent) throw agentIdNotLoaded(agentId);
      if (message.source === 'user') throw userSourceInInbox();
      const row = agent.file.inbox.insert({ source: message.source, sender: message.sender ?? null, text: message.text, data: message.data });
      bus.emit('inbox.received', { agentId, payload: { messageId: row.id, source: row.source } });
      await runtime.inboxReceived?.(agent, row);
      return { messageId: row.id };
    },
  };
}
