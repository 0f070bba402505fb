/**
 * The extension loader: reads the manifest, imports and checks each enabled module, orders them by
 * `dependsOn`, and registers each in its own encapsulated fastify scope under its prefix (plus one at
 * `/agents/:id/<segment>` when it declares agent routes). Whatever goes wrong fails that extension
 * only: its routes answer 503 and `GET /runtime/extensions` says why; the daemon still starts.
 *
 * Timing: imports and checks happen here, before `listen`; the scopes' plugin bodies (and so each
 * `register(ctx)`) run when fastify gets ready, sequentially in dependency order, which is why a
 * dependency's failure in its `register` is seen by its dependents (and a dependent's `ctx.use` finds
 * what its dependencies offered).
 *
 * Where an extension answers (its prefix and agent segment) comes from its definition, which is
 * imported for disabled entries too, or, when the module cannot be imported, from the manifest entry's
 * optional `prefix`/`agentRoutes`, else from the table of shipped extensions (`shipped.ts`, the one
 * place the kernel names them). Shipped extensions the manifest does not list answer 503 there too.
 */
import type { FastifyInstance } from 'fastify';
import type { ExtensionDefinition, ExtensionHooks, ExtensionHttp } from '@agt/contracts';
import type { KernelApp } from '../http/app.js';
import type { ExtensionHostDeps } from './host-deps.js';
import { buildContext } from './context.js';
import { CONTRACT_INCOMPATIBLE, contractProblem } from './contract-check.js';
import { definitionProblem, importDefinition, validateConfig } from './definition.js';
import { ExtensionLifecycle, settleWithin } from './lifecycle.js';
import { overlayPath, readOverlay } from './config-overlay.js';
import { PREFIX_PATTERN, readManifest, SEGMENT_PATTERN, type ManifestEntry } from './manifest.js';
import { orderByDependencies } from './order.js';
import { bridgeAgentRegister, guardPluginErrors } from './plugin-guard.js';
import type { ExtensionRegistry, ExtensionRecord, ExtensionStatus } from './registry.js';
import { ModuleResolveError, resolveExtensionModule } from './resolve-module.js';
import { shippedExtension } from './shipped.js';
import { guardScope, registerStubRoutes, registerUnlistedStubs } from './unavailable.js';

export interface ExtensionHost {
  /** Calls every loaded extension's `start` in dependency order; a throw fails that extension only. */
  startAll(): Promise<void>;
  /** Calls `stop` in reverse order, each at most once, within `deadlineMs` overall. */
  stopAll(deadlineMs: number): Promise<void>;
  /** Every manifest entry's state, for `GET /runtime/extensions` (the same as `registry.status()`). */
  status(): ExtensionStatus[];
}

export interface LoadOptions {
  /** The manifest was named explicitly (`AGT_EXTENSIONS`): a missing file is a start-up error. */
  required?: boolean;
  /** Top-level paths of the kernel's routes (`/agents`, ...): no extension may claim one. */
  kernelPrefixes: ReadonlySet<string>;
  /** The daemon's environment variables, seen by extensions as `ctx.env` less `AGT_*` (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** Where `ctx.print` writes (the daemon's listening-line output; default stdout). */
  print?: (line: string) => void;
}

/**
 * `register` may not take longer than this: fastify fails the whole start-up when a plugin exceeds
 * its own 10 s timeout, so the loader gives up on the extension first.
 */
export const REGISTER_DEADLINE_MS = 8_000;

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** A record before its module is read: the manifest's `prefix`/`agentRoutes` until the definition says otherwise. */
function newRecord(entry: ManifestEntry): ExtensionRecord {
  return {
    entry,
    name: entry.name,
    definition: null,
    config: entry.config,
    // A shipped extension's place is known even when its module cannot be read.
    prefix: entry.prefix ?? shippedExtension(entry.name)?.prefix ?? null,
    agentRoutes: entry.agentRoutes ?? shippedExtension(entry.name)?.agentRoutes ?? null,
    dependsOn: [],
    state: entry.enabled ? 'pending' : 'disabled',
    error: null,
    hooks: null,
    stopCalled: false,
    release: () => {},
  };
}

