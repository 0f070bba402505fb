/**
 * The one rule for paths of an agent's stored files (`agt_files`): the kernel's store, the `fs_*` tools,
 * the Files routes and extensions (agent websites, channel attachments) all check paths with it, so a
 * hostile path means the same thing everywhere: relative, `/`-separated, no empty, `.` or `..` segments,
 * no `\` and no NUL, at most {@link MAX_AGENT_PATH} characters.
 */
import { invalidStoredPath } from './errors.js';

/** @beta */
export const MAX_AGENT_PATH = 512;

/**
 * The canonical form of an agent file path (a leading `/` is dropped), or a `bad_request` AgtError.
 *
 * @beta
 */
export function normalizeAgentPath(path: string): string {
  const trimmed = path.replace(/^\/+/, '');
  const segments = trimmed.split('/');
  if (
    trimmed.length === 0 ||
    trimmed.length > MAX_AGENT_PATH ||
    trimmed.includes('\\') ||
    trimmed.includes('\0') ||
    segments.some((segment) => segment === '' || segment === '.' || segment === '..')
  ) {
    throw invalidStoredPath(path);
  }
  return trimmed;
}
