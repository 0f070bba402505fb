/**
 * Entry points of the credentials package for other kernel code: the service (`kernel.credentials`),
 * the degraded flag, and the password-protection check the autostart code needs.
 */
import { AgentFile } from '../agents/agent-file.js';
import { isPasswordProtected } from './key-access.js';

export { CredentialsService, CREDENTIAL_NAME_PATTERN, type CredentialInfo } from './service.js';
export { CREDENTIALS_LOCKED, DegradedWatcher } from './degraded.js';
export { isPasswordProtected, type EnvelopeState } from './key-access.js';
export { credentialsLocked } from './errors.js';
export type { LockReason } from './envelope.js';

/**
 * True when the agent file at `filePath` is password-protected. Autostart must skip such files with reason
 * `password_protected` (docs/credentials.md#password-protected-agents). Opens the file read-only for the moment (no
 * migration, no lease); throws like {@link AgentFile.open} for a missing or foreign file.
 */
export async function isPasswordProtectedFile(filePath: string): Promise<boolean> {
  const file = AgentFile.open(filePath, { readonly: true });
  try {
    return isPasswordProtected(file);
  } finally {
    await file.close();
  }
}
