/**
 * The summary of an agent file that is not loaded: its validated config and whether its envelope needs a
 * password. The kernel's one implementation of that reading; it runs in the file reader's child process
 * (credentials/file-reader-child.ts), so this module's imports are kept to what the reading needs.
 */
import { AgentFile } from './agent-file.js';
import { validateStoredConfig } from './stored-config.js';

/**
 * How long reading a file's summary waits for another connection's lock: opening is synchronous, so a
 * file held by a writer must not hold the file reader (and the files queued behind it) for the
 * registry's full busy timeout.
 */
export const INSPECT_BUSY_TIMEOUT_MS = 100;

/**
 * What a file says about itself, read without loading it (read-only: no migration, no lease). Runs in the
 * file reader's child process (credentials/file-reader-child.ts); the daemon calls `readSummary`.
 */
export async function inspectFile(filePath: string, isPasswordProtected: (file: AgentFile) => boolean) {
  const file = AgentFile.open(filePath, { readonly: true, busyTimeoutMs: INSPECT_BUSY_TIMEOUT_MS });
  try {
    const config = validateStoredConfig(file.config.get(), filePath);
    return { config, passwordProtected: isPasswordProtected(file) };
  } finally {
    await file.close();
  }
}
