/**
 * Fake kernel services for {@link startTestExtension}: in memory, recording what the extension does with
 * them (events, inbox deliveries, agent log rows, log lines, contributions, offers) so a test can assert
 * on it, and driven by the test (settings changes, events sent to the extension's subscribers).
 */
import type { AgentConfig } from '../agent-config.js';
import { AgtError } from '../errors.js';
import type { EmitInput, EventBus, EventType, UmbilicalEvent } from '../events.js';
import type { ExtensionContributions, ExtensionEnv, ExtensionPoint } from '../extension.js';
import type { AgentLifecycleHooks, InboxSource } from '../lifecycle.js';
import type { Logger } from '../logger.js';
import type { ModelClientProvider } from '../model.js';
import { normalizeAgentPath } from '../agent-paths.js';
import type { AgentLauncher } from '../agent-launcher.js';
import type {
  AgentFile,
  AgentFilesAccess,
  AgentsService,
  AgentView,
  InboundMessage,
  InboxService,
  LogLevel,
  SettingsService,
} from '../services.js';
import { generateKeyPairSync, sign as signBytes, type KeyObject } from 'node:crypto';
import { didFromPublicKey, type AgentKeysAccess } from '../agent-keys.js';
import { SettingsSchema, type Settings } from '../settings.js';
import { assertValid } from '../validate.js';
import type { ToolContributor } from '../tools.js';

/**
 * One loaded agent as the fake `ctx.agents` shows it.
 *
 * @public
 */
export interface TestAgent {
  id: string;
  /** Default: the id. */
  name?: string;
  handle?: string;
  filePath?: string | null;
  /** Merged over a minimal valid config (`name`, `instructions`, `model`). */
  config?: Partial<AgentConfig>;
  /** Credential values `ctx.agents.readCredential` returns, by name. */
  credentials?: Record<string, string>;
  /** The agent's stored files (`ctx.agents.files`), by path; the extension's writes land here too. */
  files?: Map<string, AgentFile>;
}

/**
 * One line written through the fake logger (or a child of it).
 *
 * @beta
 */
export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  msg: string | undefined;
  /** The first argument: an object, an error or a message. */
  data: unknown;
  /** The bindings of the logger it went through (`{extension: name}` and those of `child`). */
  bindings: Record<string, unknown>;
}

/**
 * A row the extension wrote with `ctx.agents.log`.
 *
 * @beta
 */
export interface AgentLogRow {
  agentId: string;
  level: LogLevel;
  message: string;
  data?: unknown;
}

/**
 * A message the extension delivered with `ctx.inbox.deliver`.
 *
 * @beta
 */
export interface Delivery {
  agentId: string;
  message: InboundMessage;
  messageId: number;
}

/**
 * What the extension contributed to the kernel's own points (`ctx.contribute`), in call order.
 *
 * @beta
 */
export interface RecordedContributions {
  modelClients: ModelClientProvider[];
  tools: ToolContributor[];
  inboxSources: InboxSource[];
  lifecycle: AgentLifecycleHooks[];
}

/**
 * An implementation of an extension point, standing in for what a dependency would offer.
 *
 * @public
 */
export interface PointOffer {
  point: ExtensionPoint<unknown>;
  implementation: unknown;
  /** The offering extension's name, for messages (default `test`). */
  owner: string;
}

/**
 * What `ctx.use(point)` returns in a test: `implementation`, as if extension `owner` (default `test`) offered it.
 *
 * @public
 */
export function offer<T>(point: ExtensionPoint<T>, implementation: T, owner = 'test'): PointOffer {
  return { point: point as ExtensionPoint<unknown>, implementation, owner };
}

/**
 * A logger that keeps every line in `lines` (shared with its children).
 *
 * @beta
 */
export function recordingLogger(
  lines: LogLine[] = [],
  bindings: Record<string, unknown> = {},
): Logger & { lines: LogLine[] } {
  const write = (level: LogLine['level']) => (data: unknown, msg?: string) =>
    void lines.push({ level, msg: typeof data === 'string' && msg === undefined ? data : msg, data, bindings });
  return {
    lines,
    debug: write('debug'),
    info: write('info'),
    warn: write('warn'),
    error: write('error'),
    child: (more) => recordingLogger(lines, { ...bindings, ...more }),
  };
}

/** An in-memory bus: every event is kept in `events`; listeners that throw are logged and skipped. */
export class RecordingBus implements EventBus {
  readonly events: UmbilicalEvent[] = [];
  private readonly listeners = new Set<(event: UmbilicalEvent) => void>();
  private seq = 0;

  constructor(
    private readonly logger: Logger,
    private readonly defaultSource = 'kernel',
  ) {}

