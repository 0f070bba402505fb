/**
 * The contract suite: the checks every extension passes, run against the real daemon
 * ({@link startTestDaemon}), for one extension or many at once (many share the daemons: two, plus one
 * when some extension declares `dependsOn`). It returns one {@link ContractCheck} per check and
 * extension, so any test runner can assert them:
 *
 * ```ts
 * const checks = await runContractSuite([{ module: new URL('../src/index.ts', import.meta.url).href }]);
 * for (const check of checks) t.ok(check.ok, `${check.extension}: ${check.name}${check.ok ? '' : ` (${check.detail})`}`);
 * ```
 *
 * The checks: it loads; its routes are in /openapi.json with tags and a summary; `GET <prefix>` (its listing route)
 * answers 200; its handlers throwing (every GET route under its prefix asked for an id that does not exist) answer
 * `{error, code}`, never 500, and it still serves after; disabled, its prefix and agent segment answer 503
 * `unavailable`; with the extensions it depends on disabled, the daemon still boots and its prefix answers 503; the
 * daemon's shutdown (which stops it) ends within {@link STOP_WITHIN_MS}; and afterwards no child process and no server,
 * socket or timer of the daemon is left in this process.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { startTestDaemon, type TestDaemon, type TestDaemonOptions } from './test-daemon.js';

/**
 * How long the daemon's shutdown (every extension's `stop`) may take: the kernel's stop deadline.
 *
 * @beta
 */
export const STOP_WITHIN_MS = 10_000;

/** @beta */
export interface ContractSuiteExtension {
  /** The extension module (a path, a `file:` URL or a package name), as in a manifest entry. */
  module: string;
  /** Its config (default `{}`). */
  config?: Record<string, unknown>;
}

/** @beta */
export interface ContractCheck {
  extension: string;
  name: string;
  ok: boolean;
  /** What was seen when not ok. */
  detail: string;
}

interface Definition {
  name: string;
  prefix?: string;
  agentRoutes?: string;
  dependsOn?: string[];
}

async function definitionOf(module: string): Promise<Definition> {
  const loaded = (await import(module.startsWith('/') ? `file://${module}` : module)) as { default: Definition };
  return loaded.default;
}

/** This process's open resources by type (servers, sockets, timers, child processes...). */
function resources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const type of process.getActiveResourcesInfo()) counts.set(type, (counts.get(type) ?? 0) + 1);
  return counts;
}

/** Ids of this process's child processes (Linux /proc; empty elsewhere). */
function children(): number[] {
  try {
    return readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .filter((pid) => {
        try {
          const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
          return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === process.pid;
        } catch {
          return false;
        }
      })
      .map(Number);
  } catch {
    return [];
  }
}

/** Lets closing handles finish: a few turns of the event loop (no clock). */
async function settle(turns = 50): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
}

type Entry = { name: string; module: string; enabled: boolean; config: Record<string, unknown> };

async function withDaemon<T>(options: TestDaemonOptions, use: (daemon: TestDaemon) => Promise<T>): Promise<T> {
  const daemon = await startTestDaemon(options);
  try {
    return await use(daemon);
  } finally {
    await daemon.stop();
  }
}

/**
 * Runs the contract checks for `extensions` (see the module comment); resolves with every check.
 *
 * @beta
 */
