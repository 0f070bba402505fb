/**
 * The contract every extension under `extensions/` must keep (style point 9), run for whatever
 * extensions exist: booted alone (with what it depends on) it loads, `GET` on its prefix answers 200,
 * its routes carry tags and summaries in the OpenAPI document, and it stops cleanly; disabled, its
 * prefix and agent segment answer 503. (That extensions import only `@agt/contracts`, never `kernel/`,
 * is checked by dependency-cruiser in `npm test`: .dependency-cruiser.cjs.)
 */
import t from 'tap';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ExtensionDefinition } from '../contracts/extension.js';
import { bootDaemon, importFile, ROOT } from './helpers/daemon.js';

const EXTENSIONS_DIR = join(ROOT, 'extensions');

const folders = existsSync(EXTENSIONS_DIR)
  ? readdirSync(EXTENSIONS_DIR).filter((name) => existsSync(join(EXTENSIONS_DIR, name, 'index.ts'))).sort()
  : [];

/** The project manifest's config for an extension, so the test boots it the way `npm start` would. */
function projectConfig(name: string): Record<string, unknown> {
  try {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'extensions.json'), 'utf8')) as { extensions?: Array<{ name: string; config?: Record<string, unknown> }> };
    return manifest.extensions?.find((entry) => entry.name === name)?.config ?? {};
  } catch {
    return {};
  }
}

async function definitionOf(folder: string): Promise<ExtensionDefinition> {
  const module = await importFile<{ default: ExtensionDefinition }>(join(EXTENSIONS_DIR, folder, 'index.ts'));
  return module.default;
}

/** The extension and, transitively, the extensions it depends on (dependencies first). */
async function withDependencies(folder: string, seen = new Set<string>()): Promise<Array<{ folder: string; definition: ExtensionDefinition }>> {
  if (seen.has(folder)) return [];
  seen.add(folder);
  const definition = await definitionOf(folder);
  const out: Array<{ folder: string; definition: ExtensionDefinition }> = [];
  for (const dep of definition.dependsOn ?? []) {
    if (!existsSync(join(EXTENSIONS_DIR, dep, 'index.ts'))) throw new Error(`${folder} depends on ${dep}, which has no folder under extensions/`);
    out.push(...(await withDependencies(dep, seen)));
  }
  out.push({ folder, definition });
  return out;
}

const manifestFor = (set: Array<{ folder: string; definition: ExtensionDefinition }>, disabled?: string) => ({
  extensions: set.map(({ folder, definition }) => ({
    name: definition.name,
    module: join(EXTENSIONS_DIR, folder, 'index.ts'),
    enabled: definition.name !== disabled,
    config: projectConfig(definition.name),
  })),
});

t.test('every extension the project ships is checked here', async (t) => {
  // An empty or partial listing (a renamed folder, a wrong path) must not pass as "nothing to check".
  const manifest = JSON.parse(readFileSync(join(ROOT, 'extensions.json'), 'utf8')) as { extensions?: Array<{ module?: string }> };
  const shipped = (manifest.extensions ?? [])
    .map((entry) => /^\.\/extensions\/([^/]+)\//.exec(entry.module ?? '')?.[1])
    .filter((name): name is string => name !== undefined);
  t.ok(shipped.length > 0, 'extensions.json ships extensions from extensions/');
  t.same(shipped.filter((name) => !folders.includes(name)), [], 'each has a folder with an index.ts under extensions/');
});

for (const folder of folders) {
  t.test(`extension ${folder}`, async (t) => {
    const set = await withDependencies(folder);
    const { definition } = set[set.length - 1]!;
    t.equal(definition.name, folder, 'the folder is named after the extension');
    t.ok(definition.prefix, 'declares a route prefix');
    const prefix = definition.prefix!;
    const agentPrefix = definition.agentRoutes ? `/agents/contract-test-agent/${definition.agentRoutes}` : null;

    t.test('enabled: loads, serves its prefix, documents its routes, stops cleanly', async (t) => {
      const d = await bootDaemon(t, { extensions: manifestFor(set) });
      const row = (await d.request('GET', `/runtime/extensions/${definition.name}`)).body;
      t.match(row, { name: definition.name, enabled: true, loaded: true, error: null, prefix });
      const listed = await d.request('GET', prefix);
      t.equal(listed.status, 200, `GET ${prefix} lists the group's resources`);

      const doc = (await d.request('GET', '/openapi.json')).body;
      const own = Object.entries(doc.paths as Record<string, Record<string, any>>).filter(
        ([path]) => path.startsWith(prefix) || (definition.agentRoutes && path.startsWith(`/agents/{id}/${definition.agentRoutes}`)),
      );
      t.ok(own.length > 0, 'its routes are in the OpenAPI document');
      for (const [path, operations] of own) {
        for (const [method, operation] of Object.entries(operations)) {
          t.ok(operation.tags?.length > 0 && operation.summary, `${method.toUpperCase()} ${path} has tags and a summary`);
        }
      }

      await d.daemon.shutdown('contract test');
      const after = d.daemon.kernel.extensions.status().find((r) => r.name === definition.name);
      t.match(after, { state: 'stopped', error: null }, 'stopped without error');
    });

    t.test('disabled: its prefix and agent segment answer 503', async (t) => {
      const d = await bootDaemon(t, { extensions: manifestFor(set, definition.name) });
      for (const path of [prefix, `${prefix}/anything/below`, ...(agentPrefix ? [agentPrefix, `${agentPrefix}/x`] : [])]) {
        const res = await d.request('GET', path);
        t.equal(res.status, 503, `GET ${path}`);
        t.match(res.body, { code: 'unavailable', error: new RegExp(`extension ${definition.name} is disabled`) });
      }
    });
  });
}