  emit<T extends EventType>(type: T, input: EmitInput<T>): UmbilicalEvent<T> {
    const event: UmbilicalEvent<T> = {
      seq: ++this.seq,
      event_type: type,
      timestamp: Date.now(),
      source: input.source ?? this.defaultSource,
      agent_id: input.agentId,
      ...(input.loop !== undefined ? { loop: input.loop } : {}),
      payload: input.payload,
      ...(input.turnId !== undefined ? { turn_id: input.turnId } : {}),
    };
    this.events.push(event as UmbilicalEvent);
    for (const listener of [...this.listeners]) {
      try {
        listener(event as UmbilicalEvent);
      } catch (error) {
        this.logger.warn({ err: error, event: type }, 'an event listener threw');
      }
    }
    return event;
  }

  subscribe(listener: (event: UmbilicalEvent) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }
}

/** Settings the test changes with `set`; `onChange` listeners run at each change. */
export class TestSettings implements SettingsService {
  private settings: Settings;
  private readonly listeners = new Set<(settings: Readonly<Settings>) => void>();

  constructor(
    readonly dataDir: string,
    initial: Settings = {},
  ) {
    this.settings = initial;
  }

  current(): Readonly<Settings> {
    return this.settings;
  }

  onChange(listener: (settings: Readonly<Settings>) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  set(next: Settings): void {
    this.settings = next;
    for (const listener of [...this.listeners]) listener(next);
  }

  /** `ctx.settings.update`: merges (null removes a key), validates against the settings schema, then as `set`. */
  update(patch: { [K in keyof Settings]?: Settings[K] | null }): Readonly<Settings> {
    const next: Record<string, unknown> = { ...this.settings };
    for (const [key, value] of Object.entries(patch)) {
      if (value === null || value === undefined) delete next[key];
      else next[key] = value;
    }
    const valid = assertValid(SettingsSchema, next, 'settings');
    this.set(valid);
    return valid;
  }
}

/** A minimal config (what the fields extensions usually read hold), the test's `config` merged over it. */
const baseConfig = (agent: TestAgent) =>
  ({
    agt_version: '0.2',
    id: agent.id,
    name: agent.name ?? agent.id,
    description: '',
    instructions: '',
    model: { provider: 'test', model_id: 'test-model' },
    ...agent.config,
  }) as AgentConfig;

/** `ctx.agents` over a list the test may change (push, splice) while the extension runs. */
export function testAgents(agents: TestAgent[], logRows: AgentLogRow[]): AgentsService {
  const view = (agent: TestAgent): AgentView => ({
    id: agent.id,
    name: agent.name ?? agent.id,
    ...(agent.handle !== undefined ? { handle: agent.handle } : {}),
    filePath: agent.filePath ?? null,
    config: baseConfig(agent),
  });
  return {
    files: testFiles(agents),
    keys: testKeys(agents),
    runLambda: async () => {
      throw new AgtError('unavailable', 'the test harness runs no agent lambdas (boot a test daemon for that)');
    },
    runHostCommand: async () => {
      throw new AgtError('unavailable', 'the test harness runs no host commands (boot a test daemon for that)');
    },
    list: () => agents.map(view),
    find: (ref) => {
      const agent =
        agents.find((a) => a.id === ref) ??
        agents.find((a) => a.handle === ref) ??
        agents.find((a) => (a.name ?? a.id) === ref);
      return agent ? view(agent) : undefined;
    },
    readCredential: async (agentId, name) => agents.find((a) => a.id === agentId)?.credentials?.[name],
    updateConfig: async (agentId, next) => {
      const agent = agents.find((a) => a.id === agentId);
      if (!agent) throw new AgtError('not_found', `agent ${agentId} is not loaded`);
      agent.config = { ...next };
    },
    log: (agentId, level, message, data) =>
      void logRows.push({ agentId, level, message, ...(data !== undefined ? { data } : {}) }),
  };
}

/** `ctx.agents.keys`: a fresh Ed25519 key pair per test agent, made on first use (real signatures). */
function testKeys(agents: TestAgent[]): AgentKeysAccess {
  const pairs = new Map<string, { did: string; publicKey: Uint8Array; privateKey: KeyObject }>();
  const pairOf = (agentId: string) => {
    if (!agents.some((a) => a.id === agentId)) return undefined;
    let pair = pairs.get(agentId);
    if (!pair) {
      const made = generateKeyPairSync('ed25519');
      const publicKey = new Uint8Array(made.publicKey.export({ format: 'der', type: 'spki' }).subarray(-32));
      pair = { did: didFromPublicKey(publicKey), publicKey, privateKey: made.privateKey };
      pairs.set(agentId, pair);
    }
    return pair;
  };
  return {
    identity: (agentId) => {
      const pair = pairOf(agentId);
      return pair && { did: pair.did, publicKey: pair.publicKey };
    },
    sign: async (agentId, message) => {
      const pair = pairOf(agentId);
      if (!pair) throw new AgtError('not_found', `agent ${agentId} is not loaded`);
      return new Uint8Array(signBytes(null, message, pair.privateKey));
    },
  };
}

/** `ctx.agents.files` over each test agent's `files` map, with the kernel's path rule and `not_found`. */
function testFiles(agents: TestAgent[]): AgentFilesAccess {
  const filesOf = (agentId: string) => {
    const agent = agents.find((a) => a.id === agentId);
    if (!agent) throw new AgtError('not_found', `agent ${agentId} is not loaded`);
    return (agent.files ??= new Map());
  };
  const info = ({ content: _content, ...rest }: AgentFile) => rest;
  return {
    list: async (agentId, folder = '') => {
      const prefix = folder === '' ? '' : `${normalizeAgentPath(folder)}/`;
      return [...filesOf(agentId).values()]
        .filter((file) => file.path.startsWith(prefix))
        .map(info)
        .sort((a, b) => (a.path < b.path ? -1 : 1));
    },
    read: async (agentId, path) => filesOf(agentId).get(normalizeAgentPath(path)),
    write: async (agentId, path, content, mimeType = null) => {
      const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : Buffer.from(content);
      const file = {
        path: normalizeAgentPath(path),
        mimeType,
        size: bytes.byteLength,
        updatedAt: Date.now(),
        content: bytes,
      };
      filesOf(agentId).set(file.path, file);
      return info(file);
    },
    remove: async (agentId, path) => filesOf(agentId).delete(normalizeAgentPath(path)),
  };
}

/** `ctx.inbox`: records each delivery; `not_found` for an agent that is not in the list, as the kernel. */
export function testInbox(agents: TestAgent[], deliveries: Delivery[]): InboxService {
  return {
    deliver: async (agentId, message) => {
      if (!agents.some((a) => a.id === agentId)) throw new AgtError('not_found', `agent ${agentId} is not loaded`);
      const delivery = { agentId, message, messageId: deliveries.length + 1 };
      deliveries.push(delivery);
      return { messageId: delivery.messageId };
    },
    get: async (agentId, messageId) => {
      if (!agents.some((a) => a.id === agentId)) throw new AgtError('not_found', `agent ${agentId} is not loaded`);
      const found = deliveries.find((d) => d.agentId === agentId && d.messageId === messageId);
      if (!found) return undefined;
      const { message } = found;
      return {
        id: found.messageId,
        source: message.source,
        sender: message.sender ?? null,
        text: message.text,
        data: message.data ?? null,
        status: 'unread',
        externalId: message.externalId ?? null,
        createdAt: 0,
      };
    },
  };
}

/** `ctx.contribute`, recording into `recorded`. */
export function recordContributions(recorded: RecordedContributions): ExtensionContributions {
  return {
    modelClients: (provider) => void recorded.modelClients.push(provider),
    tools: (contributor) => void recorded.tools.push(contributor),
    inboxSource: (source) => void recorded.inboxSources.push(source),
    lifecycle: (hooks) => void recorded.lifecycle.push(hooks),
  };
}

/** `ctx.env` over the variables the test gives, less `AGT_*` as in the daemon. */
export function testEnv(vars: Record<string, string>): ExtensionEnv {
  return Object.freeze({
    get: (name: string) => (name.startsWith('AGT_') || !Object.hasOwn(vars, name) ? undefined : vars[name]),
    names: () => Object.keys(vars).filter((name) => !name.startsWith('AGT_')),
  });
}

/**
 * `ctx.provide` and `ctx.use` by the kernel's rules: offers only during `register`, one provider on a
 * `one` point; `use` answers from `uses` (what the dependencies would offer) and throws when none does.
 */
export class TestPoints {
  /** What the extension offered, by point id, in call order. */
  readonly offered = new Map<string, unknown[]>();
  registering = true;

