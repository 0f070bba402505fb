/**
 * Entry points of the credentials package for other kernel code: the service (`kernel.credentials`),
 * the degraded flag, and the password-protection check the autostart code needs.
 */

export { CredentialsService, CREDENTIAL_NAME_PATTERN, type CredentialInfo } from './service.js';
export { CREDENTIALS_LOCKED, DegradedWatcher } from './degraded.js';
export { isPasswordProtected, type EnvelopeState } from './key-access.js';
export { credentialsLocked } from './errors.js';
export type { LockReason } from './envelope.js';
