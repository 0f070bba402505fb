/**
 * The extension contract: what a subsystem (shipped or third-party) codes against.
 *
 * An extension module's default export is the value returned by {@link defineExtension}. The kernel
 * validates the definition, checks {@link CONTRACT_VERSION}, orders extensions by `dependsOn`, gives
 * each its own encapsulated fastify scope under `prefix`, calls `register(ctx)` and later `start()`;
 * at shutdown it calls `stop()` in reverse order, at most once.
 *
 * Extensions offer typed extension points to each other ({@link createExtensionPoint}, `ctx.provide`,
 * `ctx.use`): `dependsOn` names the extensions whose offers this one uses.
 */
import type { FastifyBaseLogger, FastifyInstance, RawServerDefault } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Static, TSchema } from 'typebox';
import type { EventBus } from './events.js';
import type { Logger } from './logger.js';
import type { ModelClientProvider } from './model.js';
import type { ToolContributor } from './tools.js';
import type { AgentLifecycleHooks, InboxSource } from './lifecycle.js';
import type { AgentsService, InboxService, SettingsService } from './services.js';
import type { AgentLauncher } from './agent-launcher.js';
import type { ServerGuards } from './server-guards.js';
import type { RuntimeGaugesAccess } from './runtime-gauges.js';
import type { DaemonIdentity, LocalRequests } from './relayed-requests.js';
import type { RequestAuth } from './request-auth.js';
import type { ExtensionSecrets } from './extension-secrets.js';
import contractsPackage from './package.json' with { type: 'json' };

/**
 * The contract version this kernel implements (`major.minor`): that of the `@agt/contracts` package
 * (`contracts/package.json`, the one place it is written), so an extension's `contract` and its
 * `@agt/contracts` dependency range say the same thing.
 *
 * @public
 */
export const CONTRACT_VERSION: string = contractsPackage.version.split('.').slice(0, 2).join('.');

/**
 * A fastify scope with the TypeBox type provider: route schemas are the types and the OpenAPI doc.
 *
 * @public
 */
export type ExtensionHttp = FastifyInstance<
  RawServerDefault,
  IncomingMessage,
  ServerResponse,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/**
 * How the providers of one {@link ExtensionPoint} combine.
 *
 * @public
 */
export type PointProviders = 'one' | 'all';

/**
 * Extension point ids: lowercase, namespaced by the offering extension (`tracked-folders.index`); `agt.` is the
 * kernel's.
 *
 * @public
 */
export const EXTENSION_POINT_ID_PATTERN = '^[a-z0-9][a-z0-9._-]*$';

/**
 * A typed slot that extensions fill with an implementation of `T` (`ctx.provide`) for the extensions
 * that depend on them (`ctx.use`) and, for the kernel's own points (`contracts/points.ts`), for the
 * kernel. Made once by {@link createExtensionPoint} in a module both sides import; two points with the
 * same `id` are the same point.
 *
 * How providers combine (`providers`):
 * - `one`: a single provider. A second `provide` (by another extension, or the same one again) throws,
 *   naming both, so the later extension fails to load; the first keeps the point.
 * - `all`: every provider, in load order; an extension may provide several implementations. Who reads
 *   the point decides how they combine; each point states it (for example "first that claims wins").
 *
 * @public
 */
export interface ExtensionPoint<T, P extends PointProviders = PointProviders> {
  readonly id: string;
  readonly providers: P;
  /** Carries `T` for the type checker; never set. */
  readonly __type?: (value: T) => T;
}

/**
 * Makes an extension point whose implementations have type `T`: `one` provider unless
 * `{providers: 'all'}`. Throws a `TypeError` for an id that does not match {@link EXTENSION_POINT_ID_PATTERN}.
 *
 * @public
 */
export function createExtensionPoint<T>(id: string, options?: { providers?: 'one' }): ExtensionPoint<T, 'one'>;
/** The same, for a point every provider of which is used (`{providers: 'all'}`). @public */
export function createExtensionPoint<T>(id: string, options: { providers: 'all' }): ExtensionPoint<T, 'all'>;
export function createExtensionPoint<T>(id: string, options: { providers?: PointProviders } = {}): ExtensionPoint<T> {
  if (typeof id !== 'string' || !new RegExp(EXTENSION_POINT_ID_PATTERN).test(id)) {
    throw new TypeError(`extension point id "${String(id)}" must match ${EXTENSION_POINT_ID_PATTERN}`);
  }
  const providers = options.providers ?? 'one';
  if (providers !== 'one' && providers !== 'all')
    throw new TypeError(`extension point ${id}: providers must be "one" or "all"`);
  return Object.freeze({ id, providers });
}

/**
 * The daemon's environment variables, read-only: the environment the daemon was started with (the
 * process's, or the one an embedder or a test passed to `startDaemon`), read at call time. The kernel's
 * own `AGT_*` variables (its token, the owner passphrase) are left out, so no setting can make an
 * extension send them anywhere. Not a sandbox: extensions run in the daemon's process.
 *
 * @public
 */
