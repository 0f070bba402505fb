/**
 * `@agt/contracts`: the public surface a third-party extension codes against, and its only entry point
 * (with `@agt/contracts/testing`). Deep paths (`@agt/contracts/errors`) are not exported: what is not
 * re-exported here is not part of the contract.
 *
 * Stability (docs/extensions.md "Stability") is marked per exported name by its TSDoc release tag, at its
 * declaration: `@public` names are stable, they keep their meaning for the whole 1.x line (additions only; a
 * removal or change is a major version); `@beta` names are experimental, they may change in a minor version,
 * with a CHANGELOG.md entry. The API report (api/*.api.md, scripts/api-report.mjs) lists every exported name
 * with its signature and tag; `npm test` fails when the package differs from it, or a name has no tag.
 *
 * @packageDocumentation
 */

/** `AgtError`, error codes and their HTTP statuses. */
export * from './errors.js';
/** the event map of `ctx.events`. */
export * from './events.js';
/** `defineExtension`, `CONTRACT_VERSION`, the context an extension receives. */
export * from './extension.js';
/** typed extension points (`ctx.points`). */
export * from './points.js';
/** model clients and providers. */
export * from './model.js';
/** tool definitions and contributors. */
export * from './tools.js';
/** agent lifecycle hooks and inbox sources. */
export * from './lifecycle.js';
/** the kernel services an extension reaches through `ctx`. */
export * from './services.js';
/** daemon settings an extension reads. */
export * from './settings.js';
/**
 * The agent-file config as an extension reads it (`AgentView.config`) and writes it
 * (`ctx.agents.updateConfig`): types only. The schema that validates agent files is the kernel's.
 */
export type {
  AgentConfig,
  AgentProviderConfig,
  LoopConfig,
  McpServerConfig,
  ModelConfig,
  ToolDeclaration,
  TriggerConfig,
  TriggerTarget,
  TriggerType,
} from './agent-config.js';
/** bounded-input validation helpers. */
export * from './validate.js';
/** the logger an extension is handed. */
export type { Logger } from './logger.js';
/** route helpers (`errorResponses`, `AgentIdParams`, route config). */
export * from './http.js';
/** server guards for an extension's own listener. */
export * from './server-guards.js';
/** `ctx.launcher` (summaries, start, autostart, unload of agent files). */
export * from './agent-launcher.js';
/** notices of agent-file changes. */
export * from './agent-file-changes.js';
/** agent DIDs, signatures (`ctx.agents.keys`). */
export * from './agent-keys.js';
/** RFC 8785 canonical JSON and the strict JSON reader. */
export * from './canonical-json.js';
/** an agent's lambdas run in its sandbox (`ctx.agents.runLambda`). */
export * from './agent-lambdas.js';
/** an agent's served paths. */
export * from './agent-paths.js';
/** the passive content type of an agent's stored file. */
export * from './file-types.js';
/** turns of an agent driven by an extension (`ctx.agents.turns`). */
export * from './agent-turns.js';
/** what waits for the owner, answered from elsewhere (`ctx.agents.tasks`). */
export * from './owner-tasks.js';
/** the channel-adapter point the `channels` extension owns. */
export * from './channel-adapters.js';
/** sandboxed command limits. */
export * from './command-limits.js';
/** sandboxed commands (`ctx.commands`). */
export * from './commands.js';
/** long-lived processes in an agent's command sandbox (`ctx.agents.spawnSandboxed`). */
export * from './sandboxed-processes.js';
/** error answers for an extension's own listener. */
export * from './error-answers.js';
/** the MCP registration point the `mcp` extension owns. */
export * from './mcp.js';
/** model pricing tables. */
export * from './pricing.js';
/** W3C trace context handed to a `traceContext` provider. */
export * from './trace-context.js';
/** an extension's sealed secrets of the daemon (`ctx.secrets`). */
export * from './extension-secrets.js';
/** live figures of the daemon (`ctx.gauges`). */
export * from './runtime-gauges.js';
/** agents across several daemons: placement, forwarding, local requests (`ctx.requests`). */
export * from './agent-placement.js';
/** event streams wider than one daemon (`GET /events?scope=`). */
export * from './event-scopes.js';
/** relayed requests, `ctx.requests` and `ctx.daemonIdentity`. */
export * from './relayed-requests.js';
/** the daemon token checked for an extension's own server (`ctx.auth`). */
export * from './request-auth.js';
/** carriers of agents' messages, asked before the transports (the fleet's JetStream). */
export * from './message-carriers.js';
/** agent files copied while they run: snapshots, the replication point, the turn ids an event ends. */
export * from './agent-replication.js';
/** agent files an extension answers for: opened without the read in a child process. */
export * from './agent-file-vouchers.js';
