/** Kernel-level errors that are not HTTP responses: start-up refusals. */

/** A reason the daemon cannot start. `main` prints the message (never a stack) and exits non-zero. */
export class StartupError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StartupError';
  }
}
