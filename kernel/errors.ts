/**
 * Kernel-level errors of the files at the kernel's root: start-up refusals (not HTTP responses), and the
 * settings' coded errors, one factory per meaning (the model is fastify's `lib/errors.js`).
 */
import { AgtError } from '@agt/contracts';

/** A reason the daemon cannot start. `main` prints the message (never a stack) and exits non-zero. */
export class StartupError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StartupError';
  }
}

/** 403 `key_material_refused`: a settings value at `path` looks like a key or secret. */
export const keyMaterialRefused = (path: string) =>
  new AgtError(
    'key_material_refused',
    `settings never hold keys or secrets (${path}); name an environment variable with apiKeyEnv, or store a sealed credential`,
  );