export async function runContractSuite(
  extensions: ContractSuiteExtension[],
  options: Omit<TestDaemonOptions, 'extensions'> = {},
): Promise<ContractCheck[]> {
  const checks: ContractCheck[] = [];
  const check = (extension: string, name: string, ok: boolean, detail = '') =>
    checks.push({ extension, name, ok, detail: ok ? '' : detail });
  const defs = await Promise.all(
    extensions.map(async (given) => ({ given, definition: await definitionOf(given.module) })),
  );
  const entries = (enabled: (definition: Definition) => boolean): Entry[] =>
    defs.map(({ given, definition }) => ({
      name: definition.name,
      module: given.module,
      enabled: enabled(definition),
      config: given.config ?? {},
    }));

  // 1. All enabled: loads, lists, survives throwing handlers, stops in time, leaves nothing behind.
  const before = resources();
  const childrenBefore = new Set(children());
  const daemon = await startTestDaemon({ ...options, extensions: entries(() => true) });
  let stopped = false;
  try {
    const doc = (await daemon.request('GET', '/openapi.json')).body as {
      paths?: Record<string, Record<string, unknown>>;
    };
    for (const { definition } of defs) {
      const row = (await daemon.request('GET', `/runtime/extensions/${definition.name}`)).body as {
        loaded?: boolean;
        error?: string | null;
      };
      check(definition.name, 'loads', row.loaded === true, `loaded ${row.loaded}, error ${row.error}`);
      if (!definition.prefix) {
        check(definition.name, 'declares a route prefix', false, 'no prefix');
        continue;
      }
      const own = Object.entries(doc.paths ?? {}).filter(
        ([path]) =>
          path.startsWith(definition.prefix!) ||
          (definition.agentRoutes !== undefined && path.startsWith(`/agents/{id}/${definition.agentRoutes}`)),
      );
      const undocumented = own.flatMap(([path, operations]) =>
        Object.entries(operations as Record<string, { tags?: string[]; summary?: string }>)
          .filter(([, operation]) => !(operation.tags?.length && operation.summary))
          .map(([method]) => `${method.toUpperCase()} ${path}`),
      );
      check(
        definition.name,
        'documents its routes (OpenAPI, with tags and a summary)',
        own.length > 0 && undocumented.length === 0,
        own.length === 0 ? 'no route in /openapi.json' : `no tags or summary: ${undocumented.join(', ')}`,
      );
      const listed = await daemon.request('GET', definition.prefix);
      check(
        definition.name,
        `answers its listing route GET ${definition.prefix}`,
        listed.status === 200,
        `status ${listed.status}`,
      );
      const bad: string[] = [];
      for (const [path, operations] of Object.entries(doc.paths ?? {})) {
        if (!path.startsWith(definition.prefix) || !('get' in operations) || !path.includes('{')) continue;
        const url = path.replace(/\{[^}]+\}/g, 'no-such-contract-suite-id');
        const res = await daemon.request('GET', url);
        // 503 with a code is an answer (an engine it needs is off); 500 is a handler's throw nobody turned into one.
        if (res.status === 500 || typeof res.body?.code !== 'string')
          bad.push(`GET ${url}: ${res.status} ${res.text.slice(0, 120)}`);
      }
      const still = await daemon.request('GET', definition.prefix);
      check(
        definition.name,
        'survives its handlers throwing (unknown ids: {error, code}, never 500, still serving)',
        bad.length === 0 && still.status === 200,
        bad.join('; ') || `then GET ${definition.prefix}: ${still.status}`,
      );
    }
    const started = Date.now();
    await daemon.stop();
    stopped = true;
    const took = Date.now() - started;
    for (const { definition } of defs)
      check(definition.name, `stops within ${STOP_WITHIN_MS} ms`, took <= STOP_WITHIN_MS, `shutdown took ${took} ms`);
  } finally {
    if (!stopped) await daemon.stop();
  }
  await settle();
  const after = resources();
  const left = [...after]
    .filter(([type, count]) => count > (before.get(type) ?? 0))
    .map(([type, count]) => `${type} +${count - (before.get(type) ?? 0)}`);
  const leftChildren = children().filter((pid) => !childrenBefore.has(pid));
  for (const { definition } of defs) {
    check(
      definition.name,
      'leaves no process or handle',
      left.length === 0 && leftChildren.length === 0,
      [...left, ...leftChildren.map((pid) => `child process ${pid}`)].join(', '),
    );
  }

  // 2. Every extension disabled: its prefix answers 503.
  await withDaemon({ ...options, extensions: entries(() => false) }, async (off) => {
    for (const { definition } of defs) {
      if (!definition.prefix) continue;
      const paths = [definition.prefix, `${definition.prefix}/anything/below`];
      if (definition.agentRoutes)
        paths.push(
          `/agents/contract-suite-agent/${definition.agentRoutes}`,
          `/agents/contract-suite-agent/${definition.agentRoutes}/x`,
        );
      const wrong: string[] = [];
      for (const path of paths) {
        const res = await off.request('GET', path);
        if (res.status !== 503 || res.body?.code !== 'unavailable')
          wrong.push(`GET ${path}: ${res.status} ${res.text.slice(0, 80)}`);
      }
      check(
        definition.name,
        'answers 503 when off (its prefix and agent segment)',
        wrong.length === 0,
        wrong.join('; '),
      );
    }
  });

  // 3. The extensions it depends on disabled (only for those that declare dependsOn): boots, answers 503.
  const dependents = defs.filter(({ definition }) => (definition.dependsOn ?? []).length > 0);
  if (dependents.length > 0) {
    const needed = new Set(dependents.flatMap(({ definition }) => definition.dependsOn ?? []));
    await withDaemon(
      { ...options, extensions: entries((definition) => !needed.has(definition.name)) },
      async (partial) => {
        for (const { definition } of dependents) {
          const res = await partial.request('GET', definition.prefix ?? '/');
          check(
            definition.name,
            'survives its dependencies being off (503, the daemon runs)',
            res.status === 503,
            `status ${res.status}`,
          );
        }
      },
    );
  }
  return checks;
}
