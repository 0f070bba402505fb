/**
 * The contract of a chat-platform adapter of the `channels` extension: what one adapter
 * type (Telegram, Slack, Discord, email, or a third-party one) implements, and the extension point through
 * which another extension adds a type.
 *
 * Who does what:
 * - The adapter speaks its platform: it connects with the agent's credentials, turns each platform message
 *   into an {@link AdapterInbound} handed to {@link AdapterHost.receive}, and sends one already-sized chunk
 *   of text per {@link ChannelAdapter.send}.
 * - The `channels` core does the rest, identically for every type: the agent's policy (`dm`, `groups`,
 *   `allow_from`), attachment size limits and storage under `inbox/<type>/`, the `agt_inbox` row and
 *   `on_inbox`, the outbox (splitting text to {@link PlatformLimits.maxTextLength}, retries that honour
 *   {@link AdapterSendError.retryAfterMs}), status, reconnect with backoff, and reconciling on config change.
 *
 * Adding a type is one file exporting an {@link AdapterType} plus one line in the extension's list of
 * built-in types (`extensions/channels/adapters/index.ts`). A third-party package adds one from its own
 * extension: list `channels` in `dependsOn`, then in `register`
 * `const off = ctx.use(channelAdapterTypes).add(myType)` and call `off()` in `stop`.
 */
import type { TSchema } from 'typebox';
import { createExtensionPoint } from './extension.js';
import type { Logger } from './logger.js';
import type { OwnerTaskKind } from './owner-tasks.js';

/**
 * What `GET /agents/{id}/adapters` shows for one adapter.
 *
 * @beta
 */
export type AdapterStatus = 'connected' | 'connecting' | 'disconnected' | 'error';

/**
 * What a platform allows per message; the core shapes outbound text and inbound files to it.
 *
 * @beta
 */
export interface PlatformLimits {
  /** Longest text of one sent message, in UTF-16 code units (Telegram 4096, Discord 2000). Longer text is split. */
  maxTextLength: number;
  /** The platform's own cap on one inbound file in bytes, when lower than the agent's `max_attachment_size`. */
  maxAttachmentSize?: number;
}

/**
 * One file attached to an inbound message. Its content is fetched only when its size is allowed.
 *
 * @beta
 */
export interface InboundAttachment {
  /** The file name the sender gave (the core makes it a safe path segment); a made-up one when none. */
  name: string;
  mimeType: string | null;
  /**
   * The size the platform announces, in bytes, or null when unknown. Announced sizes above the limit are
   * refused without a download; unknown ones are checked against the limit while downloading.
   */
  size: number | null;
  /**
   * Downloads the file. `maxBytes` is the most the core will keep: stop and reject (any error) once more
   * arrives, so a lying or unknown size never fills the memory. Email adapters have the bytes already.
   */
  fetch(maxBytes: number): Promise<Uint8Array>;
}

/**
 * One message from the platform, in the platform's own ids (all strings).
 *
 * @beta
 */
export interface AdapterInbound {
  /** The platform's id of this message (Telegram `message_id`, Slack `ts`, email `Message-ID`). */
  messageId: string;
  /** Where a reply goes: the outbound recipient (`telegram:<chatId>`). For email, the sender's address. */
  chatId: string;
  /** `dm` is a one-to-one conversation with the bot; `group` anything shared (groups, channels, guild channels). */
  chatKind: 'dm' | 'group';
  /** The sender's platform id (the one `policy.allow_from` lists) and a display name when known. */
  sender: { id: string; name?: string };
  /** The bot was mentioned or replied to (the `groups: mention` policy lets only these through). */
  mentioned: boolean;
  /** A thread inside the chat (Slack `thread_ts`, Telegram topic, email `References` root), when any. */
  threadId?: string;
  /** The platform id of the message this one answers, when any. */
  replyToId?: string;
  /** The text (caption, body); `''` when the message is only files. */
  text: string;
  attachments: InboundAttachment[];
  /** Small platform-specific extras kept in the inbox row's `data.platform` (no secrets, no file bodies). */
  extra?: Record<string, unknown>;
}

/**
 * One chunk of outbound text, already within {@link PlatformLimits.maxTextLength}.
 *
 * @beta
 */
export interface AdapterOutbound {
  chatId: string;
  text: string;
  /** Thread to post in (from the inbox row replied to). */
  threadId?: string;
  /** Platform message id to answer (from the inbox row replied to); only on the first chunk. */
  replyToId?: string;
  /**
   * The agent's outbox row id and the chunk's index: a stable key for platforms that dedupe (email Message-ID).
   * 0: no outbox row (a notice of the core, such as the receipt of an owner's answer to a task).
   */
  outboxId: number;
  chunk: number;
}

