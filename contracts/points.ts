/**
 * The extension points the kernel itself consumes. Shipped extensions offer them (`ctx.provide`); a
 * third-party extension may too. Each states how its providers combine.
 */
import type { AgentConfig } from './agent-config.js';
import type { CommandOutcome, CommandRun } from './commands.js';
import { createExtensionPoint } from './extension.js';

export type { CommandOutcome, CommandRun } from './commands.js';

/**
 * Finds agent files that are not loaded. Offered by `tracked-folders`.
 *
 * @public
 */
export interface AgentLocator {
  /**
   * Absolute paths of agent files whose id, handle or name is `reference`; empty when none matches.
   * Called by the kernel for `POST /agents/{id}/start` when no loaded agent matches `{id}` (the kernel
   * then loads a single match through the review gate, and answers 409 with the candidates for
   * several). Must not load an agent or change any file; must answer within 10 s.
   */
  locate(reference: string): Promise<readonly string[]> | readonly string[];
  /**
   * Absolute paths of every agent file the locator knows (loaded or not). Optional; the kernel's
   * scheduled backups (settings `backups`, docs/backups.md) copy these besides the loaded agents. Must
   * not load an agent or change any file.
   */
  list?(): Promise<readonly string[]> | readonly string[];
}

/**
 * One provider (a second is a load error naming both): the kernel asks it only about references that
 * no loaded agent matches.
 *
 * @public
 */
export const agentLocator = createExtensionPoint<AgentLocator>('agt.agent-locator');

/**
 * One outbox message on its way out, as `msg_send` committed it.
 *
 * @public
 */
export interface OutboundEnvelope {
  /** The sending agent's id. */
  agentId: string;
  /** Its `agt_outbox` row. */
  messageId: number;
  /**
   * Where it goes: the `recipient` when it starts with a scheme (`did:key:z6Mk…`, `telegram:123`),
   * else `<channel>:<recipient>` (`<channel>:` without a recipient). See {@link outboundAddress}.
   */
  address: string;
  channel: string;
  recipient: string | null;
  text: string;
  /**
   * The `data` the agent gave `msg_send`. By convention `data.parent_id` (an inbox row id) makes the message
   * a reply to that inbox message: the transport reads the row (`ctx.inbox.get`, see {@link parentIdOf}) and
   * takes the route back and the threading from it, also when the recipient is left out.
   */
  data?: unknown;
  /**
   * True when the row was handed over before (the daemon restarted, or the agent was reloaded, while it
   * was `pending`): the receiver may already have it, so the transport must send it under the same
   * message id it used the first time (derive the id from the agent and `messageId`), for the receiver
   * to drop the duplicate.
   */
  resumed?: boolean;
  /**
   * The W3C `traceparent` of the span this message leaves from, when a {@link traceContext} provider
   * (the `telemetry` extension) gives one: a transport carries it to the receiver (the mesh puts it in the
   * envelope's `payload.traceparent`), which hands it back through `InboundMessage.traceparent`.
   */
  traceparent?: string;
}

/**
 * What a transport tells the kernel about one delivery while it works on it.
 *
 * @public
 */
export interface OutboundReport {
  /**
   * One try is over and another will follow (the row stays `pending`): `attempts` grows by one and
   * `status_code` / `error` record what the receiver answered (null for a network error).
   */
  attemptFailed(statusCode: number | null, error: string): void;
}

/**
 * How a delivery ended well; `statusCode` is the receiver's answer (recorded as `status_code`).
 *
 * @public
 */
export interface OutboundResult {
  statusCode?: number;
}

/**
 * Sends outbox messages to the addresses of some schemes. Offered by `mesh` (`did:`) and `channels` (`telegram:`, ...).
 *
 * @public
 */
export interface OutboundTransport {
  /**
   * The address schemes it delivers to, each ending in `:` (`did:`, `telegram:`); matched
   * case-insensitively against the start of {@link OutboundEnvelope.address}.
   */
  schemes: readonly string[];
  /**
   * Delivers one message. The kernel marks the row `pending` before the call. Resolve once it is
   * delivered (the row becomes `delivered` with `delivered_at`), reject when it cannot be (the row
   * becomes `failed`, with the error's message and its numeric `statusCode` property, when it has one).
   * Each try counts in `attempts`: report the ones that failed and will be retried through `report`;
   * the try that settles the call is counted by the kernel. Retries and backoff are the transport's own;
   * the kernel sets no deadline. Called after the row is committed, once per row and daemon run; a row
   * still `pending` when its agent loads again is handed over again with `resumed: true`.
   */
  send(envelope: OutboundEnvelope, report: OutboundReport): Promise<OutboundResult | void>;
}

