/**
 * `@agt/contracts`: the public surface a third-party extension codes against, and its only entry point
 * (with `@agt/contracts/testing`). Deep paths (`@agt/contracts/errors`) are not exported: what is not
 * re-exported here is not part of the contract.
 *
 * Stability (docs/extensions.md "Stability"): every module below is tagged. `@stability stable` names
 * keep their meaning for the whole 1.x line (additions only; a removal or change is a major version);
 * `@experimental` names may change in a minor version, with a CHANGELOG.md entry.
 *
 * @packageDocumentation
 */

/** @stability stable: `AgtError`, error codes and their HTTP statuses. */
export * from './errors.js';
/** @stability stable: the event map of `ctx.events`. */
export * from './events.js';
/** @stability stable: `defineExtension`, `CONTRACT_VERSION`, the context an extension receives. */
export * from './extension.js';
/** @stability stable: typed extension points (`ctx.points`). */
export * from './points.js';
/** @stability stable: model clients and providers. */
export * from './model.js';
/** @stability stable: tool definitions and contributors. */
export * from './tools.js';
/** @stability stable: agent lifecycle hooks and inbox sources. */
export * from './lifecycle.js';
/** @stability stable: the kernel services an extension reaches through `ctx`. */
export * from './services.js';
/** @stability stable: daemon settings an extension reads. */
export * from './settings.js';
/** @stability stable: the agent-file config schema (the sections an extension reads). */
export * from './agent-config.js';
/** @stability stable: bounded-input validation helpers. */
export * from './validate.js';
/** @stability stable: the logger an extension is handed. */
export type { Logger } from './logger.js';
/** @stability stable: route helpers (`errorResponses`, `AgentIdParams`, route config). */
export * from './http.js';
/** @experimental server guards for an extension's own listener. */
export * from './server-guards.js';
/** @stability stable: `ctx.launcher` (summaries, start, autostart, unload of agent files). */
export * from './agent-launcher.js';
/** @experimental notices of agent-file changes. */
export * from './agent-file-changes.js';
/** @experimental agent DIDs, signatures (`ctx.agents.keys`). */
export * from './agent-keys.js';
/** @stability stable: RFC 8785 canonical JSON and the strict JSON reader. */
export * from './canonical-json.js';
/** @experimental an agent's lambdas run in its sandbox (`ctx.agents.runLambda`). */
export * from './agent-lambdas.js';
/** @experimental an agent's served paths. */
export * from './agent-paths.js';
/** @experimental turns of an agent driven by an extension (`ctx.agents.turns`). */
export * from './agent-turns.js';
/** @experimental the channel-adapter point the `channels` extension owns. */
export * from './channel-adapters.js';
/** @experimental sandboxed command limits. */
export * from './command-limits.js';
/** @experimental sandboxed commands (`ctx.commands`). */
export * from './commands.js';
/** @experimental error answers for an extension's own listener. */
export * from './error-answers.js';
/** @experimental the MCP registration point the `mcp` extension owns. */
export * from './mcp.js';
/** @experimental model pricing tables. */
export * from './pricing.js';
/** @experimental W3C trace context handed to a `traceContext` provider. */
export * from './trace-context.js';
/** @experimental live figures of the daemon (`ctx.gauges`). */
export * from './runtime-gauges.js';
