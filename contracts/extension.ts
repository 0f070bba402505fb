/**
 * The extension contract: what a subsystem (shipped or third-party) codes against.
 *
 * An extension module's default export is the value returned by {@link defineExtension}. The kernel
 * validates the definition, checks {@link CONTRACT_VERSION}, orders extensions by `dependsOn`, gives
 * each its own encapsulated fastify scope under `prefix`, calls `register(ctx)` and later `start()`;
 * at shutdown it calls `stop()` in reverse order, at most once.
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

/** The contract version this kernel implements (`major.minor`). */
export const CONTRACT_VERSION = '1.0';

/** A fastify scope with the TypeBox type provider: route schemas are the types and the OpenAPI doc. */
export type ExtensionHttp = FastifyInstance<
  RawServerDefault,
  IncomingMessage,
  ServerResponse,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/** Extension points. Each method may be called any number of times during `register`. */
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
  /** The event bus; events emitted here default to `source: "ext:<name>"`. Subscriptions end when the extension stops or fails. */
  bus: EventBus;
  /** Read-only settings; `onChange` listeners are removed when the extension stops or fails. */
  settings: SettingsService;
  /** Loaded agents. Always the kernel's current service (looked up at call time), so keeping a reference is safe. */
  agents: AgentsService;
  /** Delivery into agents' inboxes; looked up at call time like `agents`. */
  inbox: InboxService;
  /** Extension points; everything contributed is withdrawn when the extension fails or stops. */
  contribute: ExtensionContributions;
}

/** What `register` may return. */
export interface ExtensionHooks {
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
}

/** The default export of an extension module (made with {@link defineExtension}). */
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
   * Names of extensions that must be loaded first. Loading follows this order; a dependency that is
   * missing, disabled or failed (or in a cycle with this one) fails this one, naming all of them.
   */
  dependsOn?: string[];
  /**
   * Route prefix such as `/providers` (lowercase segments, no trailing slash); `GET` on it lists the
   * group's resources. It must not be a kernel route group's. Without a prefix the extension gets an
   * unprefixed scope (for extensions that only contribute).
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
  register(ctx: ExtensionContext<Static<Options>>): Promise<ExtensionHooks | void> | ExtensionHooks | void;
}

/** Marks a value as an extension definition; the identity function, typed. */
export function defineExtension<Options extends TSchema = TSchema>(
  definition: ExtensionDefinition<Options>,
): ExtensionDefinition<Options> {
  return definition;
}