  constructor(
    private readonly name: string,
    private readonly uses: readonly PointOffer[],
  ) {}

  provide<T>(point: ExtensionPoint<T>, implementation: T): void {
    if (!this.registering)
      throw new Error(
        `extension ${this.name} offers extension point ${point.id} after register: offer it during register`,
      );
    const list = this.offered.get(point.id) ?? [];
    if (point.providers === 'one' && list.length > 0)
      throw new Error(`extension point ${point.id} takes one provider and ${this.name} already provides it`);
    this.offered.set(point.id, [...list, implementation]);
  }

  use<T>(point: ExtensionPoint<T>): T | readonly T[] {
    const found = this.uses.filter((o) => o.point.id === point.id);
    if (found.length === 0) {
      throw new Error(
        `extension ${this.name} uses extension point ${point.id}, which no loaded extension provides (give it in the harness's uses: [offer(point, implementation)])`,
      );
    }
    return point.providers === 'one'
      ? (found[0]!.implementation as T)
      : Object.freeze(found.map((o) => o.implementation as T));
  }
}

/** `ctx.launcher` of the test kernel: the members given, the others reject with `unavailable`. */
export function testLauncher(given: Partial<AgentLauncher>): AgentLauncher {
  const missing = (member: string) => () =>
    Promise.reject(
      new AgtError('unavailable', `the test kernel has no agent files: pass launcher.${member} to startTestExtension`),
    );
  return {
    summarize: given.summarize ?? missing('summarize'),
    start: given.start ?? missing('start'),
    autostart: given.autostart ?? missing('autostart'),
    unload: given.unload ?? missing('unload'),
  };
}