export interface ExtensionEnv {
  /** The variable's value, or undefined when unset (or an `AGT_*` variable). */
  get(name: string): string | undefined;
  /**
   * The names of the variables `get` answers (no `AGT_*` ones): for an extension that passes a family
   * of the owner's variables on by prefix (the mcp extension's npm gets every `npm_config_*`).
   * Optional for older kernels and hand-made test environments; the daemon's has it.
   */
  names?(): string[];
}

/**
 * Extension points. Each method may be called any number of times during `register`.
 *
 * @public
 */
export interface ExtensionContributions {
  /** First provider that resolves the agent's `model.provider` wins (load order). */
  modelClients(provider: ModelClientProvider): void;
  /** Concatenated in load order; built-in names win; later duplicates are skipped. */
  tools(contributor: ToolContributor): void;
  /** Attached to every loaded agent, in parallel; detached at unload or when this extension stops. */
  inboxSource(source: InboxSource): void;
  /** Sequential: load order for loaded/started, reverse for stopped/unloaded; errors logged. */
  lifecycle(hooks: AgentLifecycleHooks): void;
}

/**
 * The one object an extension reaches the kernel through (it never imports from `kernel/`). Handed to
 * `register` once; keep it for `start`, `stop` and handlers.
 *
 * @public
 */
export interface ExtensionContext<Config = unknown> {
  /** The extension's name (the manifest entry's, which equals the definition's). */
  name: string;
  /** The manifest's `config`, validated against the definition's `options` schema, defaults applied. */
  config: Config;
  /** The daemon's logger bound to `{extension: name}`. Never log secrets. */
  logger: Logger;
  /**
   * The extension's own encapsulated fastify scope: routes registered here live under `prefix`, and
   * hooks, decorators and error handlers stay inside it. Register routes during `register` only
   * (fastify refuses new routes once the server is ready). `GET` on `/` (the prefix itself) must list
   * the group's resources. Do not call `setNotFoundHandler`: the kernel owns the not-found and 503
   * answers of the prefix. Plugins registered here that throw fail this extension, not the daemon.
   */
  http: ExtensionHttp;
  /**
   * Routes registered here live under `/agents/:id/<agentRoutes>`; present only when `agentRoutes` is
   * declared. Plugins registered on it run directly in this scope (no `prefix` option).
   */
  agentHttp?: ExtensionHttp;
  /**
   * The event bus; events emitted here default to `source: "ext:<name>"`. Subscriptions end when the extension stops or
   * fails.
   */
  bus: EventBus;
  /** Read-only settings; `onChange` listeners are removed when the extension stops or fails. */
  settings: SettingsService;
  /** Loaded agents (the kernel's service, which exists before any extension loads: keeping it is safe). */
  agents: AgentsService;
  /** Delivery into agents' inboxes. */
  inbox: InboxService;
  /**
   * Agent files that are not (or not yet) loaded: read their summary, start, autostart, unload (see
   * `agent-launcher.ts`).
   */
  launcher: AgentLauncher;
  /** The daemon's environment variables, less the kernel's `AGT_*` ones (see {@link ExtensionEnv}). */
  env: ExtensionEnv;
  /**
   * The daemon's live figures (queued turns per agent, `GET /events` clients, every extension's state),
   * read on demand (see `runtime-gauges.ts`). The daemon's kernel always offers it; a fake kernel in
   * tests may not.
   */
  gauges?: RuntimeGaugesAccess;
  /**
   * Runs a request through this daemon's own API as the owner (see `agent-placement.ts`): for answering a
   * request another daemon forwarded. The daemon's kernel always offers it; a fake kernel in tests may not.
   *
   * @beta
   */
  requests?: LocalRequests;
  /**
   * This daemon's runtime key, to sign what the extension sends to other daemons (see `relayed-requests.ts`).
   * The daemon's kernel always offers it; a fake kernel in tests may not.
   *
   * @beta
   */
  daemonIdentity?: DaemonIdentity;
  /**
   * The extension's own sealed secrets, kept for the daemon rather than for one agent (see
   * `extension-secrets.ts`). The daemon's kernel always offers it; a fake kernel in tests may not.
   *
   * @beta
   */
  secrets?: ExtensionSecrets;
  /**
   * Checks a request's `Authorization` header against the daemon token, for a server the extension opens itself
   * (see `request-auth.ts`): the owner's credential, verified without the extension seeing it. The daemon's kernel
   * always offers it; a fake kernel in tests may not.
   *
   * @beta
   */
  auth?: RequestAuth;
  /**
   * Prints one line where the daemon prints its own listening line (stdout, unless the embedder
   * redirected it): for an extension's listening line such as `agt mesh listening on http://HOST:PORT`
   * (scripts wait for such lines). Not a log: say nothing secret, print rarely. Line breaks become spaces.
   */
  print(line: string): void;
  /**
   * For a server the extension opens itself (the mesh server, a webhook listener): `createServer` builds
   * a fastify server carrying the main API's Host / Origin / Sec-Fetch-Site guard, header and request
   * time limits, header size limit and JSON depth limit, by the same code (see `server-guards.ts`).
   * Every server an extension listens on must be made here.
   */
  serverGuards: ServerGuards;
  /** The kernel's own extension points; everything contributed is withdrawn when the extension fails or stops. */
  contribute: ExtensionContributions;
  /**
   * Offers `implementation` on `point` to the extensions that list this one in `dependsOn` (and to the
   * kernel, for its points in `contracts/points.ts`). Call during `register` only: later it throws. On
   * a `one` point that already has a provider it throws naming both (see {@link ExtensionPoint}).
   * Withdrawn when this extension fails or stops.
   */
  provide<T>(point: ExtensionPoint<T>, implementation: T): void;
  /**
   * What the extensions this one lists in `dependsOn` offer on `point`: the implementation of a `one`
   * point, or every implementation of an `all` point (load order). Throws, naming this extension and
   * the providers, when none of its dependencies offers it (list the provider in `dependsOn`: that is
   * also what makes it register first). Call it in `register` or later; keep what it returns.
   */
  use<T>(point: ExtensionPoint<T, 'one'>): T;
  use<T>(point: ExtensionPoint<T, 'all'>): readonly T[];
}