/**
 * From a definition of this extension that failed its checks (a newer contract, say), keeps the well-formed
 * prefix and agent segment, so its 503s are served where its routes would have been.
 */
function salvageRouteGroups(record: ExtensionRecord, definition: unknown): void {
  if (definition === null || typeof definition !== 'object') return;
  const { name, prefix, agentRoutes } = definition as { name?: unknown; prefix?: unknown; agentRoutes?: unknown };
  // A module defining another extension: its route groups are that extension's, not this entry's.
  if (name !== record.name) return;
  if (typeof prefix === 'string' && new RegExp(PREFIX_PATTERN).test(prefix)) record.prefix = prefix;
  if (typeof agentRoutes === 'string' && new RegExp(SEGMENT_PATTERN).test(agentRoutes))
    record.agentRoutes = agentRoutes;
}

/** Imports and checks one entry; a problem fails the record (disabled entries are only inspected). */
async function inspect(
  record: ExtensionRecord,
  registry: ExtensionRegistry,
  manifestPath: string,
  kernel: ExtensionHostDeps,
): Promise<void> {
  let definition: unknown;
  let moduleFile = '';
  try {
    moduleFile = resolveExtensionModule(record.entry.module, manifestPath);
    definition = await importDefinition(moduleFile);
  } catch (error) {
    if (record.state === 'disabled') {
      kernel.logger.debug({ err: error, extension: record.name }, 'disabled extension could not be imported');
      return;
    }
    const why =
      error instanceof ModuleResolveError
        ? error.message
        : `cannot import module "${record.entry.module}": ${message(error)}`;
    return registry.fail(record, why, error);
  }
  // Compatibility first, with its stable code: a definition from another contract may not even have our shape.
  const incompatible = contractProblem((definition as { contract?: unknown } | null)?.contract, moduleFile);
  if (incompatible !== null) {
    salvageRouteGroups(record, definition);
    if (record.state !== 'disabled') registry.fail(record, incompatible, undefined, CONTRACT_INCOMPATIBLE);
    return;
  }
  const problem = definitionProblem(definition, record.name);
  if (problem !== null) {
    salvageRouteGroups(record, definition);
    if (record.state !== 'disabled') registry.fail(record, problem);
    return;
  }
  const checked = definition as ExtensionDefinition;
  record.definition = checked;
  record.prefix = checked.prefix ?? record.prefix;
  record.agentRoutes = checked.agentRoutes ?? record.agentRoutes;
  record.dependsOn = [...(checked.dependsOn ?? [])];
  if (record.state === 'disabled') return;
  const config = validateConfig(checked, record.entry.config);
  if ('problem' in config) return registry.fail(record, config.problem);
  record.config = config.config;
}

/** Gives each prefix to its first claimant; later claimants and kernel prefixes fail. */
function claimPrefixes(
  records: ExtensionRecord[],
  registry: ExtensionRegistry,
  kernelPrefixes: ReadonlySet<string>,
): void {
  const owners = new Map<string, string>();
  for (const record of records) {
    const claims = [record.prefix, record.agentRoutes && `/agents/:id/${record.agentRoutes}`].filter(
      (p): p is string => !!p,
    );
    for (const claim of claims) {
      const owner = owners.get(claim);
      const top = `/${claim.split('/')[1]}`;
      const clash =
        owner !== undefined
          ? `is already served by extension ${owner}`
          : !claim.startsWith('/agents/:id/') && kernelPrefixes.has(top)
            ? 'belongs to the kernel'
            : null;
      if (clash === null) continue;
      registry.fail(record, `route prefix ${claim} ${clash}`);
      // Without a scope of its own it must not answer on a prefix that is not its.
      if (claim === record.prefix) record.prefix = null;
      else record.agentRoutes = null;
    }
    if (record.prefix) owners.set(record.prefix, record.name);
    if (record.agentRoutes) owners.set(`/agents/:id/${record.agentRoutes}`, record.name);
  }
}

