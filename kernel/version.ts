/**
 * The daemon's version: the API version in `/openapi.json`, `agtd --version` and `daemon.started`.
 * Read once, when this module loads, from the project's package.json (the nearest one above this file,
 * in the sources as in the `dist/` build), so a release changes one place.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function readVersion(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const { version } = JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown };
      if (typeof version === 'string' && version !== '') return version;
      throw new Error(`${file} has no version`);
    }
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

export const AGT_VERSION: string = readVersion(dirname(fileURLToPath(import.meta.url)));
