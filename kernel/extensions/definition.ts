/**
 * Importing an extension module and checking its default export: the definition's shape, that its
 * name is the manifest entry's, that its contract version is one this kernel implements, and that the
 * manifest's `config` matches its `options` schema. Each problem is one readable sentence: it ends up
 * in `GET /runtime/extensions` and in the 503 bodies of the extension's routes.
 */
import { pathToFileURL } from 'node:url';
import { Type } from 'typebox';
import semver from 'semver';
import type { ExtensionDefinition } from '@agt/contracts';
import { EXTENSION_NAME_PATTERN, PREFIX_PATTERN, SEGMENT_PATTERN } from './manifest.js';
import { schemaProblems, withDefaults } from './schema-errors.js';
import { bundledModule } from './bundled.js';
import { builtTwin, ensureTypeScript, isTypeScriptFile } from './typescript.js';

/** The data members of a definition (functions and the options schema are checked by hand). */
const DefinitionShape = Type.Object({
  name: Type.String({ pattern: EXTENSION_NAME_PATTERN }),
  version: Type.String({ minLength: 1 }),
  contract: Type.String({ pattern: '^\\d+\\.\\d+(\\.\\d+)?$' }),
  dependsOn: Type.Optional(Type.Array(Type.String({ pattern: EXTENSION_NAME_PATTERN }))),
  prefix: Type.Optional(Type.String({ pattern: PREFIX_PATTERN })),
  agentRoutes: Type.Optional(Type.String({ pattern: SEGMENT_PATTERN })),
  routeGroups: Type.Optional(Type.Array(Type.String())),
});

/**
 * Imports the module and returns its default export, unchecked. A built daemon imports a project source
 * module's built twin (or takes it from its own script, see ./bundled.ts), and loads tsx only for another
 * TypeScript module (see ./typescript.ts).
 */
export async function importDefinition(file: string): Promise<unknown> {
  const target = builtTwin(file);
  const bundled = bundledModule(target);
  if (!bundled && isTypeScriptFile(target)) await ensureTypeScript();
  const namespace = (await (bundled ? bundled() : import(pathToFileURL(target).href))) as { default?: unknown };
  let exported = namespace.default;
  // A CommonJS or transpiled module may wrap the definition once more under `default`.
  if (exported && typeof exported === 'object' && !('register' in exported) && 'default' in exported) {
    exported = (exported as { default: unknown }).default;
  }
  return exported;
}

export { contractSatisfied } from './contract-check.js';

/** Checks a default export against the contract; returns the problem or null. */
export function definitionProblem(value: unknown, expectedName: string): string | null {
  if (value === null || typeof value !== 'object') {
    return 'the module has no default export made with defineExtension({...})';
  }
  const problem = schemaProblems(DefinitionShape, value);
  if (problem !== null) return `invalid definition: ${problem}`;
  const definition = value as ExtensionDefinition;
  if (typeof definition.register !== 'function') return 'invalid definition: /register: must be a function';
  if (definition.options !== undefined && (definition.options === null || typeof definition.options !== 'object')) {
    return 'invalid definition: /options: must be a TypeBox schema';
  }
  if (definition.name !== expectedName) {
    return `the module defines extension "${definition.name}", but the manifest entry is named "${expectedName}"`;
  }
  if (!semver.valid(definition.version))
    return `invalid definition: /version: "${definition.version}" is not a semver version`;
  if (definition.dependsOn?.includes(definition.name))
    return 'invalid definition: /dependsOn: an extension cannot depend on itself';
  return null;
}

/** The manifest's config validated against the definition's `options`, defaults applied. */
export function validateConfig(
  definition: ExtensionDefinition,
  config: Record<string, unknown>,
): { config: unknown } | { problem: string } {
  if (!definition.options) return { config };
  const value = withDefaults(definition.options, config);
  const problem = schemaProblems(definition.options, value);
  return problem === null ? { config: value } : { problem: `invalid config: ${problem}` };
}