/** Names of dependencies that stop `record` from registering, each with why; empty when none. */
function unmetDependencies(record: ExtensionRecord, registry: ExtensionRegistry): string[] {
  return record.dependsOn.flatMap((dep) => {
    const other = registry.get(dep);
    if (!other) return [`${dep} (not in the manifest)`];
    if (other.state === 'loaded' || other.state === 'started') return [];
    return [`${dep} (${registry.unavailableReason(other)})`];
  });
}

/** Runs `register(ctx)` inside the extension's scope(s); any throw fails the extension. */
async function runRegister(
  record: ExtensionRecord,
  registry: ExtensionRegistry,
  kernel: ExtensionHostDeps,
  env: NodeJS.ProcessEnv,
  http: FastifyInstance,
  agentHttp: FastifyInstance | undefined,
): Promise<void> {
  const failWith = (error: unknown) => {
    const wrapped = new Error(`extension ${record.name}: register failed: ${message(error)}`, { cause: error });
    registry.fail(record, `register failed: ${message(error)}`, wrapped);
  };
  guardPluginErrors(http, failWith);
  if (agentHttp) bridgeAgentRegister(agentHttp, http);
  const built = buildContext(kernel, {
    name: record.name,
    config: record.config,
    dependsOn: record.dependsOn,
    env,
    http: http as ExtensionHttp,
    agentHttp: agentHttp as ExtensionHttp | undefined,
  });
  record.release = built.release;
  const returned: { hooks?: ExtensionHooks | void } = {};
  const outcome = await settleWithin(REGISTER_DEADLINE_MS, async () => {
    returned.hooks = await record.definition!.register(built.context as never);
  });
  built.endRegister();
  // Safety net for errors avvio reports outside any plugin body (for example a fastify-plugin version
  // or dependency check of a plugin the extension registered): handling it here keeps `ready()` alive.
  http.after((error: Error | null | undefined, done?: () => void) => {
    if (error) failWith(error);
    done?.();
  });
  if (outcome.timedOut) return registry.fail(record, `register did not finish within ${REGISTER_DEADLINE_MS} ms`);
  if ('error' in outcome) return failWith(outcome.error);
  const hooks = returned.hooks;
  if (hooks !== undefined && hooks !== null) {
    const bad =
      typeof hooks !== 'object'
        ? 'an object'
        : (['start', 'stop', 'reconfigure'] as const).find(
            (k) => hooks[k] !== undefined && typeof hooks[k] !== 'function',
          );
    if (bad)
      return failWith(
        new Error(`register must return nothing or {start?, stop?, reconfigure?} functions (got a bad ${bad})`),
      );
  }
  registry.markLoaded(record, hooks ?? null);
}

/** The scopes of one extension, in dependency order; each decides when it loads whether to run or stub. */
function registerScopes(
  app: KernelApp,
  kernel: ExtensionHostDeps,
  env: NodeJS.ProcessEnv,
  registry: ExtensionRegistry,
  record: ExtensionRecord,
): void {
  const reason = () => registry.unavailableReason(record) ?? 'unavailable';
  const serving = () => registry.unavailableReason(record);
  // The kernel's own set-up of a scope (stubs, guards) can collide with a route someone else declared;
  // that must cost this extension, never the daemon's `ready()`.
  const safely = (what: string, work: () => void | Promise<void>) => async () => {
    try {
      await work();
    } catch (error) {
      registry.fail(record, `cannot set up its ${what}: ${message(error)}`, error);
      kernel.logger.warn({ err: error, extension: record.name }, `the 503 answers of its ${what} may be missing`);
    }
  };
  let agentScope: FastifyInstance | undefined;
  if (record.agentRoutes) {
    // Registered first so the instance exists when the main scope's plugin calls `register(ctx)`.
    app.register(
      async (scope) => {
        agentScope = scope;
        await safely('agent routes', () => {
          if (record.state !== 'pending') return registerStubRoutes(scope, record.name, reason);
          guardScope(scope, record.name, serving);
        })();
      },
      { prefix: `/agents/:id/${record.agentRoutes}` },
    );
  }
  if (!record.prefix && record.state !== 'pending') return;
  app.register(
    async (scope) => {
      if (record.state === 'pending') {
        const unmet = unmetDependencies(record, registry);
        if (unmet.length > 0) registry.fail(record, `missing dependencies: ${unmet.join(', ')}`);
      }
      await safely('routes', () => {
        if (record.state !== 'pending')
          return record.prefix ? registerStubRoutes(scope, record.name, reason) : undefined;
        // Without a prefix (an extension that only contributes, or only serves agent routes) there is no
        // path of its own to answer not-found on; the hook still guards whatever routes it adds.
        guardScope(scope, record.name, serving, { notFound: record.prefix !== null });
      })();
      if (record.state === 'pending') await runRegister(record, registry, kernel, env, scope, agentScope);
    },
    record.prefix ? { prefix: record.prefix } : {},
  );
}