/**
 * What `register` may return. `Config` is the type of the extension's `options` (its `ctx.config`).
 *
 * @public
 */
export interface ExtensionHooks<Config = unknown> {
  /**
   * After every extension registered and the server listens, in dependency order (a dependency's
   * `start` has returned before). A throw, or taking longer than 15 s, marks this extension failed
   * (its routes answer 503, its contributions are withdrawn); the daemon keeps running.
   */
  start?(): Promise<void> | void;
  /**
   * At shutdown, in reverse dependency order, at most once; also called when `start` failed, so it
   * must cope with a half-started state. Must release every timer, socket and child. It gets at most
   * 5 s (less when the shutdown budget is nearly spent); errors are logged, never thrown further.
   */
  stop?(): Promise<void> | void;
  /**
   * Applies a new config without a restart: the owner changed it through
   * `PUT|PATCH /runtime/extensions/{name}/config` (`agt extensions config`). `config` was validated
   * against the definition's `options`, defaults applied, like `ctx.config` (which keeps the start-up
   * value: keep what this receives). Called only while the extension runs, one call at a time. A throw
   * refuses the change (the old config stays in force and nothing is persisted; say why in the error's
   * message). Without this hook a change is persisted and answered `restartRequired: true`.
   */
  reconfigure?(config: Config): Promise<void> | void;
  /**
   * What the running extension cannot do now and what the owner does about it, in one sentence (a port
   * in use and the setting that moves it, an engine not reachable); null when all is well. Read when
   * `GET /runtime`, `GET /runtime/extensions` (`problem`) or `agt status` ask: keep it cheap and
   * synchronous, and name no secret. A throw reads as null.
   *
   * @beta
   */
  problem?(): string | null;
}

/**
 * The default export of an extension module (made with {@link defineExtension}).
 *
 * @public
 */
export interface ExtensionDefinition<Options extends TSchema = TSchema> {
  /** Lowercase name (`^[a-z0-9][a-z0-9._-]*$`); must equal the manifest entry's `name`. */
  name: string;
  /** The extension's own semver version, shown by `GET /runtime/extensions`. */
  version: string;
  /**
   * The kernel contract version this was written against (`major.minor`, usually
   * {@link CONTRACT_VERSION}): it loads when the major equals the kernel's and the minor is not newer.
   */
  contract: string;
  /**
   * Extensions whose offers this one uses (`ctx.use`): they load and start first. A dependency that is
   * missing, disabled or failed (or in a cycle with this one) fails this one, naming all of them.
   */
  dependsOn?: string[];
  /**
   * Route prefix such as `/providers` (lowercase segments, no trailing slash); `GET` on it lists the
   * group's resources. It must not be a kernel route group's. Without a prefix the extension gets an
   * unprefixed scope (for extensions that only contribute). The kernel reads it (and `agentRoutes`)
   * from the definition even when the extension is disabled, to answer 503 there: keep importing the
   * module cheap (load heavy SDKs on first use).
   */
  prefix?: string;
  /** Segment of agent-scoped routes, for example `mcp` gives `/agents/:id/mcp/...`. */
  agentRoutes?: string;
  /** OpenAPI tags (route groups) this extension serves. */
  routeGroups?: string[];
  /** TypeBox schema of the manifest's `config` for this extension; an invalid config fails it, naming the field. */
  options?: Options;
  /**
   * Called once, while the daemon starts (before it listens), in dependency order. Register routes,
   * contributions and subscriptions here; do not start long-running work (that is `start`). Must
   * finish within 8 s. A throw (sync or async) fails this extension only: whatever it already
   * contributed is withdrawn and its routes answer 503.
   */
  register(
    ctx: ExtensionContext<Static<Options>>,
  ): Promise<ExtensionHooks<Static<Options>> | void> | ExtensionHooks<Static<Options>> | void;
}

/**
 * Marks a value as an extension definition; the identity function, typed.
 *
 * @public
 */
export function defineExtension<Options extends TSchema = TSchema>(
  definition: ExtensionDefinition<Options>,
): ExtensionDefinition<Options> {
  return definition;
}
