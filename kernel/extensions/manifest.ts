/**
 * The extension manifest (`extensions.json`, or the file `AGT_EXTENSIONS` names): its TypeBox schema
 * and reading it. A malformed manifest is a start-up error naming the file and the field: silently
 * running without the extensions a user asked for would be worse than not starting.
 */
import { readFileSync } from 'node:fs';
import { Type, type Static } from 'typebox';
import { StartupError } from '../errors.js';
import { schemaProblems, withDefaults } from './schema-errors.js';

/** Extension names: what `dependsOn`, logs, events and `/runtime/extensions` use. */
export const EXTENSION_NAME_PATTERN = '^[a-z0-9][a-z0-9._-]*$';
/** A route prefix: one or more lowercase segments, no trailing slash, no parameters. */
export const PREFIX_PATTERN = '^(/[a-z0-9][a-z0-9._-]*)+$';
/** The segment of agent-scoped routes (`mcp` gives `/agents/:id/mcp/...`). */
export const SEGMENT_PATTERN = '^[a-z0-9][a-z0-9._-]*$';

export const ManifestEntrySchema = Type.Object(
  {
    name: Type.String({ pattern: EXTENSION_NAME_PATTERN, description: "Must equal the definition's `name`" }),
    module: Type.String({
      minLength: 1,
      description: "Path relative to the manifest's folder, an absolute path, or an npm package name",
    }),
    enabled: Type.Optional(Type.Boolean({ default: true })),
    config: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { default: {} })),
    prefix: Type.Optional(
      Type.String({
        pattern: PREFIX_PATTERN,
        description:
          'Where the extension answers 503 when its module cannot be imported (say, a package not installed). ' +
          "The definition's own `prefix` wins whenever the module can be read.",
      }),
    ),
    agentRoutes: Type.Optional(
      Type.String({
        pattern: SEGMENT_PATTERN,
        description: "The same for its agent routes (`/agents/{id}/<agentRoutes>`); the definition's own wins.",
      }),
    ),
  },
  { additionalProperties: false },
);

export const ManifestSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    extensions: Type.Array(ManifestEntrySchema),
  },
  { additionalProperties: false },
);

/** One manifest entry with its defaults applied. */
export type ManifestEntry = Required<
  Pick<Static<typeof ManifestEntrySchema>, 'name' | 'module' | 'enabled' | 'config'>
> &
  Pick<Static<typeof ManifestEntrySchema>, 'prefix' | 'agentRoutes'>;

export interface ReadManifestOptions {
  /** A missing file is an error (it was named explicitly) rather than "no extensions". */
  required: boolean;
}

/** Reads and validates the manifest; throws {@link StartupError} naming the file and the field. */
export function readManifest(path: string, options: ReadManifestOptions): ManifestEntry[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && !options.required) return [];
    const why = code === 'ENOENT' ? 'the file does not exist' : (error as Error).message;
    throw new StartupError(`extension manifest ${path}: cannot read it: ${why}`, { cause: error });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new StartupError(`extension manifest ${path}: not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  const value = withDefaults(ManifestSchema, raw);
  const problem = schemaProblems(ManifestSchema, value);
  if (problem !== null) throw new StartupError(`extension manifest ${path}: ${problem}`);
  const entries = (value as Static<typeof ManifestSchema>).extensions as ManifestEntry[];

  const seen = new Map<string, number>();
  entries.forEach((entry, index) => {
    const first = seen.get(entry.name);
    if (first !== undefined) {
      throw new StartupError(
        `extension manifest ${path}: /extensions/${index}/name: "${entry.name}" is already used by /extensions/${first}`,
      );
    }
    seen.set(entry.name, index);
  });
  return entries;
}