/**
 * Loads the manifest's extensions into `registry` (the kernel's, created empty with the other services
 * so `GET /runtime/extensions` can read it from the start).
 */
export async function loadExtensions(
  app: KernelApp,
  kernel: ExtensionHostDeps,
  registry: ExtensionRegistry,
  manifestPath: string,
  options: LoadOptions,
): Promise<ExtensionHost> {
  const entries = readManifest(manifestPath, { required: options.required ?? false });
  // The owner's options (`PUT /runtime/extensions/{name}/config`) live in the data directory, over the
  // manifest, which stays as shipped (config-overlay.ts).
  const overlayFile = overlayPath(kernel.settings.dataDir);
  const overlay = readOverlay(overlayFile);
  for (const entry of entries) {
    const own = overlay.extensions[entry.name];
    if (own?.config) entry.config = own.config;
    if (own?.enabled !== undefined) entry.enabled = own.enabled;
  }
  for (const name of Object.keys(overlay.extensions).filter((name) => !entries.some((entry) => entry.name === name))) {
    kernel.logger.warn(
      { extension: name, file: overlayFile },
      `extension options for ${name} in ${overlayFile} are kept but unused: the manifest does not list it`,
    );
  }
  const records = entries.map(newRecord);
  registry.manifestPath = manifestPath;
  registry.overlayPath = overlayFile;
  registry.overlaid = new Set(
    entries.filter((entry) => overlay.extensions[entry.name]?.config).map((entry) => entry.name),
  );
  for (const record of records) registry.add(record);

  for (const record of records) await inspect(record, registry, manifestPath, kernel);
  const { order, cycles } = orderByDependencies(
    records.filter((r) => r.state === 'pending').map((r) => ({ name: r.name, dependsOn: r.dependsOn })),
  );
  for (const [name, cycle] of cycles) registry.fail(registry.get(name)!, `dependency cycle: ${cycle}`);
  claimPrefixes(records, registry, options.kernelPrefixes);

  // Registration order: dependencies first; extensions that will never register keep manifest order.
  const sequence = [...order, ...records.filter((r) => !order.includes(r.name)).map((r) => r.name)];
  const env = options.env ?? process.env;
  const host: ExtensionHostDeps = options.print ? { ...kernel, print: options.print } : kernel;
  for (const name of sequence) registerScopes(app, host, env, registry, registry.get(name)!);
  const claimed = new Set(
    records.flatMap((r) => [r.prefix, r.agentRoutes && `/agents/:id/${r.agentRoutes}`]).filter((p): p is string => !!p),
  );
  registerUnlistedStubs(app, new Set(records.map((r) => r.name)), claimed);

  const lifecycle = new ExtensionLifecycle(registry, sequence, kernel.logger);
  registry.stopOne = (record) => lifecycle.stopOne(record);
  return {
    startAll: () => lifecycle.startAll(),
    stopAll: (deadlineMs) => lifecycle.stopAll(deadlineMs),
    status: () => registry.status(),
  };
}