/**
 * Brands that identify the adapter errors across copies of this module: an adapter of a third-party
 * extension, which imports its own copy of the contracts, rejects with errors the channels extension
 * recognizes.
 */
const ADAPTER_SEND_ERROR_BRAND = Symbol.for('agt.contracts.AdapterSendError');
const ADAPTER_CONNECT_ERROR_BRAND = Symbol.for('agt.contracts.AdapterConnectError');

/**
 * What `send` rejects with when the platform refused. Anything else thrown counts as a network error and
 * is retried with backoff.
 *
 * @beta
 */
export class AdapterSendError extends Error {
  /** `instanceof AdapterSendError` is true for any copy's (a brand, see above). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return (
      typeof value === 'object' &&
      value !== null &&
      (value as Record<symbol, unknown>)[ADAPTER_SEND_ERROR_BRAND] === true
    );
  }

  readonly [ADAPTER_SEND_ERROR_BRAND] = true;
  /** Wait this long before the next try (the platform's rate-limit answer: 429 `retry_after`, `Retry-After`). */
  readonly retryAfterMs?: number;
  /** Retrying cannot help (unknown chat, bot blocked, message refused): the outbox row fails at once. */
  readonly permanent: boolean;
  /** The platform's status code, when it gave one (recorded with the outbox row). */
  readonly statusCode?: number;

