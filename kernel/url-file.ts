/**
 * `daemon-url` in the data directory: the URL the daemon listens on (the real port when it was 0), so
 * the `agt` client finds a daemon the way it finds its token. Written at listen, removed at shutdown
 * when it still names this daemon. Not a secret; mode 0600 like the other files there.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '@agt/contracts';
import { writeFileAtomic } from './settings.js';

export const URL_FILE = 'daemon-url';

export function publishUrl(dataDir: string, url: string, logger: Logger): { remove(): void } {
  const path = join(dataDir, URL_FILE);
  try {
    writeFileAtomic(path, `${url}\n`);
  } catch (error) {
    logger.warn({ err: error }, `could not write ${path}; agt needs --url to find this daemon`);
  }
  return {
    remove() {
      try {
        if (readFileSync(path, 'utf8').trim() === url) rmSync(path);
      } catch {
        // Gone already.
      }
    },
  };
}
