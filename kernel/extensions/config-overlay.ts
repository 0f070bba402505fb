/**
 * The owner's extension options, kept in the data directory (`extensions.config.json`) over the shipped
 * manifest: the manifest is part of the install or checkout and is never written, and two daemons started
 * from one checkout with their own data directories keep their own options. Format and precedence:
 * docs/extensions.md#changing-an-extensions-options.
 *
 *     { "extensions": { "<name>": { "config": { … }, "enabled": false } } }
 *
 * An extension's `config` here replaces the manifest entry's `config` whole; an extension without one here runs
 * with the manifest's. `enabled` (the owner's `PATCH /runtime/extensions/{name}`) wins over the manifest's. A malformed overlay stops the start naming the file and the field, as a
 * malformed manifest does: running with options other than the owner's would be worse.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Type, type Static } from 'typebox';
import { StartupError } from '../errors.js';
import { writeFileAtomic } from '../settings.js';
import { schemaProblems } from './schema-errors.js';

export const OVERLAY_FILE = 'extensions.config.json';

const OverlaySchema = Type.Object(
  {
    extensions: Type.Record(
      Type.String(),
      Type.Object(
        { config: Type.Optional(Type.Record(Type.String(), Type.Unknown())), enabled: Type.Optional(Type.Boolean()) },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export type Overlay = Static<typeof OverlaySchema>;

export const overlayPath = (dataDir: string) => join(dataDir, OVERLAY_FILE);

/** The overlay at `path`; an empty one when the file does not exist. */
export function readOverlay(path: string): Overlay {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { extensions: {} };
    throw new StartupError(`extension options ${path}: cannot read it: ${(error as Error).message}`, { cause: error });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new StartupError(`extension options ${path}: not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  const problem = schemaProblems(OverlaySchema, raw);
  if (problem !== null) throw new StartupError(`extension options ${path}: ${problem}`);
  return raw as Overlay;
}

/** Sets one extension's options in the overlay at `path`, keeping the others (owner-only file). */
export function writeOverlayEntry(path: string, name: string, config: Record<string, unknown>): void {
  const overlay = readOverlay(path);
  overlay.extensions[name] = { ...overlay.extensions[name], config };
  writeFileAtomic(path, `${JSON.stringify(overlay, null, 2)}\n`, 0o600);
}

/** Sets whether one extension runs, in the overlay at `path`, keeping its options and the others. */
export function writeOverlayEnabled(path: string, name: string, enabled: boolean): void {
  const overlay = readOverlay(path);
  overlay.extensions[name] = { ...overlay.extensions[name], enabled };
  writeFileAtomic(path, `${JSON.stringify(overlay, null, 2)}\n`, 0o600);
}
