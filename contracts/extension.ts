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
  /** Attached to every started agent, in parallel. */
  inboxSource(source: InboxSource): void;
  /** Sequential: load order for loaded/started, reverse for stopped/unloaded; errors logged. */
  lifecycle(hooks: AgentLifecycleHooks): void;
}

export interface ExtensionContext<Config = unknown> {
  name: string;
  /** The manifest's `config`, validated against the definition's `options` schema. */
  config: Config;
  logger: Logger;
  /** Routes registered here live under the extension's `prefix`. */
  http: ExtensionHttp;
  /** Routes registered here live under `/agents/:id/<agentRoutes>`; present only when declared. */
  agentHttp?: ExtensionHttp;
  bus: EventBus;
  settings: SettingsService;
  agents: AgentsService;
  inbox: InboxService;
  contribute: ExtensionContributions;
}

export interface ExtensionHooks {
  /** After every extension registered and the server listens. A throw marks this extension failed. */
  start?(): Promise<void> | void;
  /** At unload/shutdown, reverse order, at most once; must release every timer, socket and child. */
  stop?(): Promise<void> | void;
}

export interface ExtensionDefinition<Options extends TSchema = TSchema> {
  name: string;
  version: string;
  /** The kernel contract version this was written against (`major.minor`). */
  contract: string;
  /** Names of extensions that must be loaded first; a missing or failed one disables this one. */
  dependsOn?: string[];
  /** Route prefix such as `/providers`; `GET` on it lists the group's resources. */
  prefix?: string;
  /** Segment of agent-scoped routes, for example `mcp` gives `/agents/:id/mcp/...`. */
  agentRoutes?: string;
  /** OpenAPI tags (route groups) this extension serves. */
  routeGroups?: string[];
  /** Schema of the manifest's `config` for this extension. */
  options?: Options;
  register(ctx: ExtensionContext<Static<Options>>): Promise<ExtensionHooks | void> | ExtensionHooks | void;
}

/** Marks a value as an extension definition; the identity function, typed. */
export function defineExtension<Options extends TSchema = TSchema>(
  definition: ExtensionDefinition<Options>,
): ExtensionDefinition<Options> {
  return definition;
}
