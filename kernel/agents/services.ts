/**
 * The kernel services extensions see for agents (`ctx.agents`, `ctx.inbox`), backed by the registry.
 * Each extension gets its own (`agentsFor(name)` in kernel/composition/agent-access.ts), so its `log` rows
 * carry its name.
 */
import {
  type EventBus,
  type AgentKeysAccess,
  type RunAgentLambda,
  type AgentFetch,
  type AgentPageImage,
  type AgentSnapshot,
  type AgentTurnsAccess,
  type OwnerTasksAccess,
  type CommandOutcome,
  type CommandRun,
  type SandboxedProcess,
  type SandboxedSpawn,
  type AgentFileInfo,
  type AgentFilesAccess,
  type AgentsService,
  type InboundMessage,
  type InboxRow,
  type InboxService,
  type LogLevel,
  isTraceparent,
  type InboundTrace,
} from '@agt/contracts';
import { agentIdNotLoaded, userSourceInInbox } from './errors.js';
import type { LoadedAgent } from './loaded-agent.js';
import type { StoredFileInfo } from './stores/files-store.js';
import type { InboxMessage } from './stores/message-stores.js';
import type { AgentRegistry } from './registry.js';
import type { AgentRuntimeHooks } from './runtime-hooks.js';

/**
 * What `ctx.agents.keys`, `runLambda` and `runHostCommand` reach: the agent identity's key and the runtime's sandboxes.
 */
export interface AgentCapabilities {
  /** The agent's DID and public key; undefined without an identity. */
  identity(agent: LoadedAgent): { did: string; publicKey: Uint8Array } | undefined;
  /** A signature by the agent's key; throws `credentials_locked` when out of reach. */
  sign(agent: LoadedAgent, message: Uint8Array): Uint8Array;
  runLambda(
    agentId: string,
    lambda: string,
    input: unknown,
    timeoutMs?: number,
  ): Promise<{ result: unknown; logs: string[] }>;
  /** The kernel's host command runner, under the agent's `security.allow_unsandboxed_commands`. */
  runHostCommand(agent: LoadedAgent, run: CommandRun): Promise<CommandOutcome>;
  /** `ctx.agents.workFolder`: the host path of the agent's command work folder, made when missing. */
  workFolder?(agent: LoadedAgent): Promise<string>;
  /** `ctx.agents.spawnSandboxed`: a long-lived process in the agent's command sandbox. */
  spawnSandboxed?(agent: LoadedAgent, spec: SandboxedSpawn): Promise<SandboxedProcess>;
  /** `ctx.agents.turns`: chat, inbox dispatch, interrupt, asks and approvals of the runtime. */
  turns?: AgentTurnsAccess;
  /** `ctx.agents.fetch`: a request under the agent's fetch policy. */
  fetch?: AgentFetch;
  /** `ctx.agents.tasks`: what waits for the owner, answered as the owner. */
  tasks?: OwnerTasksAccess;
  /** `ctx.agents.snapshots`: a consistent copy of the agent's file, removed once `use` settles. */
  snapshot?<T>(agent: LoadedAgent, use: (copy: AgentSnapshot) => Promise<T>): Promise<T>;
  /** `ctx.agents.snapshots.pages`: a small file's pages in memory. */
  pages?(agent: LoadedAgent): AgentPageImage | undefined;
}