  constructor(message: string, options: { retryAfterMs?: number; permanent?: boolean; statusCode?: number } = {}) {
    super(message);
    this.name = 'AdapterSendError';
    if (options.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
    this.permanent = options.permanent ?? false;
    if (options.statusCode !== undefined) this.statusCode = options.statusCode;
  }
}

/**
 * What `connect` rejects with when retrying cannot help (a token the platform refuses, a credential that is
 * missing or locked): the adapter's status becomes `error` with this message and the core stops retrying
 * until the config, the credential or a restart changes something. Anything else thrown is retried with
 * backoff (status `connecting`).
 *
 * @beta
 */
export class AdapterConnectError extends Error {
  /** `instanceof AdapterConnectError` is true for any copy's (a brand, see above). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return (
      typeof value === 'object' &&
      value !== null &&
      (value as Record<symbol, unknown>)[ADAPTER_CONNECT_ERROR_BRAND] === true
    );
  }

  readonly [ADAPTER_CONNECT_ERROR_BRAND] = true;
  readonly permanent = true;
  constructor(message: string) {
    super(message);
    this.name = 'AdapterConnectError';
  }
}

/**
 * The core's side, handed to {@link AdapterType.create}: one per agent and adapter type.
 *
 * @beta
 */
export interface AdapterHost {
  readonly agentId: string;
  readonly type: string;
  /** The adapter instance's `config` (validated against {@link AdapterType.configSchema}). No secrets. */
  readonly config: Readonly<Record<string, unknown>>;
  /**
   * The owner's settings for this type from the extension's manifest config (`channels.config.types.<type>`),
   * such as a self-hosted API root. Agents cannot set these: anything that decides where credentials are
   * sent belongs here, never in the agent's `config`.
   */
  readonly options: Readonly<Record<string, unknown>>;
  /**
   * The agent's sealed credential `adapter:<type>:<key>`; rejects with {@link AdapterConnectError} when it
   * is unset or the credential store is locked (call it in `connect`, never log the value).
   */
  credential(key: string): Promise<string>;
  /** Hand over one platform message; resolves once it is committed (or refused by policy). Never rejects. */
  receive(message: AdapterInbound): Promise<void>;
  /**
   * The connection dropped after `connect` resolved. `recovering: true` when the library reconnects by
   * itself (status `connecting` until {@link connected}); false to have the core `disconnect` and
   * `connect` again with backoff.
   */
  lost(reason: string, options?: { recovering?: boolean }): void;
  /** The library's own reconnect succeeded (after `lost(…, {recovering: true})`). */
  connected(): void;
  /** Bound to `{extension: 'channels', agentId, adapter: type}`. Never log secrets or message bodies. */
  readonly logger: Logger;
  /**
   * A button press on a posted {@link TaskPrompt}: the core checks that `from` is the owner's account and the
   * token is open, answers the task, and resolves with the line to show the presser (`ok` false: refused or
   * no longer open; the task stays as it was). Never rejects. Absent on a core without owner tasks.
   */
  answerTask?(press: TaskPress): Promise<{ ok: boolean; message: string }>;
}

/**
 * One task waiting for the owner ({@link OwnerTask}) as an adapter shows it: text, and buttons.
 *
 * @beta
 */
export interface TaskPrompt {
  /**
   * Opaque and unguessable, mapped by the core to the task: put it with a choice's `id` in the button's
   * callback data (`<token>:<choice id>` fits Telegram's 64 bytes). Never show the task id instead.
   */
  token: string;
  kind: OwnerTaskKind;
  /** What waits, for which agent, plain text (the platform's limit is the adapter's to respect). */
  text: string;
  /** One button each, in order: a short `id` (`[a-z0-9]{1,8}`) and the label to show. */
  choices: Array<{ id: string; label: string }>;
  /** A reply's text is an answer too (an ask): say so next to the buttons when the platform shows hints. */
  acceptsText: boolean;
}

/**
 * Where an adapter posted a {@link TaskPrompt}: the core keeps it to close the prompt later and to match
 * a reply (an inbound message whose `replyToId` or `threadId` is `messageId`) to the task.
 *
 * @beta
 */
export interface TaskPost {
  chatId: string;
  messageId: string;
  /** `messageId` is unique across chats (an email Message-ID): a reply from any chat names this post. */
  uniqueId?: boolean;
}

/**
 * A press of one of a {@link TaskPrompt}'s buttons, handed to {@link AdapterHost.answerTask}.
 *
 * @beta
 */
export interface TaskPress {
  token: string;
  choice: string;
  /** The platform id of who pressed: the core compares it with the owner's account for this type. */
  from: string;
}

/**
 * One running adapter of one agent.
 *
 * @beta
 */
export interface ChannelAdapter {
  /**
   * Connects and starts receiving; resolves once messages can flow. Rejects with
   * {@link AdapterConnectError} when retrying cannot help, with anything else to be retried. A rejected
   * connect is followed by `disconnect` before any retry, so it may leave things half-open.
   */
  connect(): Promise<void>;
  /** Stops receiving and releases every socket and timer; must not throw, may be called more than once. */
  disconnect(): Promise<void>;
  /** Sends one chunk; resolves with the platform's id of the sent message. Rejects as {@link AdapterSendError} says. */
  send(message: AdapterOutbound): Promise<{ messageId: string }>;
  /**
   * Optional: posts a task to the owner's own account `owner` (the `owners.<type>` setting: a user id, an
   * email address) with its choices as buttons the platform sends back to the adapter, which hands each
   * press to {@link AdapterHost.answerTask}. Without it, tasks are not offered on this platform.
   */
  postTask?(owner: string, prompt: TaskPrompt): Promise<TaskPost>;
  /**
   * Optional: the task was answered (here or anywhere else) or cancelled: replace the post's buttons with
   * `outcome` where the platform allows editing a message. Must not throw for a message that is gone.
   */
  closeTask?(post: TaskPost, prompt: TaskPrompt, outcome: string): Promise<void>;
}

/**
 * One adapter type: `telegram`, `slack`, ...
 *
 * @beta
 */
export interface AdapterType {
  /** The config key (`adapters.<type>`) and address scheme (`<type>:<chat id>`): `^[a-z][a-z0-9-]{0,31}$`. */
  type: string;
  /** The credential keys it reads (`adapter:<type>:<KEY>`), listed by `GET /channels`. */
  credentials: readonly string[];
  /** TypeBox schema of the instance's `config` object; `PUT /agents/{id}/adapters/{type}` validates with it. */
  configSchema?: TSchema;
  limits: PlatformLimits;
  /** Makes the adapter (it must not connect yet). Heavy SDKs are imported in `connect`, not at module load. */
  create(host: AdapterHost): ChannelAdapter;
}

/**
 * The registry of adapter types the `channels` extension offers to the extensions that depend on it.
 *
 * @beta
 */
export interface ChannelAdapterTypes {
  /**
   * Adds a type; returns how to remove it (adapters of that type then stop). Throws for a malformed or an
   * already registered `type`. Agents' adapters of the type start when it is added.
   */
  add(type: AdapterType): () => void;
  /** The registered type names. */
  list(): string[];
}

/**
 * Offered by `channels` (one provider): `ctx.use(channelAdapterTypes)` from an extension with `dependsOn:
 * ['channels']`.
 *
 * @beta
 */
export const channelAdapterTypes = createExtensionPoint<ChannelAdapterTypes>('channels.adapter-types');

/**
 * The allowed shape of an adapter type name.
 *
 * @beta
 */
export const ADAPTER_TYPE_PATTERN = '^[a-z][a-z0-9-]{0,31}$';