/**
 * All providers, in load order; for each message the first transport with a scheme that claims its
 * address wins. When none claims it, the row stays `queued` (what `msg_send` did before transports).
 * Outbox statuses: `queued` (no transport), `pending` (handed to one), `delivered`, `failed`.
 *
 * @public
 */
export const outboundTransports = createExtensionPoint<OutboundTransport>('agt.outbound-transports', {
  providers: 'all',
});

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/**
 * The address of a `msg_send` (see {@link OutboundEnvelope.address}).
 *
 * @public
 */
export function outboundAddress(channel: string, recipient: string | null | undefined): string {
  if (recipient && SCHEME.test(recipient)) return recipient;
  return `${channel}:${recipient ?? ''}`;
}

/**
 * The inbox row a message answers (`data.parent_id`, a positive integer or its digits), or undefined when it
 * answers none. Transports read it the same way through this function.
 *
 * @public
 */
export function parentIdOf(envelope: Pick<OutboundEnvelope, 'data'>): number | undefined {
  const data = envelope.data;
  if (typeof data !== 'object' || data === null) return undefined;
  const value = (data as { parent_id?: unknown }).parent_id;
  const id =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && /^\d{1,15}$/.test(value)
        ? Number(value)
        : Number.NaN;
  return Number.isSafeInteger(id) && id > 0 ? id : undefined;
}

/**
 * Runs system-scope `command` targets somewhere stronger than the kernel's own runner (a container).
 * Offered by `compute`.
 *
 * @public
 */
export interface CommandExecutor {
  /**
   * Runs the command for the agent, or resolves `undefined` to leave it to the kernel's host runner (an
   * agent whose tier is `host`). Rejects with a coded error when it cannot run it (`unavailable`: the
   * engine is unreachable); the kernel then fails the target, never falling back to the host.
   */
  run(run: CommandRun): Promise<CommandOutcome | undefined>;
}

/**
 * One provider (a second is a load error naming both). Without one, command targets run in the kernel's
 * host runner (a new network namespace as an unprivileged user, when the daemon is root).
 *
 * @public
 */
export const commandExecutor = createExtensionPoint<CommandExecutor>('agt.command-executor');

/**
 * One part of an agent config that an {@link AgentConfigCheck} refuses.
 *
 * @public
 */
export interface AgentConfigProblem {
  /** Where, dotted: `mcp.servers.ownertool.env.GIT_CONFIG_PARAMETERS`. */
  field: string;
  /** Why, for the owner: what to change and where (never a secret value). */
  reason: string;
}

/**
 * Checks an agent config against the owner's settings an extension owns (the mcp extension: variables
 * an agent may set for a registered server, `allowAgentEnv`). Called by the kernel, synchronously, for a
 * config change (`PUT`/`PATCH` config, the agent's `sys_update_config`, an extension's `updateConfig`:
 * refused with 400 `bad_request` naming each new problem), at load (the agent loads; the answer's
 * `refused` lists them) and for `GET /agents/review` (`summary.refused`). Must be pure and quick (no
 * I/O); the extension must also enforce its rule where it acts (a check is a report, not the boundary).
 *
 * @public
 */
export interface AgentConfigCheck {
  check(config: Readonly<AgentConfig>, agentId: string): readonly AgentConfigProblem[];
}

/**
 * All providers; their problems are concatenated.
 *
 * @public
 */
export const agentConfigChecks = createExtensionPoint<AgentConfigCheck>('agt.agent-config-checks', {
  providers: 'all',
});

/**
 * What a {@link RequestCredentialCheck} sees of a request: read-only, never the body.
 *
 * @public
 */
export interface CredentialRequest {
  readonly method: string;
  /** The path and query as the client sent them. */
  readonly url: string;
  /** Lowercase header names (node's `IncomingMessage.headers`). */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/**
 * A credential an extension issues besides the daemon token (the console's browser sessions). The
 * kernel's guard asks it only after the Host / Origin / Sec-Fetch-Site checks passed and the request
 * carries no valid bearer token; `loopbackOnly` routes stay loopback-only. Must be synchronous and quick
 * (it runs on every such request), compare secrets in constant time (or by a hash lookup), and never log
 * the credential.
 *
 * @public
 */
export interface RequestCredentialCheck {
  /** True when the request carries a live credential this extension issued: it then passes as the owner's. */
  accepts(request: CredentialRequest): boolean;
}

/**
 * All providers; a request passes when any accepts it. Withdrawn when the offering extension stops or fails.
 *
 * @public
 */
export const requestCredentials = createExtensionPoint<RequestCredentialCheck>('agt.request-credentials', {
  providers: 'all',
});
