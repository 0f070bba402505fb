/**
 * The one way a website URL becomes an agent file path, so no other stored file is reachable. The raw path after
 * `/agents/{handle}/` is split on `/` BEFORE percent-decoding, each segment is decoded once, and a segment that is
 * empty (except a trailing one), `.`, `..`, or that decodes to something holding `/`, `\`, NUL or a control character
 * is refused; the result is checked again by the agents' own path rule and is always under `public/`. So `..`,
 * `%2e%2e`, `%2f`, `%5c` and double encodings never name a file outside it.
 */
import { normalizeAgentPath } from '@agt/contracts';

export interface SitePath {
  /** Decoded segments (without a trailing empty one). */
  segments: string[];
  /** The URL ended with `/` (or was the site root): serve the folder's index. */
  folder: boolean;
}

/** `rest` is the raw (still encoded) path after `/agents/{handle}/`, without the query. Undefined: refused. */
export function parseSitePath(rest: string): SitePath | undefined {
  if (rest.length > 1024) return undefined;
  const raw = rest.split('/');
  const folder = rest === '' || rest.endsWith('/');
  if (folder) raw.pop();
  const segments: string[] = [];
  for (const part of raw) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(part);
    } catch {
      return undefined;
    }
    // eslint-disable-next-line no-control-regex
    if (decoded === '' || decoded === '.' || decoded === '..' || /[/\\\u0000-\u001f\u007f]/.test(decoded))
      return undefined;
    segments.push(decoded);
  }
  return { segments, folder };
}

/** The agent file a site path names (`public/...`, `index` for a folder); undefined when refused. */
export function storedPathOf(site: SitePath, index: string): string | undefined {
  const parts = ['public', ...site.segments, ...(site.folder ? [index] : [])];
  try {
    const path = normalizeAgentPath(parts.join('/'));
    return path.startsWith('public/') ? path : undefined;
  } catch {
    return undefined;
  }
}