export function agentsService(
  registry: AgentRegistry,
  origin: string,
  readCredential: (agent: LoadedAgent, name: string) => Promise<string | undefined>,
  capabilities: AgentCapabilities,
): AgentsService {
  const loaded = (agentId: string) => {
    const agent = registry.byId(agentId);
    if (!agent) throw agentIdNotLoaded(agentId);
    return agent;
  };
  const keys: AgentKeysAccess = {
    identity(agentId) {
      const agent = registry.byId(agentId);
      return agent && capabilities.identity(agent);
    },
    sign: async (agentId, message) => capabilities.sign(loaded(agentId), message),
  };
  const runLambda: RunAgentLambda = async (agentId, call) => {
    loaded(agentId);
    return capabilities.runLambda(agentId, call.lambda, call.input, call.timeoutMs);
  };
  return {
    keys,
    runLambda,
    ...(capabilities.turns ? { turns: capabilities.turns } : {}),
    ...(capabilities.fetch ? { fetch: capabilities.fetch } : {}),
    ...(capabilities.tasks ? { tasks: capabilities.tasks } : {}),
    ...(capabilities.snapshot
      ? {
          snapshots: {
            snapshot: async (agentId, use) => capabilities.snapshot!(loaded(agentId), use),
            ...(capabilities.pages ? { pages: (agentId: string) => capabilities.pages!(loaded(agentId)) } : {}),
          },
        }
      : {}),
    runHostCommand: async (run) => capabilities.runHostCommand(loaded(run.agentId), run),
    ...(capabilities.workFolder
      ? { workFolder: async (agentId: string) => capabilities.workFolder!(loaded(agentId)) }
      : {}),
    ...(capabilities.spawnSandboxed
      ? {
          spawnSandboxed: async (agentId: string, spec: SandboxedSpawn) =>
            capabilities.spawnSandboxed!(loaded(agentId), spec),
        }
      : {}),
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
      const agent = registry.byId(agentId);
      if (!agent) return undefined;
      try {
        return await readCredential(agent, name);
      } catch {
        return undefined;
      }
    },
    async updateConfig(agentId, next) {
      const agent = registry.byId(agentId);
      if (!agent) throw agentIdNotLoaded(agentId);
      await registry.updateConfig(agent, next);
    },
    log(agentId: string, level: LogLevel, message: string, data?: unknown) {
      const agent = registry.byId(agentId);
      if (agent) registry.log(agent, { level, origin, message, data });
    },
  };
}

const fileInfo = (info: StoredFileInfo): AgentFileInfo => ({
  path: info.path,
  mimeType: info.mime,
  size: info.size,
  updatedAt: info.updated_at,
});

/** `ctx.agents.files`: the files store of a loaded agent; its path check throws `bad_request`. */
function agentFiles(registry: AgentRegistry): AgentFilesAccess {
  const store = (agentId: string) => {
    const agent = registry.byId(agentId);
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
export function inboxService(
  registry: AgentRegistry,
  bus: EventBus,
  runtime: AgentRuntimeHooks,
  /** The trace context a message carried, for the `traceContext` provider (`contracts/trace-context.ts`). */
  traced?: (trace: InboundTrace) => void,
): InboxService {
  return {
    async deliver(agentId: string, message: InboundMessage) {
      const agent = registry.byId(agentId);
      if (!agent) throw agentIdNotLoaded(agentId);
      if (message.source === 'user') throw userSourceInInbox();
      const externalId =
        typeof message.externalId === 'string' && message.externalId !== '' ? message.externalId.slice(0, 200) : null;
      // The lookup and the insert are one synchronous stretch: no other delivery runs between them.
      const seen = externalId === null ? undefined : agent.file.inbox.byExternalId(message.source, externalId);
      if (seen) return { messageId: seen.id, duplicate: true };
      const row = agent.file.inbox.insert({
        source: message.source,
        sender: message.sender ?? null,
        text: message.text,
        data: message.data,
        externalId,
      });
      bus.emit('inbox.received', { agentId, payload: { messageId: row.id, source: row.source } });
      if (traced && isTraceparent(message.traceparent))
        traced({ agentId, messageId: row.id, source: row.source, traceparent: message.traceparent });
      await runtime.inboxReceived?.(agent, row);
      return { messageId: row.id };
    },
    async get(agentId: string, messageId: number) {
      const agent = registry.byId(agentId);
      if (!agent) throw agentIdNotLoaded(agentId);
      const row = Number.isInteger(messageId) ? agent.file.inbox.get(messageId) : undefined;
      return row && inboxRow(row);
    },
  };
}

const inboxRow = (row: InboxMessage): InboxRow => ({
  id: row.id,
  source: row.source,
  sender: row.sender,
  text: row.text,
  data: row.data,
  status: row.status,
  externalId: row.external_id ?? null,
  createdAt: row.created_at,
});
